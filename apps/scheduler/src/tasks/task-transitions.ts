import { Injectable } from '@nestjs/common';
import type { TaskState } from '@switchyard/contracts';

export interface TaskTransition {
  readonly taskId: string;
  readonly ownerId: string;
  readonly state: TaskState;
  readonly error: string | null;
  /**
   * Whether a webhook delivery submitted the task, when the statement that moved it said so;
   * undefined when not known (a follower then checks for itself).
   */
  readonly fromWebhook?: boolean;
}

type Listener = (t: TaskTransition) => Promise<void>;

/**
 * A task started or ended: what follows a task (a webhook delivery's audit row, the owner feed)
 * listens here instead of the task code knowing its followers. Listeners' failures are theirs to log.
 */
@Injectable()
export class TaskTransitions {
  private readonly listeners: Listener[] = [];

  on(listener: Listener): void {
    this.listeners.push(listener);
  }

  emit(t: TaskTransition): void {
    for (const l of this.listeners) void l(t);
  }
}
