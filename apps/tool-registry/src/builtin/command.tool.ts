import { Inject } from '@nestjs/common';
import { spawn } from 'node:child_process';
import { z } from 'zod';
import { AppError, type ToolResult } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import { APP_CONFIG } from '@switchyard/server-runtime';
import { BuiltinTool, textOutput, type BuiltinToolHandler, type ToolRunContext } from './builtin-tool';
import { CommandSandbox, findProgram, HOW_TO_ENABLE } from './command-sandbox';
import { WorkspaceGuard } from './workspace.guard';

const TIMEOUT_MS = 30_000;
const TAIL_BYTES = 8 * 1024;
const KILL_GRACE_MS = 2_000;
/**
 * A sandboxed command runs under coreutils' `timeout`, which kills it this long after it started
 * whatever happens to the registry. The registry's own timer (TIMEOUT_MS, then KILL_GRACE_MS) ends it
 * first; this is the backstop for a registry killed mid-call, whose sandboxes bwrap's
 * --die-with-parent takes down, except once in CI, where the sandbox's init outlived it.
 */
const BACKSTOP_S = Math.ceil((TIMEOUT_MS + KILL_GRACE_MS) / 1000) + 5;
/** Shell syntax is refused outright: there is no shell, and these would only mislead. */
const FORBIDDEN = /[&|;`$<>\r\n\0]/;

/** Keeps the last `limit` bytes of a stream. */
class Tail {
  private chunks: Buffer[] = [];
  private size = 0;
  total = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size - (this.chunks[0]?.length ?? 0) >= this.limit)
      this.size -= this.chunks.shift()?.length ?? 0;
  }

  toString(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.limit)).toString('utf8');
  }

  get cut(): boolean {
    return this.total > this.limit;
  }
}

const ExecuteCommandParams = z.object({ command: z.string().min(1).max(8192) }).strict();

/**
 * Runs one allowlisted program in the caller's workspace, without a shell: the command line is
 * split on whitespace (no quoting), the first word must be an allowlisted program name found on
 * PATH, and shell metacharacters are refused. The program runs inside the command sandbox
 * (bubblewrap: it sees the system's programs and the owner's view of the workspace, nothing else of
 * the host, no network); where the host cannot sandbox, only admins may run commands, and their
 * results say they ran unsandboxed. The child runs in its own process group with a fixed minimal
 * environment; on timeout or cancellation the whole group gets SIGTERM, then SIGKILL.
 */
@BuiltinTool({
  name: 'execute_command',
  description:
    'Run one allowlisted program (e.g. git, node, npm, ls, cat) in your workspace directory, inside a sandbox that sees only ' +
    'your workspace and the system programs (no network). No shell: no pipes, redirection, variables or chaining; arguments ' +
    'are split on whitespace. 30 s timeout; returns the exit code and the last 8 KiB of stdout and stderr.',
  params: ExecuteCommandParams,
  effect: 'external',
  idempotent: false,
  outputSchema: textOutput(
    'the command line, how it ended ("exit code <n>", with "(sandboxed)"), then "stdout:" and "stderr:" with the last 8 KiB of each',
    ['$ ls\nexit code 0 (sandboxed)\nstdout:\nREADME.md\nnotes\n\nstderr:\n'],
  ),
})
export class ExecuteCommandTool implements BuiltinToolHandler<typeof ExecuteCommandParams> {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly guard: WorkspaceGuard,
    private readonly sandbox: CommandSandbox,
  ) {}

  /** Splits and checks a command line; throws `forbidden` with the reason. Exported for the corpus tests. */
  parse(command: string): { program: string; args: string[] } {
    const bad = FORBIDDEN.exec(command);
    if (bad) {
      const shown = bad[0] === '\n' ? '\\n' : bad[0] === '\r' ? '\\r' : bad[0] === '\0' ? '\\0' : bad[0];
      throw new AppError(
        'forbidden',
        `command refused: "${shown}" is shell syntax, and commands run without a shell`,
      );
    }
    const words = command.trim().split(/\s+/).filter(Boolean);
    const [program, ...args] = words;
    if (!program) throw new AppError('validation_failed', 'command is empty');
    if (program.includes('/'))
      throw new AppError('forbidden', `command refused: give a program name, not a path ("${program}")`);
    if (program.includes('='))
      throw new AppError(
        'forbidden',
        `command refused: environment assignments ("${program}") are not allowed`,
      );
    if (!this.config.tools.commandAllowlist.includes(program)) {
      throw new AppError(
        'forbidden',
        `command refused: "${program}" is not on the allowlist (${this.config.tools.commandAllowlist.join(', ')})`,
      );
    }
    return { program, args };
  }

  /** Where the sandbox's `timeout` is, looked up once (see backstop). */
  private timeoutProgram: Promise<string | undefined> | undefined;

  /** `timeout --signal=KILL <BACKSTOP_S>s`, when the sandbox has coreutils' timeout (see BACKSTOP_S). */
  private async backstop(): Promise<string[]> {
    this.timeoutProgram ??= findProgram('timeout', this.sandbox.path);
    const timeout = await this.timeoutProgram;
    return timeout ? [timeout, '--signal=KILL', `${BACKSTOP_S}s`] : [];
  }

  private async locate(program: string, path: string): Promise<string> {
    const found = await findProgram(program, path);
    if (found) return found;
    throw new AppError(
      'forbidden',
      `command refused: "${program}" is allowlisted but no such program is installed (shell built-ins do not count)`,
    );
  }

  async run(args: z.infer<typeof ExecuteCommandParams>, ctx: ToolRunContext): Promise<ToolResult> {
    const { program, args: argv } = this.parse(args.command);
    const sandbox = this.sandbox.status;
    if (!sandbox.available && ctx.caller.role !== 'admin')
      throw new AppError(
        'forbidden',
        `execute_command is unavailable: commands run only inside the command sandbox, and this host cannot provide it (${sandbox.reason}). ${HOW_TO_ENABLE}`,
      );
    // The guard creates the owner's area on first use.
    const view = await this.guard.view(ctx.caller);
    const child = sandbox.available
      ? spawn(
          sandbox.bin,
          await this.sandbox.argsFor(view, [
            ...(await this.backstop()),
            await this.locate(program, this.sandbox.path),
            ...argv,
          ]),
          {
            cwd: view.area,
            detached: true, // own process group; bwrap's --die-with-parent takes the sandbox down with it
            stdio: ['ignore', 'pipe', 'pipe'],
            env: {}, // bwrap itself is the sandbox's PID 1: its /proc/1/environ must hold nothing
          },
        )
      : spawn(await this.locate(program, this.config.tools.commandPath), argv, {
          cwd: view.area,
          detached: true, // own process group, so a timeout kills grandchildren too
          stdio: ['ignore', 'pipe', 'pipe'],
          env: {
            PATH: this.config.tools.commandPath,
            HOME: view.area,
            LANG: 'C.UTF-8',
            TERM: 'dumb',
            CI: 'true',
          },
        });
    const out = new Tail(TAIL_BYTES);
    const err = new Tail(TAIL_BYTES);
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));

    let stopped: 'timeout' | 'cancelled' | undefined;
    const killGroup = (signal: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    };
    const stop = (why: 'timeout' | 'cancelled') => {
      if (stopped || child.exitCode !== null) return;
      stopped = why;
      killGroup('SIGTERM');
      setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS).unref();
    };
    const timer = setTimeout(() => stop('timeout'), TIMEOUT_MS);
    const onAbort = () => stop(ctx.signal.reason === 'timeout' ? 'timeout' : 'cancelled');
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    if (ctx.signal.aborted) onAbort();

    const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
      (resolve, reject) => {
        child.once('error', reject);
        child.once('close', (c, s) => resolve({ code: c, signal: s }));
      },
    ).finally(() => {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
      // Whatever the program left running in its group goes too.
      killGroup('SIGKILL');
    });

    const status =
      stopped === 'timeout'
        ? `timed out after ${TIMEOUT_MS / 1000} s and was killed`
        : stopped === 'cancelled'
          ? 'cancelled and killed'
          : signal
            ? `killed by ${signal}`
            : `exit code ${code}`;
    const parts = [
      `$ ${[program, ...argv].join(' ')}`,
      sandbox.available ? `${status} (sandboxed)` : `${status} (NOT sandboxed: ${sandbox.reason})`,
    ];
    parts.push(`stdout${out.cut ? ` (last ${TAIL_BYTES} of ${out.total} bytes)` : ''}:\n${out.toString()}`);
    parts.push(`stderr${err.cut ? ` (last ${TAIL_BYTES} of ${err.total} bytes)` : ''}:\n${err.toString()}`);
    return {
      content: [{ type: 'text', text: parts.join('\n') }],
      isError: code !== 0 || stopped !== undefined,
      truncated: out.cut || err.cut,
      sandboxed: sandbox.available,
    };
  }
}
