import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { AppError, type Role } from '@switchyard/contracts';

/** What travels with a request, in-process (AsyncLocalStorage) and across NATS (headers). */
export interface CallContext {
  readonly correlationId: string;
  readonly ownerId?: string;
  readonly role?: Role;
}

/** Holds the current call's context for logs and outgoing requests. One per process, injected. */
export class ContextStore {
  private readonly als = new AsyncLocalStorage<CallContext>();

  run<T>(ctx: CallContext, fn: () => T): T {
    return this.als.run(ctx, fn);
  }

  current(): CallContext | undefined {
    return this.als.getStore();
  }

  correlationId(): string | undefined {
    return this.als.getStore()?.correlationId;
  }
}

const CORRELATION_ID = /^[A-Za-z0-9._:-]{1,100}$/;

/** Accepts a caller's correlation id when it is sane, otherwise mints one. */
export function correlationIdFrom(value: unknown): string {
  return typeof value === 'string' && CORRELATION_ID.test(value) ? value : randomUUID();
}

/**
 * The caller's owner id, or `forbidden`: owner-scoped data (runs, rules, hooks, tasks) is never
 * served to a call without an owner. `what` names it in the sentence ("runs", "hooks").
 */
/** Admin-only calls: `sentence` says why the caller is refused (what needs an admin). */
export function requireAdmin(ctx: CallContext, sentence: string): void {
  if (ctx.role !== 'admin') throw new AppError('forbidden', sentence);
}

export function requireOwner(ctx: CallContext, what: string): string {
  if (!ctx.ownerId) throw new AppError('forbidden', `${what} belong to owners; this call carries none`);
  return ctx.ownerId;
}
