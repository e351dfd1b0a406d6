import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { Events, type TaskState } from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import type { Logger } from '@switchyard/server-observability';
import { BUS, LOGGER } from '@switchyard/server-runtime';
import { TaskTransitions } from './task-transitions';

/**
 * Tells the owner feed (`Events.ownerFeed`) when a task starts or ends, and (from the admission,
 * TasksService.admitWritten) when it is queued: not through the transitions, whose listeners run
 * concurrently, so a delivery's audit never hears "queued" after "running".
 */
@Injectable()
export class TaskFeed implements OnModuleInit {
  constructor(
    private readonly transitions: TaskTransitions,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.transitions.on(async (t) => this.tell(t.ownerId, t.taskId, t.state));
  }

  /** A hint for live lists: never a reason for a task's own path to fail. */
  tell(ownerId: string, taskId: string, status: TaskState): void {
    try {
      this.bus.emit(Events.ownerFeed(ownerId), { kind: 'task', taskId, status });
    } catch (err) {
      this.logger.warn({ taskId, err: (err as Error).message }, 'owner feed not told of a task');
    }
  }
}
