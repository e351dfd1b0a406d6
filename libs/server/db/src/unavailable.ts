import { AppError } from '@switchyard/contracts';

/** SQLSTATEs of a database that is away: connection exceptions (class 08) and shutdowns. */
const AWAY_SQLSTATE = /^(08|57P0[1-3])/;
/** Node socket errors on the way to the database. */
const AWAY_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);
const AWAY_MESSAGE =
  /Connection terminated|connection is closed|Can't reach database server|server closed the connection/i;

/**
 * An error that says the database is away (down, restarting, unreachable) as `unavailable`, so the
 * caller gets a 503 to retry rather than a 500 bug; undefined for any other error. Looks through
 * Prisma's and the pg adapter's wrappers (`cause`).
 */
export function databaseUnavailable(err: unknown): AppError | undefined {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const { code, message, name } = e as { code?: unknown; message?: unknown; name?: unknown };
    if (
      (typeof code === 'string' &&
        (AWAY_SQLSTATE.test(code) || AWAY_ERRNO.has(code) || code === 'P1001' || code === 'P1017')) ||
      name === 'PrismaClientInitializationError' ||
      (typeof message === 'string' && AWAY_MESSAGE.test(message))
    )
      return new AppError('unavailable', 'the database is unavailable; try again shortly', {
        details: { retryable: true, reason: 'database' },
      });
    e = (e as { cause?: unknown }).cause ?? (e as { originalError?: unknown }).originalError;
  }
  return undefined;
}
