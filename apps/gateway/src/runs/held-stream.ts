import type { IncomingMessage, ServerResponse } from 'node:http';

/*
 * An SSE stream holds its request and response for as long as it is open (hours, and thousands of
 * them on one gateway): what they keep that nothing reads again is let go.
 */

/** Drops a request's header strings (an open stream keeps its request; nothing reads them again). */
export function forgetHeaders(req: IncomingMessage): void {
  req.headers = {};
  req.rawHeaders = [];
}

/**
 * Makes the response's sent head one flat string: Node keeps it (`_header`) for the response's life
 * as the rope of every concatenation that built it, a few dozen heap objects per open stream.
 */
export function flattenSentHead(res: ServerResponse): void {
  const r = res as ServerResponse & { _header?: unknown };
  if (typeof r._header === 'string') r._header = Buffer.from(r._header, 'latin1').toString('latin1');
}

/** The head of an SSE response. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};
