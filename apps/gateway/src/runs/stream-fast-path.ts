import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { AppError, describeIssues, Routes, toFieldIssues } from '@switchyard/contracts';
import { correlationIdFrom, type Logger, type Metrics } from '@switchyard/server-observability';
import { LOGGER, METRICS } from '@switchyard/server-runtime';
import { authenticate } from '../auth/auth.guard';
import { TokenVerifier } from '../auth/token-verifier';
import { toProblem } from '../http/problem';
import { refuseHostileInput } from '../http/validation.interceptor';
import { lastEventIdOf, StreamRelay } from './stream-relay';

const PATH = Routes.runStream.path;

/**
 * Serves `GET /api/agent/stream` on the raw HTTP server, ahead of Express. An SSE stream lives for
 * minutes or hours, and Express gives every request its own prototype chain (Object.setPrototypeOf
 * on req and res), which costs each open stream about 7 KiB of V8 maps. Same checks, same answers
 * as the framework route: token (header or ?token=), permission, query schema, problem+json.
 */
@Injectable()
export class StreamFastPath {
  constructor(
    private readonly relay: StreamRelay,
    private readonly verifier: TokenVerifier,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(METRICS) private readonly metrics: Metrics,
  ) {}

  /** Puts the fast path in front of the server's existing request listeners (the Express app). */
  install(server: Server): void {
    const others = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const url = req.url ?? '';
      if (req.method === 'GET' && (url === PATH || url.startsWith(`${PATH}?`))) {
        void this.serve(req, res);
        return;
      }
      for (const listener of others) listener.call(server, req, res);
    });
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const correlationId = correlationIdFrom(req.headers['x-correlation-id']);
    res.setHeader('x-correlation-id', correlationId);
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
        Routes.runStream,
        this.verifier,
        req.headers,
        params.get('token') ?? undefined,
      );
      const { token: _token, ...raw } = Object.fromEntries(params);
      refuseHostileInput({ query: raw });
      const query = Routes.runStream.query.safeParse(raw);
      if (!query.success) {
        const issues = toFieldIssues(query.error).map((i) => ({
          ...i,
          path: i.path ? `query.${i.path}` : 'query',
        }));
        throw new AppError('validation_failed', `invalid request: ${describeIssues(issues)}`, { issues });
      }
      await this.relay.open(
        query.data.runId,
        lastEventIdOf(req, query.data.lastEventId),
        principal,
        req,
        res,
      );
    } catch (err) {
      const { problem, bug } = toProblem(err, correlationId, PATH);
      if (bug)
        this.logger.error({ err, correlationId, url: PATH }, 'request failed with an unexpected error');
      if (res.headersSent) {
        res.end();
        return;
      }
      res
        .writeHead(problem.status, { 'content-type': 'application/problem+json; charset=utf-8' })
        .end(JSON.stringify(problem));
    }
  }
}
