import { requireOwner, type CallContext } from '@switchyard/server-observability';

/** Whose runs the caller may see: an admin sees every run (null), anyone else their own. */
export function visibleTo(ctx: CallContext): string | null {
  if (ctx.role === 'admin') return null;
  return requireOwner(ctx, 'runs');
}

/** Whose run a new run is: always the caller's. */
export function ownerOf(ctx: CallContext): string {
  return requireOwner(ctx, 'runs');
}
