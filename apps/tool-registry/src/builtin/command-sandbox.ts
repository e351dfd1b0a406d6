import { Inject, Injectable, Optional, type OnModuleInit } from '@nestjs/common';
import { execFile } from 'node:child_process';
import { access, constants, lstat, readlink } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import type { AppConfig } from '@switchyard/server-config';
import type { Logger } from '@switchyard/server-observability';
import { APP_CONFIG, HealthService, LOGGER } from '@switchyard/server-runtime';
import type { WorkspaceView } from './workspace.guard';

export type SandboxStatus =
  { readonly available: true; readonly bin: string } | { readonly available: false; readonly reason: string };

/** Host directories a sandboxed program may see, read-only: programs and their libraries. */
const SYSTEM_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** Files under /etc that programs need to start; nothing with secrets or host identity. */
const ETC_FILES = [
  '/etc/alternatives',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/mime.types',
];
/** Only with COMMAND_SANDBOX_NETWORK: name resolution and TLS roots. */
const NETWORK_ETC_FILES = [
  '/etc/resolv.conf',
  '/etc/hosts',
  '/etc/nsswitch.conf',
  '/etc/ssl',
  '/etc/ca-certificates',
];
/** The user a sandboxed program runs as (nobody), with no capabilities. */
const SANDBOX_UID = '65534';
const PROBE_TIMEOUT_MS = 5_000;

export const HOW_TO_ENABLE =
  'An admin can enable it: install bubblewrap (Debian: apt-get install bubblewrap), make sure the host ' +
  'allows user namespaces (sysctl kernel.unprivileged_userns_clone=1; in a container, a seccomp profile ' +
  'that permits clone/unshare of namespaces), keep COMMAND_SANDBOX=bwrap, and restart the tool registry.';

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `program` in the directories of `path` (a PATH string), if any. */
export async function findProgram(program: string, path: string): Promise<string | undefined> {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    const candidate = join(dir, program);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Confines execute_command with bubblewrap: new PID, IPC, UTS, cgroup, user and network
 * namespaces, uid nobody with no capabilities, the system's program directories read-only, a
 * private /tmp and /proc, and nothing else of the host but the owner's view of the workspace (bound
 * read-write at the workspace's own path, shared folders as their mode says). The repository, `.env`,
 * other owners' areas and other processes' environments are simply not there.
 *
 * Whether the host can sandbox is probed once at start (a real bwrap run of `true`).
 */
@Injectable()
export class CommandSandbox implements OnModuleInit {
  private current: SandboxStatus = { available: false, reason: 'not probed yet' };

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Optional() private readonly health?: HealthService,
  ) {}

  get status(): SandboxStatus {
    return this.current;
  }

  async onModuleInit(): Promise<void> {
    this.current = await this.probe();
    this.health?.addFeature('commandSandbox', () =>
      this.current.available
        ? { status: 'available', detail: `execute_command runs inside bubblewrap (${this.current.bin})` }
        : {
            status: 'unavailable',
            detail: `execute_command is refused to non-admins: ${this.current.reason}. ${HOW_TO_ENABLE}`,
          },
    );
    if (this.current.available) this.logger.info({ bwrap: this.current.bin }, 'command sandbox available');
    else
      this.logger.warn(
        { reason: this.current.reason },
        'command sandbox unavailable: execute_command is refused to non-admins',
      );
  }

  /** PATH inside the sandbox: the configured PATH's entries that the sandbox shows (system dirs). */
  get path(): string {
    const visible = (dir: string) =>
      dir.startsWith('/usr/') || SYSTEM_DIRS.some((s) => dir === s || dir.startsWith(`${s}/`));
    return this.config.tools.commandPath
      .split(delimiter)
      .filter((d) => d && visible(d))
      .join(delimiter);
  }

  async probe(): Promise<SandboxStatus> {
    const { kind, bin: configured } = this.config.tools.sandbox;
    if (kind === 'none')
      return { available: false, reason: 'the sandbox is switched off (COMMAND_SANDBOX=none)' };
    const bin = configured ?? (await findProgram('bwrap', `${this.config.tools.commandPath}:/usr/bin:/bin`));
    if (!bin || !(await isExecutable(bin)))
      return {
        available: false,
        reason: `bubblewrap is not installed (${configured ?? 'no bwrap on PATH'})`,
      };
    const truePath = await findProgram('true', '/usr/bin:/bin');
    if (!truePath) return { available: false, reason: 'no `true` program to probe the sandbox with' };
    const args = await this.args({ cwd: '/', binds: [], command: [truePath] });
    return new Promise((resolve) => {
      execFile(bin, args, { env: {}, timeout: PROBE_TIMEOUT_MS }, (err, _out, stderr) => {
        if (!err) resolve({ available: true, bin });
        else
          resolve({
            available: false,
            reason: `bwrap cannot create a sandbox here: ${String(stderr).trim() || err.message}`,
          });
      });
    });
  }

  /** The part of bwrap's arguments that is the same for every command: namespaces, system dirs. */
  private system: Promise<string[]> | undefined;

  private async systemArgs(): Promise<string[]> {
    const network = this.config.tools.sandbox.network;
    const args = ['--unshare-all', ...(network ? ['--share-net'] : [])];
    args.push('--die-with-parent', '--new-session', '--uid', SANDBOX_UID, '--gid', SANDBOX_UID);
    args.push('--cap-drop', 'ALL', '--ro-bind', '/usr', '/usr');
    for (const dir of SYSTEM_DIRS) {
      const st = await lstat(dir).catch(() => undefined);
      if (st?.isSymbolicLink()) args.push('--symlink', await readlink(dir), dir);
      else if (st?.isDirectory()) args.push('--ro-bind', dir, dir);
    }
    for (const file of [...ETC_FILES, ...(network ? NETWORK_ETC_FILES : [])])
      args.push('--ro-bind-try', file, file);
    return args;
  }

  /** bwrap's arguments to run `command` with the owner's view of the workspace. */
  async argsFor(view: WorkspaceView, command: readonly string[]): Promise<string[]> {
    return this.args({
      cwd: view.root,
      binds: [
        { host: view.area, at: view.root, writable: true },
        ...view.mounts.map((m) => ({ host: m.hostPath, at: m.viewPath, writable: m.writable })),
      ],
      command,
    });
  }

  private async args(opts: {
    cwd: string;
    binds: readonly { host: string; at: string; writable: boolean }[];
    command: readonly string[];
  }): Promise<string[]> {
    this.system ??= this.systemArgs();
    const args = [...(await this.system)];
    args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
    for (const b of opts.binds) args.push(b.writable ? '--bind' : '--ro-bind', b.host, b.at);
    args.push('--chdir', opts.cwd, '--clearenv');
    const env: Record<string, string> = {
      PATH: this.path,
      HOME: opts.cwd,
      TMPDIR: '/tmp',
      LANG: 'C.UTF-8',
      TERM: 'dumb',
      CI: 'true',
    };
    for (const [k, v] of Object.entries(env)) args.push('--setenv', k, v);
    args.push('--', ...opts.command);
    return args;
  }
}
