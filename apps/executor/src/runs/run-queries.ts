import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import {
  AgentPlan,
  grantView,
  INBOX_LIMIT,
  ResolvedGrant,
  RunConfig,
  STEP_RUN_EVENTS,
  type Inbox,
  type InboxItem,
  type RunDetail,
  type RunEvent,
  type StepRunEvent,
  type RunListQuery,
  type RunPage,
  type RunSummary,
} from '@switchyard/contracts';
import { InputRequestsRepository, RunsRepository, type RunRow } from '@switchyard/server-db-runs';
import type { CallContext } from '@switchyard/server-observability';
import { foldExecutions, spentOf } from './executions';
import { ownerOf, visibleTo } from './run-access';

const HISTORY_EVENTS = 1_000;

/**
 * Runs as their owner (or an admin) sees them: a page of summaries, one run with its history, or
 * the gates waiting for the caller.
 */
@Injectable()
export class RunQueries {
  constructor(
    private readonly repo: RunsRepository,
    private readonly inputs: InputRequestsRepository,
  ) {}

  async list(q: RunListQuery, ctx: CallContext): Promise<RunPage> {
    const page = await this.repo.list(ownerOf(ctx), q);
    return { items: page.items.map(summaryOf), nextCursor: page.nextCursor };
  }

  /** The caller's own gates (an admin's too: an inbox is for the person, not for the platform). */
  async inbox(ctx: CallContext): Promise<Inbox> {
    const ownerId = ownerOf(ctx);
    const [gates, inputs] = await Promise.all([
      this.repo.openGates(ownerId, INBOX_LIMIT),
      this.inputs.pendingOf(ownerId, {}, INBOX_LIMIT),
    ]);
    return {
      inputRequests: inputs,
      items: gates.map((g): InboxItem => {
        const r = g.request;
        return {
          run: summaryOf(g.run),
          gate: g.gate,
          since: g.since,
          ...(r
            ? {
                stepId: r.stepId,
                tool: r.tool,
                effect: r.effect,
                reason: r.reason,
                arguments: r.arguments,
                permission: r.permission,
              }
            : {}),
        };
      }),
    };
  }

  async get(runId: string, ctx: CallContext): Promise<RunDetail> {
    const run = await this.repo.getVisible(runId, visibleTo(ctx));
    const [events, inputs] = await Promise.all([
      this.repo.events(runId, HISTORY_EVENTS + 1),
      this.inputs.pendingOfRun(runId),
    ]);
    // The steps' executions fold every step event: a history shown whole holds them all, a longer
    // one is read again for them alone.
    const stepEvents =
      events.length > HISTORY_EVENTS
        ? await this.repo.eventsOfTypes(runId, STEP_RUN_EVENTS)
        : events.filter(isStepRunEvent);
    const plan = parsePlan(run.plan);
    const budget = RunConfig.shape.budget.safeParse(run.config['budget']);
    return {
      ...summaryOf(run),
      config: run.config,
      inputs: run.inputs,
      plan,
      executions: foldExecutions(plan, stepEvents),
      events: events.slice(0, HISTORY_EVENTS),
      eventsTruncated: events.length > HISTORY_EVENTS,
      agentId: run.agentId,
      sandboxPosture: run.sandboxPosture,
      budget: (budget.success && budget.data) || null,
      usage: spentOf(run.usage, stepEvents),
      files: grantsOf(run).map((g) => grantView(g, ctx.role === 'admin')),
      inputRequests: inputs,
    };
  }
}

const STEP_EVENT_TYPES: ReadonlySet<string> = new Set(STEP_RUN_EVENTS);
function isStepRunEvent(e: RunEvent): e is StepRunEvent {
  return STEP_EVENT_TYPES.has(e.type);
}

const ResolvedGrants = z.array(ResolvedGrant);

/** The grants kept on a run's row (written by this service; rows from before grants have none). */
export function grantsOf(run: Pick<RunRow, 'fileGrants'>): ResolvedGrant[] {
  const parsed = ResolvedGrants.safeParse(run.fileGrants ?? []);
  return parsed.success ? parsed.data : [];
}

/** A run's stored plan, or null when it has none (or one this version cannot read). */
export function parsePlan(value: unknown): AgentPlan | null {
  if (value === null || value === undefined) return null;
  const parsed = AgentPlan.safeParse(value);
  return parsed.success ? parsed.data : null;
}

function summaryOf(run: RunRow): RunSummary {
  return {
    id: run.id,
    ownerId: run.ownerId,
    status: run.status,
    goal: run.goal,
    summary: run.summary,
    error: run.error,
    sourceRunId: run.sourceRunId,
    batchId: run.batchId,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    finishedAt: run.finishedAt,
  };
}
