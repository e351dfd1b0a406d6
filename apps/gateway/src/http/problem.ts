import { HttpException } from '@nestjs/common';
import { AppError, httpStatusFor, type ErrorCode, type Problem } from '@switchyard/contracts';
import { databaseUnavailable } from '@switchyard/server-db';

const TITLES: Record<ErrorCode, string> = {
  validation_failed: 'Validation failed',
  unauthenticated: 'Authentication required',
  forbidden: 'Forbidden',
  not_found: 'Not found',
  conflict: 'Conflict',
  payload_too_large: 'Payload too large',
  capacity_exceeded: 'Capacity exceeded',
  tool_failed: 'Tool failed',
  model_not_configured: 'Model not configured',
  unavailable: 'Service unavailable',
  timeout: 'Timed out',
  budget_exceeded: 'Budget exceeded',
  sandbox_weakened: 'Sandbox weakened',
  internal: 'Internal error',
};

/** Body-parser and Nest HTTP errors that are the client's fault, as our codes. */
function fromHttpLayer(err: unknown): AppError | undefined {
  const type = (err as { type?: unknown }).type;
  if (type === 'entity.parse.failed') {
    return new AppError('validation_failed', 'request body is not valid JSON', {
      issues: [{ path: 'body', message: 'malformed JSON' }],
    });
  }
  if (type === 'entity.too.large') {
    const limit = (err as { limit?: number }).limit;
    return new AppError(
      'payload_too_large',
      `request body is larger than the ${limit ?? ''} byte limit`.replace('  ', ' '),
    );
  }
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return new AppError(
      'validation_failed',
      'request body encoding or charset is not supported; send UTF-8 JSON',
    );
  }
  if (err instanceof HttpException) {
    const status = err.getStatus();
    if (status === 404) return new AppError('not_found', 'no such route; see /api/docs');
    if (status === 405) return new AppError('not_found', 'method not allowed on this route; see /api/docs');
    if (status === 413) return new AppError('payload_too_large', 'request body too large');
    if (status === 401) return new AppError('unauthenticated', err.message);
    if (status === 403) return new AppError('forbidden', err.message);
    if (status >= 400 && status < 500) return new AppError('validation_failed', err.message);
  }
  return undefined;
}

/**
 * Any error → RFC 9457 problem. AppErrors keep their code and message; anything unexpected becomes
 * a 500 `internal` that names only the correlation id (`bug` is true so the caller logs the stack).
 */
export function toProblem(
  err: unknown,
  correlationId: string,
  instance?: string,
): { problem: Problem; bug: boolean } {
  const known = err instanceof AppError ? err : (fromHttpLayer(err) ?? databaseUnavailable(err));
  const appError =
    known ??
    new AppError('internal', `internal error; quote correlation id ${correlationId} when reporting it`);
  const status = httpStatusFor(appError.code);
  const problem: Problem = {
    type: `https://switchyard.dev/problems/${appError.code.replace(/_/g, '-')}`,
    title: TITLES[appError.code],
    status,
    detail:
      appError.code === 'internal'
        ? `internal error; quote correlation id ${correlationId} when reporting it`
        : appError.message,
    code: appError.code,
    correlationId,
    ...(instance ? { instance } : {}),
    ...(appError.issues ? { errors: appError.issues } : {}),
    ...(appError.details ? { details: appError.details } : {}),
  };
  return { problem, bug: !known || appError.code === 'internal' };
}
