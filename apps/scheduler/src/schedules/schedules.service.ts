import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import {
  AppError,
  type Schedule,
  type ScheduleBody,
  type SchedulePreview,
  type SchedulePreviewBody,
} from '@switchyard/contracts';
import { SchedulesRepository, type ScheduleDefinition, type ScheduleRow } from '@switchyard/server-db-tasks';
import { requireOwner, type CallContext } from '@switchyard/server-observability';
import { CLOCK, type Clock } from '../clock';
import { TriggerPosture } from '../triggers/trigger-posture';
import { UnattendedCheck } from '../triggers/unattended-check';
import { expiryOf, inZone, isKnownZone, nextAfter, upcoming, type ScheduleRule } from './calendar';

const PREVIEW = 5;

function ownerOf(ctx: CallContext): string {
  return requireOwner(ctx, 'schedules');
}

function knownZone(zone: string): string {
  if (!isKnownZone(zone))
    throw new AppError('validation_failed', `invalid request: timeZone: ${zone} is not an IANA time zone`, {
      issues: [{ path: 'timeZone', message: `${zone} is not an IANA time zone (such as Europe/Berlin)` }],
    });
  return zone;
}

/** The first fire of a rule anchored at `anchor`: right away with fireNow, else its first occurrence. */
function firstFire(rule: ScheduleRule, fireNow: boolean): Date | null {
  if (fireNow) return rule.anchor;
  // From just before the anchor: a one-shot with no delay, or a clock time equal to now, fires now.
  return nextAfter(rule, new Date(rule.anchor.getTime() - 1));
}

export function ruleOf(row: Pick<ScheduleRow, 'recurrence' | 'timeZone' | 'anchorAt'>): ScheduleRule {
  return { recurrence: row.recurrence, timeZone: row.timeZone, anchor: row.anchorAt };
}

/** The next fires of an active schedule: the stored next one, then the calendar's. */
function nextFires(row: ScheduleRow): string[] {
  if (row.status !== 'active' || !row.nextFireAt) return [];
  const rest = upcoming(ruleOf(row), row.nextFireAt, PREVIEW - 1);
  return [row.nextFireAt, ...rest].map((d) => inZone(d, row.timeZone));
}

export function toSchedule(row: ScheduleRow, heldReason: string | null = null): Schedule {
  return {
    id: row.id,
    ownerId: row.ownerId,
    workflowId: row.workflowId,
    status: row.status,
    inputs: row.inputs,
    permissionMode: row.permissionMode,
    timeZone: row.timeZone,
    recurrence: row.recurrence,
    nextFires: nextFires(row),
    expiresAt: row.expiresAt ? inZone(row.expiresAt, row.timeZone) : null,
    triggerCount: row.triggerCount,
    missedFires: row.missedFires,
    lastError: row.lastError,
    lastFiredAt: row.lastFiredAt ? inZone(row.lastFiredAt, row.timeZone) : null,
    lastTaskId: row.lastTaskId,
    sandboxPosture: row.sandboxPosture,
    heldReason,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** The owner's schedules: creation checks, CRUD and preview. Firing is the ScheduleFirer's. */
@Injectable()
export class SchedulesService {
  constructor(
    private readonly repo: SchedulesRepository,
    private readonly check: UnattendedCheck,
    private readonly posture: TriggerPosture,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** The schedule as shown, with why it does not fire now if the sandbox posture holds it. */
  private async view(row: ScheduleRow): Promise<Schedule> {
    return toSchedule(row, await this.posture.heldReason(row.sandboxPosture, `schedule ${row.id}`));
  }

  private async definition(body: ScheduleBody, ctx: CallContext): Promise<ScheduleDefinition> {
    const timeZone = knownZone(body.timeZone);
    await this.check.check({ ...body, complete: true }, ctx);
    const rule: ScheduleRule = { recurrence: body.recurrence, timeZone, anchor: this.clock.now() };
    return {
      workflowId: body.workflowId,
      inputs: body.inputs,
      permissionMode: body.permissionMode,
      timeZone,
      recurrence: body.recurrence,
      anchorAt: rule.anchor,
      nextFireAt: firstFire(rule, body.fireNow),
      expiresAt: expiryOf(rule),
      sandboxPosture: await this.posture.forNew(),
    };
  }

  async create(body: ScheduleBody, ctx: CallContext): Promise<Schedule> {
    const ownerId = ownerOf(ctx);
    return this.view(await this.repo.create(randomUUID(), ownerId, await this.definition(body, ctx)));
  }

  async update(id: string, body: ScheduleBody, ctx: CallContext): Promise<Schedule> {
    const ownerId = ownerOf(ctx);
    await this.repo.get(ownerId, id);
    return this.view(await this.repo.update(ownerId, id, await this.definition(body, ctx)));
  }

  async list(ctx: CallContext): Promise<{ items: Schedule[] }> {
    return { items: await Promise.all((await this.repo.list(ownerOf(ctx))).map((r) => this.view(r))) };
  }

  async get(id: string, ctx: CallContext): Promise<Schedule> {
    return this.view(await this.repo.get(ownerOf(ctx), id));
  }

  async delete(id: string, ctx: CallContext): Promise<Schedule> {
    return toSchedule(await this.repo.delete(ownerOf(ctx), id));
  }

  preview(body: SchedulePreviewBody): SchedulePreview {
    const timeZone = knownZone(body.timeZone);
    const rule: ScheduleRule = {
      recurrence: body.recurrence,
      timeZone,
      anchor: body.from ? new Date(body.from) : this.clock.now(),
    };
    const first = firstFire(rule, body.fireNow);
    const fires = first ? [first, ...upcoming(rule, first, PREVIEW - 1)] : [];
    return { nextFires: fires.map((d) => inZone(d, timeZone)) };
  }
}
