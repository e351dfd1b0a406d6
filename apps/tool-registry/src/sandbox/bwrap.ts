import { execFile } from 'node:child_process';
import { access, constants, lstat, readlink } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

/**
 * bubblewrap's arguments, shared by every sandbox of the registry (execute_command, plugin servers):
 * new PID, IPC, UTS, cgroup, user and network namespaces, uid nobody with no capabilities, the
 * system's program directories read-only, a private /tmp, /proc and /dev, and nothing else of the
 * host but what a caller binds. The repository, `.env`, other owners' areas, other plugins and other
 * processes' environments are simply not there.
 */

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
/** Only with network access: name resolution and TLS roots. */
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

/** A host path shown inside the sandbox at `at`. */
export interface Bind {
  readonly host: string;
  readonly at: string;
  readonly writable: boolean;
}

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

/** A directory the sandbox shows anyway (under /usr or a system dir), so PATH entries there work. */
export function visibleInSandbox(dir: string): boolean {
  return dir.startsWith('/usr/') || SYSTEM_DIRS.some((s) => dir === s || dir.startsWith(`${s}/`));
}

/** The namespaces and system directories: the same for every program (cached per network choice). */
export class BwrapArgs {
  private readonly system = new Map<boolean, Promise<string[]>>();

  private async systemArgs(network: boolean): Promise<string[]> {
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

  /**
   * The full argument list to run `command` in `cwd` with `binds`. `setenv` replaces the whole
   * environment (values appear on bwrap's command line: nothing secret); `keepEnv` instead keeps
   * bwrap's own environment (values stay out of the process list) minus `unsetenv`.
   */
  async build(opts: {
    readonly network: boolean;
    readonly cwd: string;
    readonly binds: readonly Bind[];
    readonly command: readonly string[];
    readonly setenv?: Readonly<Record<string, string>>;
    readonly unsetenv?: readonly string[];
  }): Promise<string[]> {
    let system = this.system.get(opts.network);
    if (!system) {
      system = this.systemArgs(opts.network);
      this.system.set(opts.network, system);
    }
    const args = [...(await system)];
    args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
    for (const b of opts.binds) args.push(b.writable ? '--bind' : '--ro-bind', b.host, b.at);
    args.push('--chdir', opts.cwd);
    if (opts.setenv) {
      args.push('--clearenv');
      for (const [k, v] of Object.entries(opts.setenv)) args.push('--setenv', k, v);
    }
    for (const k of opts.unsetenv ?? []) args.push('--unsetenv', k);
    args.push('--', ...opts.command);
    return args;
  }
}

/** One real probe per bwrap program and PATH in a process: the command and plugin sandboxes share it. */
const probes = new Map<string, Promise<SandboxStatus>>();

/**
 * Whether this host can sandbox: a bwrap program (`configured`, else found on `path`) that really
 * runs `true` inside a sandbox. `off` names the switch that turned it off. The probe runs once per
 * process for a given program and PATH, whoever asks.
 */
export function probeBwrap(opts: {
  readonly off?: string | undefined;
  readonly configured: string | undefined;
  readonly path: string;
}): Promise<SandboxStatus> {
  if (opts.off)
    return Promise.resolve({ available: false, reason: `the sandbox is switched off (${opts.off})` });
  const key = `${opts.configured ?? ''}\0${opts.path}`;
  let probe = probes.get(key);
  if (!probe) {
    probe = runProbe(opts.configured, opts.path);
    probes.set(key, probe);
  }
  return probe;
}

async function runProbe(configured: string | undefined, path: string): Promise<SandboxStatus> {
  const bin = configured ?? (await findProgram('bwrap', `${path}:/usr/bin:/bin`));
  if (!bin || !(await isExecutable(bin)))
    return {
      available: false,
      reason: `bubblewrap is not installed (${configured ?? 'no bwrap on PATH'})`,
    };
  const truePath = await findProgram('true', '/usr/bin:/bin');
  if (!truePath) return { available: false, reason: 'no `true` program to probe the sandbox with' };
  const args = await new BwrapArgs().build({
    network: false,
    cwd: '/',
    binds: [],
    command: [truePath],
    setenv: {},
  });
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
