import { AppError } from '@switchyard/contracts';

/** A LIKE pattern matching `q` anywhere, its `%`, `_` and `\` taken literally. */
export function likePattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** A keyset cursor: the last item's creation time and id, opaque to callers. */
export function encodeKeysetCursor(at: Date, id: string): string {
  return Buffer.from(`${at.toISOString()}|${id}`).toString('base64url');
}

/** The position a keyset cursor stands for, or validation_failed for one this API did not give out. */
export function decodeKeysetCursor(cursor: string): { at: Date; id: string } {
  const [iso, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const at = new Date(iso ?? '');
  if (!id || Number.isNaN(at.getTime()) || !/^[0-9a-f-]{36}$/i.test(id)) {
    throw new AppError('validation_failed', 'cursor is not one this API returned', {
      issues: [{ path: 'cursor', message: 'malformed cursor' }],
    });
  }
  return { at, id };
}
