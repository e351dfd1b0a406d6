import {
  AppError,
  describeIssues,
  inputTextIssues,
  MAX_MESSAGE_DEPTH,
  type ErrorBody,
} from '@switchyard/contracts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * JSON for the wire. nats.js's JSONCodec reports every failure as a NatsError "Bad JSON", which a
 * caller cannot tell from a transport failure; here a value too deep for JSON.stringify (it
 * recurses, and overflows the stack some thousands of levels down) is the sender's bad input, and
 * anything else that cannot be encoded (a cycle, a BigInt) is a bug.
 */
export function encodeJson(value: unknown, what: string): Uint8Array {
  let text: string;
  try {
    text = JSON.stringify(value ?? null);
  } catch (err) {
    if (err instanceof RangeError)
      throw new AppError('validation_failed', `${what} nests too deeply to be sent as JSON`);
    throw new AppError('internal', `${what} cannot be sent as JSON: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return encoder.encode(text);
}

/**
 * Parsed JSON (JSON.parse does not recurse: depth alone cannot break it), or an AppError with `code`:
 * `validation_failed` for what a caller sent, `internal` for what a service answered.
 */
export function decodeJson(
  data: Uint8Array,
  what: string,
  code: 'validation_failed' | 'internal' = 'validation_failed',
): unknown {
  try {
    return JSON.parse(decoder.decode(data)) as unknown;
  } catch {
    throw new AppError(code, `${what} is not JSON`);
  }
}

/** A request body a service must not act on (see MAX_MESSAGE_DEPTH), as the error to answer with. */
export function refusedMessage(data: unknown): AppError | undefined {
  const issues = inputTextIssues(data, '', MAX_MESSAGE_DEPTH);
  return issues.length
    ? new AppError('validation_failed', `invalid message: ${describeIssues(issues)}`, { issues })
    : undefined;
}

/** What goes back over NATS for an error: an AppError's body, anything else as a bare `internal`. */
export function errorBodyOf(err: unknown): ErrorBody {
  return err instanceof AppError ? err.toBody() : { code: 'internal', message: 'internal error' };
}
