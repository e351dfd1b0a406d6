import { SandboxPosture } from './plugins';
import { z } from 'zod';
import { PageQuery, pageOf } from './identity';
import { PermissionMode } from './runs';

/**
 * Schedules and webhook triggers: how published workflows run unattended. Both submit ordinary
 * background tasks (schedule fires are `batch`, webhook deliveries `interactive`).
 */

/** At most this many active schedules per owner (the seed's number). */
export const MAX_ACTIVE_SCHEDULES = 50;
/** Interval schedules end this long after they were created. */
export const INTERVAL_SCHEDULE_LIFETIME_MS = 7 * 24 * 3600 * 1000;
export const MIN_INTERVAL_SECONDS = 60;
/** Webhook request bodies beyond this answer 413. */
export const WEBHOOK_BODY_LIMIT_BYTES = 256 * 1024;
export const WEBHOOK_EVENT_ID_MAX = 200;
/** A signed delivery's timestamp may be this far from the scheduler's clock. */
export const WEBHOOK_SIGNATURE_TOLERANCE_SECONDS = 300;
/** Audit rows kept per trigger, and the largest page. */
export const KEPT_DELIVERIES_PER_TRIGGER = 1_000;
export const MAX_DELIVERY_PAGE = 100;

/** Header names of a delivery (Express lower-cases them). */
export const WebhookHeaders = {
  secret: 'x-switchyard-webhook-secret',
  eventId: 'x-switchyard-event-id',
  signature: 'x-switchyard-signature',
} as const;

/** An input whose schema says `format: "switchyard-file"` is a file picked in a session; triggers cannot bind it. */
export const PICKER_FILE_FORMAT = 'switchyard-file';

const Clock = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'a 24-hour clock time "HH:mm"');

export const Recurrence = z
  .object({
    type: z.enum(['daily', 'weekly', 'monthly', 'interval', 'once']).default('daily'),
    time: Clock.default('09:00').describe('local clock time of daily, weekly and monthly schedules'),
    weekdays: z
      .array(z.number().int().min(1).max(7))
      .min(1)
      .max(7)
      .optional()
      .describe('weekly: ISO weekdays, Monday = 1 … Sunday = 7'),
    dayOfMonth: z
      .union([z.number().int().min(1).max(31), z.literal('last')])
      .optional()
      .describe('monthly: 1–31 (29–31 fall on the last day of shorter months) or "last"'),
    everySeconds: z
      .number()
      .int()
      .min(MIN_INTERVAL_SECONDS)
      .max(366 * 24 * 3600)
      .multipleOf(60)
      .optional()
      .describe('interval: whole minutes, at least 60 s; interval schedules expire after 7 days'),
    delaySeconds: z
      .number()
      .int()
      .min(0)
      .max(366 * 24 * 3600)
      .optional()
      .describe('once: fire this long after creation, then end'),
  })
  .strict()
  .superRefine((r, ctx) => {
    const need = (field: keyof typeof r, when: string) => {
      if (r[field] === undefined)
        ctx.addIssue({ code: 'custom', path: [field], message: `a ${when} schedule needs ${field}` });
    };
    const refuse = (field: keyof typeof r) => {
      if (r[field] !== undefined)
        ctx.addIssue({ code: 'custom', path: [field], message: `a ${r.type} schedule takes no ${field}` });
    };
    if (r.type === 'weekly') need('weekdays', 'weekly');
    else refuse('weekdays');
    if (r.type === 'monthly') need('dayOfMonth', 'monthly');
    else refuse('dayOfMonth');
    if (r.type === 'interval') need('everySeconds', 'interval');
    else refuse('everySeconds');
    if (r.type === 'once') need('delaySeconds', 'once');
    else refuse('delaySeconds');
  });
export type Recurrence = z.infer<typeof Recurrence>;

/** An IANA zone name; whether the zone exists is checked by the scheduler (it owns the zone data). */
export const TimeZoneName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_+\-/]+$/, 'an IANA time zone such as Europe/Berlin');

export const ScheduleBody = z
  .object({
    workflowId: z.string().uuid().describe('a published workflow of yours'),
    inputs: z.record(z.string(), z.unknown()).default({}),
    permissionMode: PermissionMode.default('ask').describe(
      'for the unattended runs: under "ask" a non-read step that no allow rule covers refuses creation',
    ),
    timeZone: TimeZoneName.default('UTC').describe(
      "the caller's zone: the web client sends the device's zone; omitted: UTC",
    ),
    fireNow: z.boolean().default(false).describe('also fire once right away'),
    recurrence: Recurrence.default({ type: 'daily', time: '09:00' }),
  })
  .strict()
  .refine((b) => !(b.fireNow && b.recurrence.type === 'once'), {
    message: 'a one-shot fires once: use delaySeconds 0 instead of fireNow',
    path: ['fireNow'],
  });
export type ScheduleBody = z.infer<typeof ScheduleBody>;

export const SchedulePreviewBody = z
  .object({
    workflowId: z.string().uuid().optional().describe('ignored by the preview'),
    inputs: z.record(z.string(), z.unknown()).optional(),
    permissionMode: PermissionMode.optional(),
    timeZone: TimeZoneName.default('UTC'),
    fireNow: z.boolean().default(false),
    recurrence: Recurrence.default({ type: 'daily', time: '09:00' }),
    from: z
      .string()
      .datetime({ offset: true })
      .optional()
      .describe('preview from this instant (default: now)'),
  })
  .strict();
export type SchedulePreviewBody = z.infer<typeof SchedulePreviewBody>;

export const ScheduleStatus = z.enum(['active', 'completed', 'expired', 'cancelled']);
export type ScheduleStatus = z.infer<typeof ScheduleStatus>;

