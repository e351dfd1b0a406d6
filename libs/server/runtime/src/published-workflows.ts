import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Events, Rpc, type RpcResponse } from '@switchyard/contracts';
import type { BusPort } from '@switchyard/server-bus';
import type { CallContext } from '@switchyard/server-observability';
import { ChangeCache } from './change-cache';
import { BUS } from './tokens';

export type PublishedWorkflow = RpcResponse<typeof Rpc.workflows.resolve>;

/** A published version is reused this long at most without an event (a missed one heals by then). */
export const PUBLISHED_TTL_MS = 10_000;

/**
 * The published versions of workflows, as the planner resolves them for a caller, kept until the
 * planner says the workflow was published, unpublished or deleted (`Events.workflowsChanged`, sent
 * before the planner answers the change) or PUBLISHED_TTL_MS passed. Every task resolved its
 * workflow twice (the submit's check, the body's start): two planner round trips per task.
 * Refusals (unknown, unpublished, another owner's) are not kept.
 */
@Injectable()
export class PublishedWorkflows implements OnModuleInit, OnModuleDestroy {
  private readonly cache = new ChangeCache<PublishedWorkflow>(PUBLISHED_TTL_MS);
  private unsubscribe: (() => void) | undefined;

  constructor(@Inject(BUS) private readonly bus: BusPort) {}

  onModuleInit(): void {
    this.unsubscribe = this.bus.on(Events.workflowsChanged, (e) => {
      const suffix = `|${e.workflowId ?? ''}`;
      this.cache.drop(e.workflowId ? (key) => key.endsWith(suffix) : undefined);
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }

  /** The published version of `id` as `ctx` may run it (an admin: anyone's); refusals as AppErrors. */
  resolve(id: string, ctx: CallContext): Promise<PublishedWorkflow> {
    // Who may resolve it decides the answer: the owner, or any admin.
    const who = ctx.role === 'admin' ? '*' : (ctx.ownerId ?? '');
    return this.cache.get(`${who}|${id}`, () =>
      this.bus.call(Rpc.workflows.resolve, { id, version: 'published' }, { ctx }),
    );
  }
}
