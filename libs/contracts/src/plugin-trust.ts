import { z } from 'zod';
import type { FieldIssue } from './errors';
import { HookEvent, HookType } from './permissions';
import { PluginId, type PluginSandboxStatus } from './plugins';
import { isRecord } from './records';

/**
 * Trusted plugin hooks and the sandbox posture runs are created under (issue 17, items 2 and 3).
 *
 * A bundle's `hooks/hooks.json` comes in Claude Code's grouped shape
 * `{"hooks":{"PreToolUse":[{"matcher":"write_file|edit_file","hooks":[{"type":"command","command":"…"}]}]}}`
 * or as a flat list of hook objects (`[{"name":"…","event":"pre_tool_use",…}]`, or `{"hooks":[…]}`).
 * Enabling a plugin never runs them: an admin trusts them (`POST /api/plugin-hooks/{id}/trust`),
 * and trust binds the file's digest, so a changed file runs nothing until trusted again.
 */

/** A hooks file beyond this is refused whole. */
export const PLUGIN_HOOKS_MAX_BYTES = 256 * 1024;
/** Hooks one plugin may ship. */
export const PLUGIN_HOOKS_MAX = 50;

/** Claude Code's event names, as Switchyard's hook events; our own names are accepted too. */
export const CLAUDE_HOOK_EVENTS: Readonly<Record<string, HookEvent>> = {
  PreToolUse: 'pre_tool_use',
  PostToolUse: 'post_tool_use',
  PostToolUseFailure: 'post_tool_use_failure',
  Stop: 'run_complete',
};

/** One plugin hook, parsed; its working directory is relative to the bundle's root. */
export const PluginHook = z.object({
  /** `plugin/<id>/<name>`: how decisions and audit trails name it. */
  name: z.string(),
  event: HookEvent,
  /** Rule matchers (any may match); empty: every call. */
  matchers: z.array(z.string()),
  type: HookType,
  command: z.string().optional(),
  url: z.string().optional(),
  timeoutSeconds: z.number().int(),
  failClosed: z.boolean(),
  cwd: z.string().describe('relative to the bundle ("" is its root)'),
});
export type PluginHook = z.infer<typeof PluginHook>;

export const PluginHooksEntry = z.object({
  id: PluginId,
  name: z.string(),
  version: z.string(),
  enabled: z.boolean(),
  trusted: z.boolean(),
  trustedAt: z.string().nullable(),
  digest: z
    .string()
    .nullable()
    .describe('SHA-256 (hex) of the hooks file as it is now (null: it could not be read whole)'),
  trustedDigest: z
    .string()
    .nullable()
    .describe('SHA-256 (hex) of the file as it was trusted (null: not trusted)'),
  changed: z
    .boolean()
    .describe('the hooks file differs from the one trusted: its hooks do not run until trusted again'),
  active: z.boolean().describe('trusted, enabled, unchanged and valid: its hooks run on every call'),
  hooks: z.array(PluginHook),
  issues: z
    .array(z.object({ path: z.string(), message: z.string() }))
    .describe('what makes the file unusable (it cannot be trusted while there are any)'),
  ignored: z
    .array(z.object({ path: z.string(), message: z.string() }))
    .describe('parts left out, such as events Switchyard has no counterpart for'),
});
export type PluginHooksEntry = z.infer<typeof PluginHooksEntry>;

export const PluginHooksList = z.object({ items: z.array(PluginHooksEntry) });
export type PluginHooksList = z.infer<typeof PluginHooksList>;

/** `registry.plugins.posture`: how the tool registry runs plugin servers right now. */
export type PluginPosture = PluginSandboxStatus;

/** Why a run, schedule or trigger created sandboxed is held while plugins run unsandboxed. */
export function sandboxWeakenedMessage(what: string, reason?: string): string {
  return (
    `${what} was created while plugins ran sandboxed, and plugins now run unsandboxed` +
    `${reason ? ` (${reason})` : ''}; it waits until the sandbox is restored ` +
    '(PLUGIN_SANDBOX=bwrap with bubblewrap working on the tool registry host, then restart the tool registry)'
  );
}

// ── parsing hooks.json ─────────────────────────────────────────────────────────────────────────

const NAME = /^[A-Za-z0-9._ -]{1,100}$/;
/** A tool-name glob of Claude Code's `Write|Edit` matchers. */
const TOOL_GLOB = /^[A-Za-z0-9_*?-]{1,200}$/;

export interface ParsedPluginHooks {
  /** Names are the bare ones here; the executor prefixes `plugin/<id>/`. */
  readonly hooks: PluginHook[];
  readonly issues: FieldIssue[];
  readonly ignored: FieldIssue[];
}

