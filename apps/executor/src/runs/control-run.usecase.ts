import { Inject, Injectable } from '@nestjs/common';
import { AppError, FINISHED_RUN_STATUSES, type RunControlReply } from '@switchyard/contracts';
import { isNoResponders } from '@switchyard/server-bus';
import type { AppConfig } from '@switchyard/server-config';
import { LeaseLostError, RunsRepository } from '@switchyard/server-db-runs';
import type { CallContext } from '@switchyard/server-observability';
import { APP_CONFIG } from '@switchyard/server-runtime';
import { ActiveRuns } from './active-runs';
import { visibleTo } from './run-access';

type ControlMessage =
  | { readonly action: 'approve'; readonly stepId?: string; readonly plan?: unknown }
  | { readonly action: 'cancel'; readonly reason: string };

/** Approve (the plan or steps, with an edit) and cancel: checked here, acted on by the run's own replica. */
@Injectable()
export class ControlRun {
  constructor(
    private readonly repo: RunsRepository,
    private readonly active: ActiveRuns,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async approve(
    runId: string,
    stepId: string | undefined,
    plan: unknown,
    ctx: CallContext,
  ): Promise<RunControlReply> {
    return this.control(runId, { action: 'approve', ...(stepId ? { stepId } : {}), plan }, ctx);
  }

  async cancel(runId: string, ctx: CallContext): Promise<RunControlReply> {
    return this.control(runId, { action: 'cancel', reason: 'cancelled by the user' }, ctx);
  }

  private async control(runId: string, msg: ControlMessage, ctx: CallContext): Promise<RunControlReply> {
    const run = await this.repo.getVisible(runId, visibleTo(ctx));
    if (FINISHED_RUN_STATUSES.has(run.status))
      throw new AppError('conflict', `run ${runId} is ${run.status}; there is nothing to ${msg.action}`, {
        details: { status: run.status },
      });
    try {
      return await this.active.control(runId, msg);
    } catch (err) {
      if (err instanceof LeaseLostError)
        throw new AppError(
          'conflict',
          `run ${runId} was taken from this replica (its lease lapsed) while the ${msg.action} was written; read the run and resume it`,
          { details: { status: 'interrupted' } },
        );
      if (isNoResponders(err)) {
        throw new AppError(
          'conflict',
          `run ${runId} is ${run.status} but no executor replica holds it (its replica stopped); ` +
            `it is marked interrupted within ${Math.ceil((this.config.runs.leaseMs + this.config.runs.sweepMs) / 1000)} s, then it can be resumed`,
          { details: { status: run.status } },
        );
      }
      throw err;
    }
  }
}
