import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { PluginEnv, type Hook } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import { AddressPolicy } from '@switchyard/server-runtime';

/** What a hook said: a decision (pre_tool_use), nothing in particular, or that it failed. */
export type HookOutcome =
  | { readonly kind: 'deny'; readonly reason: string }
  | { readonly kind: 'allow' }
  | { readonly kind: 'failed'; readonly reason: string };

const MAX_OUTPUT = 64 * 1024;

/**
 * A hook as it runs: a plugin's trusted hook also carries where it runs (its bundle, or a directory
 * inside it) and the plugin's directories, given to it as SWITCHYARD_PLUGIN_ROOT / _DATA.
 */
export interface RunnableHook extends Hook {
  readonly plugin?: {
    readonly id: string;
    readonly root: string;
    readonly data: string;
    /** Absolute, inside `root` (checked when the hooks were loaded). */
    readonly cwd: string;
  };
}

/** Runs one hook (`HookRunner`; a scripted fake in unit tests of the gate). */
export interface HookRun {
  run(hook: RunnableHook, envelope: Record<string, unknown>): Promise<HookOutcome>;
}

export const HOOK_RUNNER = Symbol('HOOK_RUNNER');

/** The addresses an HTTP hook may reach: those web_fetch may. */
export function hookAddressPolicy(config: AppConfig): AddressPolicy {
  return new AddressPolicy({
    allowPrivate: config.tools.webFetch.allowPrivate,
    privateHosts: config.tools.webFetch.privateHosts,
  });
}

/** The executor's hook runner, from its config. */
export function hookRunnerFor(config: AppConfig): HookRunner {
  return new HookRunner(hookAddressPolicy(config), { PATH: config.tools.commandPath });
}

/** `{"decision":"deny","reason":"…"}` anywhere in the answer (a JSON object), or undefined. */
function decisionOf(text: string): { decision: string; reason?: string } | undefined {
  const t = text.trim();
  if (!t.startsWith('{')) return undefined;
  try {
    const v = JSON.parse(t) as unknown;
    if (v && typeof v === 'object' && typeof (v as { decision?: unknown }).decision === 'string') {
      const { decision, reason } = v as { decision: string; reason?: unknown };
      return { decision, ...(typeof reason === 'string' ? { reason } : {}) };
    }
  } catch {
    // not JSON: no decision in it
  }
  return undefined;
}

function firstLine(text: string): string {
  return (text.split('\n').find((l) => l.trim()) ?? '').trim().slice(0, 500);
}

/**
 * Runs one hook with the event envelope. Command hooks: `/bin/sh -c <command>` in its own process
 * group with a minimal environment, the envelope on stdin; exit 2 denies (first stderr line is the
 * reason), a JSON deny on stdout denies on any exit code, exit 0 or a JSON allow goes on, anything
 * else (another code, a crash, the timeout) is a failure. HTTP hooks: the envelope POSTed to a URL
 * vetted like web_fetch's, connected to the vetted address; a JSON deny in a 2xx answer denies, any
 * other 2xx goes on, anything else is a failure. The caller decides what a failure means.
 */
export class HookRunner implements HookRun {
  constructor(
    private readonly policy: AddressPolicy,
    private readonly commandEnv: { PATH: string; HOME?: string },
  ) {}

  run(hook: RunnableHook, envelope: Record<string, unknown>): Promise<HookOutcome> {
    const body = JSON.stringify(envelope);
    return hook.type === 'command'
      ? this.command(hook.command ?? '', body, hook.timeoutSeconds * 1000, hook.plugin)
      : this.http(hook.url ?? '', body, hook.timeoutSeconds * 1000);
  }

  private command(
    command: string,
    input: string,
    timeoutMs: number,
    plugin?: RunnableHook['plugin'],
  ): Promise<HookOutcome> {
    return new Promise((resolve) => {
      const child = spawn('/bin/sh', ['-c', command], {
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
        ...(plugin ? { cwd: plugin.cwd } : {}),
        env: {
          ...this.commandEnv,
          SWITCHYARD_HOOK: '1',
          ...(plugin ? { [PluginEnv.root]: plugin.root, [PluginEnv.data]: plugin.data } : {}),
        },
      });
      let stdout = '';
      let stderr = '';
      let settled = false;
      const done = (outcome: HookOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      const timer = setTimeout(() => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
        done({ kind: 'failed', reason: `timed out after ${timeoutMs / 1000} s` });
      }, timeoutMs);
      child.stdout.on('data', (d: Buffer) => {
        if (stdout.length < MAX_OUTPUT) stdout += d.toString();
      });
      child.stderr.on('data', (d: Buffer) => {
        if (stderr.length < MAX_OUTPUT) stderr += d.toString();
      });
      child.on('error', (err) => done({ kind: 'failed', reason: `could not start: ${err.message}` }));
      child.on('close', (code, signal) => {
        const said = decisionOf(stdout);
        if (said?.decision === 'deny')
          return done({ kind: 'deny', reason: said.reason ?? 'denied by the hook' });
        if (said?.decision === 'allow') return done({ kind: 'allow' });
        if (code === 2)
          return done({ kind: 'deny', reason: firstLine(stderr) || 'denied by the hook (exit 2)' });
        if (code === 0) return done({ kind: 'allow' });
        done({
          kind: 'failed',
          reason: signal
            ? `killed by ${signal}`
            : `exited with ${code}${stderr ? `: ${firstLine(stderr)}` : ''}`,
        });
      });
      child.stdin.on('error', () => undefined); // a hook that does not read its input
      child.stdin.end(input);
    });
  }

  private async http(url: string, body: string, timeoutMs: number): Promise<HookOutcome> {
    let target;
    try {
      target = await this.policy.vet(url);
    } catch (err) {
      return { kind: 'failed', reason: (err as Error).message };
    }
    const lookup: LookupFunction = (_host, opts, cb) => {
      if ((opts as { all?: boolean }).all) cb(null, [{ address: target.address, family: target.family }]);
      else cb(null, target.address, target.family);
    };
    const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve) => {
      const req = send(
        target.url,
        {
          method: 'POST',
          lookup,
          timeout: timeoutMs,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => {
            if (text.length < MAX_OUTPUT) text += d.toString();
          });
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            if (status < 200 || status >= 300)
              return resolve({ kind: 'failed', reason: `answered HTTP ${status}` });
            const said = decisionOf(text);
            if (said?.decision === 'deny')
              return resolve({ kind: 'deny', reason: said.reason ?? 'denied by the hook' });
            resolve({ kind: 'allow' });
          });
          res.on('error', (err) => resolve({ kind: 'failed', reason: err.message }));
        },
      );
      req.on('timeout', () => {
        req.destroy();
        resolve({ kind: 'failed', reason: `timed out after ${timeoutMs / 1000} s` });
      });
      req.on('error', (err) => resolve({ kind: 'failed', reason: err.message }));
      req.end(body);
    });
  }
}
