import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import type { z } from 'zod';
import { AppError, describeIssues, Routes, toFieldIssues, type RouteDef } from '@switchyard/contracts';
import { correlationIdFrom, type Logger, type Metrics } from '@switchyard/server-observability';
import { LOGGER, METRICS } from '@switchyard/server-runtime';
import { authenticate } from '../auth/auth.guard';
import { TokenVerifier } from '../auth/token-verifier';
import { sendRawProblem } from '../http/problem.filter';
import { refuseHostileInput } from '../http/validation.interceptor';
import type { Principal } from '../auth/principal';
import { forgetHeaders } from './held-stream';
import { feedResumeIdOf, OwnerFeed } from './owner-feed';
import { lastEventIdOf, StreamRelay } from './stream-relay';

/** An SSE route: its definition, and how to stream it once the caller is known (the query is raw). */
interface Stream {
  readonly route: RouteDef;
  start(
    raw: Record<string, string>,
    caller: Principal,
    req: IncomingMessage,
    res: ServerResponse,
    head: Readonly<Record<string, string>>,
  ): Promise<void>;
}

type Opener<Q> = (
  query: Q,
  caller: Principal,
  req: IncomingMessage,
  res: ServerResponse,
  head: Readonly<Record<string, string>>,
) => Promise<void>;

/** Binds a route's query schema to its opener, so the opener gets the query as validated. */
function stream<Q extends z.ZodObject>(
  route: RouteDef & { readonly query: Q },
  open: Opener<z.output<Q>>,
): Stream {
  return {
    route,
    start: (raw, caller, req, res, head) => {
      const query = route.query.safeParse(raw);
      if (!query.success) {
        const issues = toFieldIssues(query.error).map((i) => ({
          ...i,
          path: i.path ? `query.${i.path}` : 'query',
        }));
        throw new AppError('validation_failed', `invalid request: ${describeIssues(issues)}`, { issues });
      }
      return open(query.data, caller, req, res, head);
    },
  };
}

/**
 * Serves the SSE routes (`GET /api/agent/stream`, `GET /api/events`) on the raw HTTP server, ahead
 * of Express. An SSE stream lives for minutes or hours, and Express gives every request its own
 * prototype chain (Object.setPrototypeOf on req and res), which costs each open stream about 7 KiB
 * of V8 maps. Same checks, same answers as the framework routes: token (header or ?token=),
 * permission, query schema, problem+json.
 */
@Injectable()
export class StreamFastPath {
  private readonly streams: readonly Stream[];

  constructor(
    relay: StreamRelay,
    feed: OwnerFeed,
    private readonly verifier: TokenVerifier,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(METRICS) private readonly metrics: Metrics,
  ) {
    this.streams = [
      stream(Routes.runStream, (q, caller, req, res, head) =>
        relay.open(q.runId, lastEventIdOf(req, q.lastEventId), caller, req, res, head),
      ),
      stream(Routes.ownerFeed, (q, caller, req, res, head) =>
        feed.open(caller, feedResumeIdOf(req, q.lastEventId), req, res, head),
      ),
    ];
  }

  /** Puts the fast path in front of the server's existing request listeners (the Express app). */
  install(server: Server): void {
    const others = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const url = req.url ?? '';
      const stream =
        req.method === 'GET'
          ? this.streams.find(({ route: r }) => url === r.path || url.startsWith(`${r.path}?`))
          : undefined;
      if (stream) {
        void this.serve(stream, req, res);
        return;
      }
      for (const listener of others) listener.call(server, req, res);
    });
  }

  private async serve(stream: Stream, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { route } = stream;
    const PATH = route.path;
    const correlationId = correlationIdFrom(req.headers['x-correlation-id']);
    // Sent with the head (the opener's writeHead, or the problem's), not set on `res`: Node keeps the
    // headers set on a response (a dictionary object per stream) for as long as the stream is open.
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      this.metrics.httpRequests.inc({ method: 'GET', route: PATH, status: String(res.statusCode) });
      this.metrics.httpDuration.observe(
        { method: 'GET', route: PATH },
        Number(process.hrtime.bigint() - started) / 1e9,
      );
    });
    try {
      const params = new URL(req.url ?? '/', 'http://gateway').searchParams;
      const principal = await authenticate(
        route,
        this.verifier,
        req.headers,
        params.get('token') ?? undefined,
      );
      const { token: _token, ...raw } = Object.fromEntries(params);
      refuseHostileInput({ query: raw });
      const streaming = stream.start(raw, principal, req, res, { 'x-correlation-id': correlationId });
      // The stream holds its request for as long as it is open (hours): once the opener has read
      // what it needs (Last-Event-ID, synchronously above), the header strings are let go.
      forgetHeaders(req);
      await streaming;
    } catch (err) {
      if (!res.headersSent) res.setHeader('x-correlation-id', correlationId);
      sendRawProblem(err, correlationId, 'GET', PATH, res, this.logger);
    }
  }
}
