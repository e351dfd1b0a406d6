import { z } from 'zod';

/**
 * The closed set of error codes that cross service boundaries. Wire-stable: the gateway maps each
 * one to exactly one HTTP status, so adding a code is a contract change (update `httpStatusFor`).
 */
export const ErrorCode = z.enum([
  'validation_failed',
  'unauthenticated',
  'forbidden',
  'not_found',
  'conflict',
  'payload_too_large',
  'capacity_exceeded',
  'tool_failed',
  'model_not_configured',
  'unavailable',
  'timeout',
  'budget_exceeded',
  /** A run, schedule or trigger created sandboxed, while plugins run unsandboxed. */
  'sandbox_weakened',
  'internal',
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const FieldIssue = z.object({
  path: z.string().describe('dotted path of the offending field, "" for the whole value'),
  message: z.string(),
});
export type FieldIssue = z.infer<typeof FieldIssue>;

/** How an error travels over NATS: data, never a stack trace. */
export const ErrorBody = z.object({
  code: ErrorCode,
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
  issues: z.array(FieldIssue).optional(),
  correlationId: z.string().optional(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/** A failure the caller can act on. Domain code throws these; transports turn them into data. */
export class AppError extends Error {
  override readonly name = 'AppError';

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: { details?: Record<string, unknown>; issues?: FieldIssue[]; cause?: unknown } = {},
  ) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
  }

  get details(): Record<string, unknown> | undefined {
    return this.extra.details;
  }

  get issues(): FieldIssue[] | undefined {
    return this.extra.issues;
  }

  toBody(correlationId?: string): ErrorBody {
    const body: ErrorBody = { code: this.code, message: this.message };
    if (this.extra.details) body.details = this.extra.details;
    if (this.extra.issues) body.issues = this.extra.issues;
    if (correlationId) body.correlationId = correlationId;
    return body;
  }

  static fromBody(body: ErrorBody): AppError {
    const err = new AppError(body.code, body.message, {
      ...(body.details ? { details: body.details } : {}),
      ...(body.issues ? { issues: body.issues } : {}),
    });
    return err;
  }
}

export function isErrorBody(value: unknown): value is ErrorBody {
  return ErrorBody.safeParse(value).success;
}

/** Codes that describe a passing condition: retrying the same call later may succeed. */
export function isTransient(code: ErrorCode): boolean {
  switch (code) {
    case 'unavailable':
    case 'timeout':
    case 'capacity_exceeded':
      return true;
    case 'validation_failed':
    case 'unauthenticated':
    case 'forbidden':
    case 'not_found':
    case 'conflict':
    case 'payload_too_large':
    case 'tool_failed':
    case 'model_not_configured':
    case 'budget_exceeded':
    case 'sandbox_weakened':
    case 'internal':
      return false;
    default:
      return assertNever(code);
  }
}

/** The one place an error code becomes an HTTP status. Exhaustive: a new code fails to compile here. */
export function httpStatusFor(code: ErrorCode): number {
  switch (code) {
    case 'validation_failed':
    case 'model_not_configured':
      return 400;
    case 'unauthenticated':
      return 401;
    case 'forbidden':
      return 403;
    case 'not_found':
      return 404;
    case 'conflict':
    case 'sandbox_weakened':
      return 409;
    case 'payload_too_large':
      return 413;
    case 'capacity_exceeded':
      return 429;
    case 'tool_failed':
      return 502;
    case 'unavailable':
      return 503;
    case 'timeout':
      return 504;
    case 'budget_exceeded':
      return 422;
    case 'internal':
      return 500;
    default:
      return assertNever(code);
  }
}

export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${String(value)}`);
}

/** Turns zod issues into our field issues ("owner.name: Required"). */
export function toFieldIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join('.'),
    message: issue.message,
  }));
}

export function describeIssues(issues: FieldIssue[]): string {
  return issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
}

/** Parses `value` with `schema` or throws a `validation_failed` AppError naming every bad field. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, what = 'request'): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = toFieldIssues(result.error);
  throw new AppError('validation_failed', `invalid ${what}: ${describeIssues(issues)}`, { issues });
}
