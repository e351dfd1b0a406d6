/**
 * The dangerous-command floor: commands that always ask. Neither an allow rule nor a permission mode
 * (`full-access` included) runs them without approval, and an unattended run refuses them, so a
 * broad rule (`Command(git:*)`, `Tool(execute_command)`) or mode cannot silently authorise
 * `git push`, `rm -rf` or `curl … | sh`. Only a deny rule, a hook or the run's capability decides
 * before it.
 *
 * Entries are word prefixes matched against every view of a segment (`sudo rm`, `/bin/rm`,
 * `bash -c 'rm …'` all hit `rm`); a `*` inside an entry word globs within that word (`mkfs.*`).
 * The floor is a safety net, not a sandbox: program text in other languages (`python3 -c`) is
 * handled as opaque (opaque.ts), and argument-level effects (`git log --output=FILE`) and programs
 * that act on files they are given (`make`, a script) are not modelled.
 */

import { commandViews, type CommandViews } from './command-views';
import { globMatch } from './glob';
import { DEFAULT_SEGMENT_LIMITS, type Segment, type SegmentLimits } from './segment';

export const DEFAULT_DANGEROUS_COMMANDS: readonly string[] = [
  // Privilege changes: whatever follows runs as someone else.
  'sudo',
  'su',
  'doas',
  'run0',
  'pkexec',
  'runuser',
  'chroot',
  // Deleting, moving or overwriting data beyond undo.
  'rm',
  'rmdir',
  'unlink',
  'mv',
  'dd',
  'shred',
  'truncate',
  'mkfs',
  'mkfs.*',
  'mke2fs',
  'mkswap',
  'fdisk',
  'sfdisk',
  'parted',
  'wipefs',
  'mount',
  'umount',
  // Permissions and ownership.
  'chmod',
  'chown',
  'chgrp',
  'chattr',
  'setfacl',
  // Other processes and the machine itself.
  'kill',
  'pkill',
  'killall',
  'shutdown',
  'reboot',
  'halt',
  'poweroff',
  'systemctl',
  'service',
  'launchctl',
  'crontab',
  // Commands that run a command the rule cannot see: a string, stdin, or a fresh shell.
  'eval',
  'exec',
  'source',
  '.',
  'xargs',
  'env',
  'parallel',
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'fish',
  'csh',
  'tcsh',
  'busybox',
  // The network: downloading something to run, or sending data away.
  'curl',
  'wget',
  'nc',
  'ncat',
  'netcat',
  'socat',
  'telnet',
  'ssh',
  'scp',
  'sftp',
  'rsync',
  'ftp',
  // git: publishing, destroying uncommitted work, or running a program named in configuration.
  'git push',
  'git -c',
  'git --config-env',
  'git --exec-path',
  'git config',
  'git clean',
  'git reset --hard',
  'git filter-branch',
  // Containers and clusters are root-equivalent on the host or reach shared infrastructure.
  'docker',
  'podman',
  'kubectl',
  'helm',
  // Publishing packages is public and cannot be taken back.
  'npm publish',
  'yarn publish',
  'pnpm publish',
  'cargo publish',
  'gem push',
  'twine upload',
];

/** What `floorHit` answers for a segment that runs text it could not analyse. */
export const UNANALYSABLE_FLOOR_HIT = '(a nested command that cannot be analysed)';

/**
 * The floor entry the segment hits, or undefined. A segment that runs command text the views could
 * not analyse (a `bash -c` script with a loop, a very long wrapper chain) counts as a hit, reported
 * as `UNANALYSABLE_FLOOR_HIT`, because nothing about it can be ruled out.
 */
export function floorHit(
  segment: Segment,
  floor: readonly string[],
  limits: SegmentLimits = DEFAULT_SEGMENT_LIMITS,
): string | undefined {
  return floorHitInViews(commandViews(segment, limits), floor);
}

/** `floorHit` for views already computed (the evaluator needs them for deny and ask rules too). */
export function floorHitInViews(
  { views, unparsed }: CommandViews,
  floor: readonly string[],
): string | undefined {
  for (const entry of floor) {
    const words = entry.trim().split(/\s+/).filter(Boolean);
    if (words.length > 0 && views.some((v) => startsWithWords(v.words, words))) return entry;
  }
  return unparsed.length > 0 ? UNANALYSABLE_FLOOR_HIT : undefined;
}

function startsWithWords(view: readonly string[], prefix: readonly string[]): boolean {
  if (prefix.length > view.length) return false;
  return prefix.every((p, i) => globMatch(p, view[i] as string, { question: false }));
}
