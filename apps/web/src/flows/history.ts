/**
 * Undo/redo over immutable snapshots. `record` makes a new present and pushes the old one onto the
 * past (at most `cap` entries: the oldest falls off); `replace` changes the present without an undo
 * step (selection, a drag in progress). Edits with the same `key` in a row (typing into one field)
 * fold into one step, so undo never has to be pressed once per keystroke.
 */
export interface History<T> {
  readonly past: readonly T[];
  readonly present: T;
  readonly future: readonly T[];
  /** The key of the edit that made the present, while further edits with it fold into it. */
  readonly key?: string | undefined;
}

export const UNDO_LIMIT = 50;

export function historyOf<T>(present: T): History<T> {
  return { past: [], present, future: [] };
}

export function record<T>(h: History<T>, next: T, key?: string, cap = UNDO_LIMIT): History<T> {
  if (next === h.present) return h;
  if (key !== undefined && key === h.key) return { past: h.past, present: next, future: [], key };
  const past = h.past.length >= cap ? h.past.slice(h.past.length - cap + 1) : h.past;
  return { past: [...past, h.present], present: next, future: [], key };
}

/** Records `next` as one step from `base` (a drag: the present moved live, the step starts where it began). */
export function recordFrom<T>(h: History<T>, base: T, next: T, cap = UNDO_LIMIT): History<T> {
  if (base === next) return { ...h, present: next };
  return record({ ...h, present: base, key: undefined }, next, undefined, cap);
}

export function replace<T>(h: History<T>, next: T): History<T> {
  return next === h.present ? h : { ...h, present: next };
}

export function undo<T>(h: History<T>): History<T> {
  const prev = h.past[h.past.length - 1];
  if (prev === undefined) return h;
  return { past: h.past.slice(0, -1), present: prev, future: [h.present, ...h.future] };
}

export function redo<T>(h: History<T>): History<T> {
  const [next, ...rest] = h.future;
  if (next === undefined) return h;
  return { past: [...h.past, h.present], present: next, future: rest };
}

export const canUndo = (h: History<unknown>): boolean => h.past.length > 0;
export const canRedo = (h: History<unknown>): boolean => h.future.length > 0;