function eventOf(name: string): HookEvent | undefined {
  return CLAUDE_HOOK_EVENTS[name] ?? (HookEvent.safeParse(name).success ? (name as HookEvent) : undefined);
}

const KNOWN_EVENTS = `${Object.keys(CLAUDE_HOOK_EVENTS).join(', ')} (or ${HookEvent.options.join(', ')})`;

/** `cwd` stays inside the bundle: relative, no `..`, no NUL (symlinks are checked where it runs). */
function cwdIssue(cwd: string): string | undefined {
  if (cwd.includes('\0')) return 'contains a NUL character';
  if (cwd.startsWith('/') || /^[A-Za-z]:/.test(cwd) || cwd.startsWith('\\'))
    return 'must be relative to the bundle';
  if (cwd.split(/[\\/]/).some((s) => s === '..')) return 'must stay inside the bundle (no "..")';
  return undefined;
}

/**
 * Claude Code's tool matcher (`""`, `"*"`, `"Write|Edit"`) as rule matchers (`Tool(Write)`, …); a
 * rule matcher (`Tool(excel_*)`, `Command(git:*)`, `mcp__github`) is kept as written.
 */
function matchersOf(raw: string): string[] | string {
  const m = raw.trim();
  if (!m || m === '*') return [];
  if (m.includes('(') || m.startsWith('mcp__')) return [m];
  const alts = m.split('|').map((a) => a.trim());
  const bad = alts.find((a) => !TOOL_GLOB.test(a));
  if (bad !== undefined)
    return `"${bad}" is not a tool name or glob; write tool names separated by "|" or a rule matcher such as Tool(write_*)`;
  return alts.map((a) => `Tool(${a})`);
}

interface HookFieldsIn {
  readonly path: string;
  readonly name: string;
  readonly event: HookEvent;
  readonly matchers: string[];
  readonly body: Record<string, unknown>;
  /** Claude's `timeout` or our `timeoutSeconds`. */
  readonly timeoutKey: 'timeout' | 'timeoutSeconds';
}

const ALLOWED_KEYS = new Set([
  'name',
  'event',
  'matcher',
  'type',
  'command',
  'url',
  'timeout',
  'timeoutSeconds',
  'failClosed',
  'cwd',
]);

function hookOf(f: HookFieldsIn, issues: FieldIssue[]): PluginHook | undefined {
  const at = (k: string) => `${f.path}.${k}`;
  const before = issues.length;
  const b = f.body;
  for (const k of Object.keys(b))
    if (!ALLOWED_KEYS.has(k)) issues.push({ path: at(k), message: 'unknown field' });
  const type = HookType.safeParse(b['type']);
  if (!type.success) issues.push({ path: at('type'), message: 'must be "command" or "http"' });
  const command = b['command'];
  const url = b['url'];
  if (type.success && type.data === 'command') {
    if (typeof command !== 'string' || !command.trim() || command.length > 4_000)
      issues.push({
        path: at('command'),
        message: 'a command hook needs a command (at most 4,000 characters)',
      });
    if (url !== undefined) issues.push({ path: at('url'), message: 'a command hook takes no url' });
  }
  if (type.success && type.data === 'http') {
    if (typeof url !== 'string' || !z.string().url().max(2_000).safeParse(url).success)
      issues.push({ path: at('url'), message: 'an http hook needs an http(s) url' });
    if (command !== undefined) issues.push({ path: at('command'), message: 'an http hook takes no command' });
  }
  const timeout = b[f.timeoutKey] ?? 30;
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1 || timeout > 600)
    issues.push({ path: at(f.timeoutKey), message: 'whole seconds from 1 to 600' });
  const failClosed = b['failClosed'] ?? false;
  if (typeof failClosed !== 'boolean') issues.push({ path: at('failClosed'), message: 'true or false' });
  const cwd = b['cwd'] ?? '';
  if (typeof cwd !== 'string' || cwd.length > 1_000)
    issues.push({ path: at('cwd'), message: 'a relative path inside the bundle' });
  else {
    const why = cwdIssue(cwd);
    if (why) issues.push({ path: at('cwd'), message: why });
  }
  if (issues.length > before || !type.success) return undefined;
  return {
    name: f.name,
    event: f.event,
    matchers: f.matchers,
    type: type.data,
    ...(type.data === 'command' ? { command: command as string } : { url: url as string }),
    timeoutSeconds: timeout as number,
    failClosed: failClosed as boolean,
    cwd: cwd === '.' ? '' : (cwd as string).replace(/^(\.\/)+/, ''),
  };
}

