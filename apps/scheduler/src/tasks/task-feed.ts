import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { TaskState } from '@switchyard/contracts';
import { OwnerFeedOutbox } from '@switchyard/server-runtime';
import { TaskTransitions } from './task-transitions';

/**
 * Tells the owner feed when a task starts or ends, and (from the admission,
 * TasksService.admitWritten) when it is queued: not through the transitions, whose listeners run
 * concurrently, so a delivery's audit never hears "queued" after "running". The transitions of a
 * batch (dispatched, ended) leave in one message per owner (`OwnerFeedOutbox`).
 */
@Injectable()
export class TaskFeed implements OnModuleInit {
  constructor(
    private readonly transitions: TaskTransitions,
    private readonly feed: OwnerFeedOutbox,
  ) {}

  onModuleInit(): void {
    this.transitions.on(async (t) => this.tell(t.ownerId, t.taskId, t.state));
  }

  /** A hint for live lists: never a reason for a task's own path to fail. */
  tell(ownerId: string, taskId: string, status: TaskState): void {
    this.feed.tell(ownerId, { kind: 'task', taskId, status });
  }
}
