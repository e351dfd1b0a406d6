import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { Events } from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { BUS } from '@switchyard/server-runtime';
import { TaskTransitions } from './task-transitions';

/**
 * Tells the owner feed (`Events.ownerFeed`) when a task starts or ends. "queued" is sent by the
 * admission itself (TasksService.admitWritten), once the task is in the queue.
 */
@Injectable()
export class TaskFeed implements OnModuleInit {
  constructor(
    private readonly transitions: TaskTransitions,
    @Inject(BUS) private readonly bus: Bus,
  ) {}

  onModuleInit(): void {
    this.transitions.on(async (t) => {
      this.bus.emit(Events.ownerFeed(t.ownerId), { kind: 'task', taskId: t.taskId, status: t.state });
    });
  }
}