function grouped(events: Record<string, unknown>, out: ParsedPluginHooks): void {
  for (const [eventName, groups] of Object.entries(events)) {
    const path = `hooks.${eventName}`;
    const event = eventOf(eventName);
    if (!event) {
      out.ignored.push({ path, message: `unknown event; Switchyard runs ${KNOWN_EVENTS}` });
      continue;
    }
    if (!Array.isArray(groups)) {
      out.issues.push({ path, message: 'must be a list of {matcher, hooks} groups' });
      continue;
    }
    groups.forEach((group: unknown, g) => {
      const gp = `${path}[${g}]`;
      if (!isRecord(group) || !Array.isArray(group['hooks'])) {
        out.issues.push({ path: gp, message: 'must be {"matcher": "…", "hooks": [...]}' });
        return;
      }
      for (const k of Object.keys(group))
        if (k !== 'matcher' && k !== 'hooks')
          out.issues.push({ path: `${gp}.${k}`, message: 'unknown field' });
      const rawMatcher = group['matcher'] ?? '';
      const matchers = typeof rawMatcher === 'string' ? matchersOf(rawMatcher) : 'must be a string';
      if (typeof matchers === 'string') {
        out.issues.push({ path: `${gp}.matcher`, message: matchers });
        return;
      }
      (group['hooks'] as unknown[]).forEach((h, i) => {
        const hp = `${gp}.hooks[${i}]`;
        if (!isRecord(h)) {
          out.issues.push({ path: hp, message: 'must be a hook object' });
          return;
        }
        const hook = hookOf(
          { path: hp, name: `${eventName}-${g}-${i}`, event, matchers, body: h, timeoutKey: 'timeout' },
          out.issues,
        );
        if (hook) out.hooks.push(hook);
      });
    });
  }
}

function flat(list: unknown[], base: string, out: ParsedPluginHooks): void {
  list.forEach((h, i) => {
    const hp = `${base}[${i}]`;
    if (!isRecord(h)) {
      out.issues.push({ path: hp, message: 'must be a hook object' });
      return;
    }
    const name = h['name'];
    if (typeof name !== 'string' || !NAME.test(name)) {
      out.issues.push({ path: `${hp}.name`, message: 'letters, digits, spaces, ".", "_" or "-" (1 to 100)' });
      return;
    }
    const eventName = h['event'];
    const event = typeof eventName === 'string' ? eventOf(eventName) : undefined;
    if (!event) {
      out.ignored.push({
        path: `${hp}.event`,
        message: `unknown event ${JSON.stringify(eventName)}; Switchyard runs ${KNOWN_EVENTS}`,
      });
      return;
    }
    const rawMatcher = h['matcher'] ?? '';
    const matchers = typeof rawMatcher === 'string' ? matchersOf(rawMatcher) : 'must be a string';
    if (typeof matchers === 'string') {
      out.issues.push({ path: `${hp}.matcher`, message: matchers });
      return;
    }
    const { event: _e, name: _n, matcher: _m, ...body } = h;
    const hook = hookOf({ path: hp, name, event, matchers, body, timeoutKey: 'timeoutSeconds' }, out.issues);
    if (hook) out.hooks.push(hook);
  });
}

/**
 * Parses a bundle's hooks file (its text: the size is checked here too). Every problem is reported
 * by path; `issues` make the file unusable as a whole, `ignored` parts (unknown events) are left out.
 */
export function parsePluginHooks(text: string): ParsedPluginHooks {
  const out: ParsedPluginHooks = { hooks: [], issues: [], ignored: [] };
  const size = new TextEncoder().encode(text).length;
  if (size > PLUGIN_HOOKS_MAX_BYTES) {
    out.issues.push({
      path: '',
      message: `the hooks file has ${size} bytes; at most ${PLUGIN_HOOKS_MAX_BYTES} are read`,
    });
    return out;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // The parser's message quotes the text: never echo a file's content back.
    out.issues.push({ path: '', message: 'not valid JSON' });
    return out;
  }
  if (Array.isArray(json)) flat(json, '', out);
  else if (isRecord(json) && Array.isArray(json['hooks'])) flat(json['hooks'], 'hooks', out);
  else if (isRecord(json) && isRecord(json['hooks'])) grouped(json['hooks'], out);
  else
    out.issues.push({
      path: '',
      message: 'expected {"hooks": {"PreToolUse": [...]}} (grouped) or a list of hook objects (flat)',
    });
  if (isRecord(json))
    for (const k of Object.keys(json))
      if (k !== 'hooks' && k !== 'description') out.issues.push({ path: k, message: 'unknown field' });
  const seen = new Set<string>();
  for (const h of out.hooks) {
    if (seen.has(h.name)) out.issues.push({ path: h.name, message: 'two hooks have this name' });
    seen.add(h.name);
  }
  if (out.hooks.length > PLUGIN_HOOKS_MAX)
    out.issues.push({ path: '', message: `${out.hooks.length} hooks; at most ${PLUGIN_HOOKS_MAX}` });
  return out;
}
