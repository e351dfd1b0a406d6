import { Inject, Injectable } from '@nestjs/common';
import { MEMORY_INJECT_MAX, type InjectedMemory } from '@switchyard/contracts';
import type { CallContext, Logger } from '@switchyard/server-observability';
import { LOGGER } from '@switchyard/server-runtime';
import { MemoryService } from './memory.service';

/** The owner's memories relevant to a goal, for a planning prompt: none while memory is off. */
@Injectable()
export class MemoryRecall {
  constructor(
    private readonly memory: MemoryService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async forGoal(ctx: CallContext, goal: string): Promise<InjectedMemory[]> {
    if (!ctx.ownerId) return [];
    try {
      const found = await this.memory.search(ctx, { query: goal, limit: MEMORY_INJECT_MAX, touch: true });
      return found.items.map(({ id, text, score }) => ({ id, text, score }));
    } catch (err) {
      // Memory is an aid: a plan is still drafted without it.
      this.logger.warn({ err: (err as Error).message }, 'memories left out of the planning prompt');
      return [];
    }
  }
}
