import { z } from 'zod';
import { ErrorCode } from './errors';
import { MAX_PLAN_STEPS } from './plan';
import { PermissionMode } from './runs';

const RuleLine = z.string().max(1_000);
const RuleList = z.array(RuleLine).max(500);

/** One rule per line in each list; blank lines and lines starting with # are ignored. */
export const RuleLists = z
  .object({ allow: RuleList.default([]), ask: RuleList.default([]), deny: RuleList.default([]) })
  .strict();
export type RuleLists = z.infer<typeof RuleLists>;

export const RuleScopeQuery = z.object({
  scope: z
    .enum(['owner', 'global'])
    .default('owner')
    .describe('global: the rules an admin sets for everyone, which owners cannot loosen'),
});
export type RuleScopeQuery = z.infer<typeof RuleScopeQuery>;

export const PermissionSettings = z.object({
  scope: z.enum(['owner', 'global']),
  allow: z.array(z.string()),
  ask: z.array(z.string()),
  deny: z.array(z.string()),
  updatedAt: z.string().nullable(),
  global: z
    .object({ allow: z.array(z.string()), ask: z.array(z.string()), deny: z.array(z.string()) })
    .describe('the global rules, which apply on top of these'),
});
export type PermissionSettings = z.infer<typeof PermissionSettings>;

export const HookEvent = z.enum([
  'pre_tool_use',
  'post_tool_use',
  'post_tool_use_failure',
  'run_complete',
  'run_error',
]);
export type HookEvent = z.infer<typeof HookEvent>;

export const HookType = z.enum(['command', 'http']);
export type HookType = z.infer<typeof HookType>;

const HookFields = z.object({
  name: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .regex(/^[A-Za-z0-9._ -]+$/, 'letters, digits, spaces, ".", "_" or "-"'),
  event: HookEvent,
  matcher: z
    .string()
    .max(1_000)
    .default('')
    .describe('a rule matcher such as Tool(write_*) or Command(git:*); empty matches every call'),
  type: HookType,
  command: z
    .string()
    .min(1)
    .max(4_000)
    .optional()
    .describe(
      'command hooks (admins only): run with /bin/sh -c on the executor host, the event as JSON on stdin',
    ),
  url: z.string().url().max(2_000).optional().describe('http hooks: the event is POSTed here as JSON'),
  timeoutSeconds: z.number().int().min(1).max(600).default(30),
  enabled: z.boolean().default(true),
  failClosed: z
    .boolean()
    .default(false)
    .describe('deny the call when the hook crashes, times out or answers oddly (default: log and go on)'),
  global: z.boolean().default(false).describe('applies to every owner (admins only)'),
});

function hookShape<T extends { type: HookType; command?: string | undefined; url?: string | undefined }>(
  h: T,
  ctx: z.RefinementCtx,
): void {
  if (h.type === 'command' && !h.command)
    ctx.addIssue({ code: 'custom', path: ['command'], message: 'a command hook needs command' });
  if (h.type === 'command' && h.url)
    ctx.addIssue({ code: 'custom', path: ['url'], message: 'a command hook takes no url' });
  if (h.type === 'http' && !h.url)
    ctx.addIssue({ code: 'custom', path: ['url'], message: 'an http hook needs url' });
  if (h.type === 'http' && h.command)
    ctx.addIssue({ code: 'custom', path: ['command'], message: 'an http hook takes no command' });
}

export const HookBody = HookFields.strict().superRefine(hookShape);
export type HookBody = z.infer<typeof HookBody>;

export const Hook = HookFields.extend({
  id: z.string().uuid(),
  ownerId: z.string().uuid().nullable(),
  matcher: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Hook = z.infer<typeof Hook>;

export const HookList = z.object({ items: z.array(Hook) });
export type HookList = z.infer<typeof HookList>;

export const HookIdParam = z.object({ id: z.string().uuid() });

export const EvaluateBody = z
  .object({
    tool: z.string().min(1).max(300),
    arguments: z.record(z.string(), z.unknown()).default({}),
    permissionMode: PermissionMode.optional().describe('default: ask'),
    unattended: z.boolean().default(false).describe('as for a run nobody can answer (schedules, webhooks)'),
  })
  .strict();
export type EvaluateBody = z.infer<typeof EvaluateBody>;

export const PermissionDecision = z.object({
  decision: z.enum(['allow', 'ask', 'deny']),
  reason: z.string(),
  rule: z.string().optional().describe('the rule that decided, with its list and scope'),
  hook: z.string().optional().describe('the hook that decided'),
  floor: z
    .string()
    .optional()
    .describe('the dangerous-command floor entry that made it ask (floor commands ask in every mode)'),
});
export type PermissionDecision = z.infer<typeof PermissionDecision>;

/**
 * Several calls asked at once, in one request and one catalog read: the plan gate asks for every
 * step of a plan (one request per step took the page's connections for a 64-step plan).
 */
export const EvaluateManyBody = z
  .object({
    calls: z
      .array(EvaluateBody.pick({ tool: true, arguments: true }).strict())
      .min(1)
      .max(MAX_PLAN_STEPS)
      .describe('the calls, in order (at most as many as a plan has steps)'),
    permissionMode: EvaluateBody.shape.permissionMode,
    unattended: EvaluateBody.shape.unattended,
  })
  .strict();
export type EvaluateManyBody = z.infer<typeof EvaluateManyBody>;

/** What the gate would decide for one call, or why it could not say (e.g. no such tool: `not_found`). */
export const EvaluatedCall = z.union([
  PermissionDecision,
  z.object({ error: z.object({ code: ErrorCode, message: z.string() }) }),
]);
export type EvaluatedCall = z.infer<typeof EvaluatedCall>;

export const EvaluatedCalls = z.object({
  items: z.array(EvaluatedCall).describe('one per call, in the order asked'),
});
export type EvaluatedCalls = z.infer<typeof EvaluatedCalls>;

/** Broadcast when an owner's (or the global) rules or hooks change, so every replica reloads them. */
export const PERMISSIONS_CHANGED_SUBJECT = 'events.executor.permissions.changed';
export const PermissionsChanged = z.object({ scope: z.string() });