export const Schedule = z.object({
  id: z.string().uuid(),
  ownerId: z.string().uuid(),
  workflowId: z.string().uuid(),
  status: ScheduleStatus.describe(
    'completed: a one-shot that fired; expired: an interval schedule past its 7 days; cancelled: its workflow was deleted',
  ),
  inputs: z.record(z.string(), z.unknown()),
  permissionMode: PermissionMode,
  timeZone: z.string(),
  recurrence: Recurrence,
  nextFires: z.array(z.string()).describe('the next five fire times, ISO-8601 with the zone offset'),
  expiresAt: z.string().nullable(),
  triggerCount: z.number().int().describe('occurrences that submitted a task'),
  missedFires: z
    .number()
    .int()
    .describe('occurrences coalesced after downtime, or lost in a crash window (never replayed)'),
  lastError: z.string().nullable().describe('why the latest occurrence did not submit a task'),
  lastFiredAt: z.string().nullable(),
  lastTaskId: z.string().uuid().nullable(),
  sandboxPosture: SandboxPosture.nullable().describe('how plugin servers ran when it was created'),
  heldReason: z
    .string()
    .nullable()
    .describe(
      'why it does not fire now (created sandboxed, plugins now run unsandboxed); null: nothing holds it',
    ),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Schedule = z.infer<typeof Schedule>;

export const ScheduleIdParam = z.object({ id: z.string().uuid() });
export const ScheduleList = z.object({ items: z.array(Schedule) });
export type ScheduleList = z.infer<typeof ScheduleList>;
export const SchedulePreview = z.object({ nextFires: z.array(z.string()) });
export type SchedulePreview = z.infer<typeof SchedulePreview>;

// ── webhooks ──────────────────────────────────────────────────────────────────────────────────

export const TriggerBody = z
  .object({
    workflowId: z.string().uuid().describe('a published workflow of yours'),
    inputs: z.record(z.string(), z.unknown()).default({}).describe('defaults a delivery body overrides'),
    permissionMode: PermissionMode.default('ask'),
    requireSignature: z
      .boolean()
      .default(false)
      .describe('deliveries must carry X-Switchyard-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>'),
  })
  .strict();
export type TriggerBody = z.infer<typeof TriggerBody>;

export const TriggerStatus = z.enum(['active', 'disabled']);

export const Trigger = z.object({
  id: z.string().uuid(),
  ownerId: z.string().uuid(),
  workflowId: z.string().uuid(),
  status: TriggerStatus.describe('disabled: its workflow was deleted'),
  inputs: z.record(z.string(), z.unknown()),
  permissionMode: PermissionMode,
  requireSignature: z.boolean(),
  url: z.string().describe('the delivery path, relative to the gateway'),
  sandboxPosture: SandboxPosture.nullable().describe('how plugin servers ran when it was created'),
  heldReason: z
    .string()
    .nullable()
    .describe(
      'why deliveries are refused now (created sandboxed, plugins now run unsandboxed); null: nothing holds it',
    ),
  createdAt: z.string(),
  rotatedAt: z.string().nullable(),
});
export type Trigger = z.infer<typeof Trigger>;

export const CreatedTrigger = Trigger.extend({
  secret: z.string().describe('shown this once; only its SHA-256 digest is stored'),
});
export type CreatedTrigger = z.infer<typeof CreatedTrigger>;

export const RotatedSecret = z.object({ secret: z.string() });
export const TriggerList = z.object({ items: z.array(Trigger) });
export type TriggerList = z.infer<typeof TriggerList>;
export const TriggerIdParam = z.object({ id: z.string().uuid() });
export const TriggerHookParam = z.object({ triggerId: z.string().uuid() });

export const DeliveryState = z.enum([
  'CLAIMED',
  'QUEUED',
  'SUBMITTED',
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'INTERRUPTED',
]);
export type DeliveryState = z.infer<typeof DeliveryState>;

/** One audit row: never the body, the secret, the event id or its digest. */
export const Delivery = z.object({
  id: z.string().uuid(),
  triggerId: z.string().uuid(),
  state: DeliveryState,
  acceptedAt: z.string(),
  completedAt: z.string().nullable(),
  durationMs: z.number().int().nullable(),
  taskId: z.string().uuid().nullable(),
  idempotencyKey: z.boolean().describe('the delivery carried X-Switchyard-Event-Id'),
  error: z.string().nullable(),
});
export type Delivery = z.infer<typeof Delivery>;

export const DeliveryListQuery = PageQuery.extend({
  limit: z.coerce.number().int().min(1).max(MAX_DELIVERY_PAGE).default(50),
});
export type DeliveryListQuery = z.infer<typeof DeliveryListQuery>;
export const DeliveryPage = pageOf(Delivery);
export type DeliveryPage = z.infer<typeof DeliveryPage>;

/** The body of a delivery: fields that override the trigger's saved inputs. */
export const DeliveryBody = z.record(z.string(), z.unknown());

export const DeliveryAccepted = z.object({ taskId: z.string().uuid(), deliveryId: z.string().uuid() });
export type DeliveryAccepted = z.infer<typeof DeliveryAccepted>;

/** Gateway → scheduler: what the gateway saw of a delivery (the secret is checked by the scheduler). */
export const DeliverRequest = z.object({
  triggerId: z.string().uuid(),
  secret: z.string().max(512),
  eventId: z.string().min(1).max(WEBHOOK_EVENT_ID_MAX).optional(),
  body: DeliveryBody,
  /** Signature header parsed and checked against the raw body with the presented secret. */
  signature: z
    .object({ timestamp: z.number().int(), valid: z.boolean() })
    .optional()
    .describe('absent: no X-Switchyard-Signature was sent'),
});
export type DeliverRequest = z.infer<typeof DeliverRequest>;
