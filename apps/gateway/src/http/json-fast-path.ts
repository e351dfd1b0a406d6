import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import {
  AppError,
  describeIssues,
  Routes,
  Rpc,
  toFieldIssues,
  type RouteDef,
  type RpcRequest,
} from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import type { Bus } from '@switchyard/server-bus';
import {
  correlationIdFrom,
  type CallContext,
  type ContextStore,
  type Logger,
  type Metrics,
} from '@switchyard/server-observability';
import { APP_CONFIG, BUS, CONTEXT, LOGGER, METRICS } from '@switchyard/server-runtime';
import { authenticate } from '../auth/auth.guard';
import { TokenVerifier } from '../auth/token-verifier';
import { StreamRelay } from '../runs/stream-relay';
import { callContext } from './endpoint';
import { sendRawProblem } from './problem.filter';
import { refuseHostileInput } from './validation.interceptor';

/** The largest body the fast path reads itself; a larger one takes the framework's way. */
const FAST_BODY_BYTES = 64 * 1024;

type BodyRoute = RouteDef & { readonly body: NonNullable<RouteDef['body']> };

/**
 * A route answered on the raw HTTP server: its definition, and either its JSON answer to a valid
 * body or (`stream`) a response it writes itself once the body is valid.
 */
type FastRoute =
  | { readonly route: BodyRoute; answer(body: unknown, ctx: CallContext): Promise<unknown> }
  | {
      readonly route: BodyRoute;
      stream(
        body: unknown,
        ctx: CallContext,
        req: IncomingMessage,
        res: ServerResponse,
        head: Readonly<Record<string, string>>,
      ): Promise<void>;
    };

/** `HTTP_BODY_LIMIT` as bytes (`100kb`, `1mb`, a plain number); undefined when it says something else. */
export function bodyLimitBytes(limit: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(limit);
  if (!m) return undefined;
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(m[2] ?? 'b').toLowerCase() as 'b'];
  return Math.floor(Number(m[1]) * unit);
}

/**
 * Answers the busiest plain JSON calls, `POST /api/agent/tasks` (a background task's submit),
 * `POST /api/agent/run` (a run's start) and `POST /api/agent/run/stream` (a start that streams), on
 * the raw HTTP server ahead of Express and Nest, whose layers (router, guard, interceptors, rxjs)
 * cost more than the rest of the gateway's part of a task. Same checks and answers as the framework
 * route: token and permission, hostile text, the body's schema, problem+json with Retry-After.
 * Anything out of the ordinary takes the framework's way: an Idempotency-Key (its interceptor keeps
 * the answer), a query string, a body that is not plain JSON or has no length or a large one.
 */
@Injectable()
export class JsonFastPath {
  private readonly routes: readonly FastRoute[];
  private readonly bodyLimit: number;

  constructor(
    private readonly verifier: TokenVerifier,
    relay: StreamRelay,
    @Inject(BUS) bus: Bus,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(METRICS) private readonly metrics: Metrics,
    @Inject(CONTEXT) private readonly context: ContextStore,
  ) {
    this.bodyLimit = Math.min(FAST_BODY_BYTES, bodyLimitBytes(config.http.bodyLimit) ?? 0);
    this.routes = [
      {
        route: Routes.taskSubmit,
        answer: (body, ctx) =>
          bus.call(Rpc.tasks.submit, body as RpcRequest<typeof Rpc.tasks.submit>, { ctx }),
      },
      {
        route: Routes.runStart,
        answer: (body, ctx) =>
          bus.call(Rpc.executor.start, body as RpcRequest<typeof Rpc.executor.start>, { ctx }),
      },
      {
        // The start, then the run's stream on the same response: no second request, token check or
        // visibility query (the caller started it).
        route: Routes.runStartStream,
        stream: async (body, ctx, req, res, head) => {
          const started = await bus.call(Rpc.executor.start, body as RpcRequest<typeof Rpc.executor.start>, {
            ctx,
          });
          await relay.relayStarted(started.runId, req, res, head);
        },
      },
    ];
  }

  /** Puts the fast path in front of the server's existing request listeners (the Express app). */
  install(server: Server): void {
    const others = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const fast = this.routeFor(req);
      if (fast) {
        void this.serve(fast, req, res);
        return;
      }
      for (const listener of others) listener.call(server, req, res);
    });
  }

  private routeFor(req: IncomingMessage): FastRoute | undefined {
    const fast = this.routes.find((r) => r.route.method === req.method && r.route.path === req.url);
    if (!fast) return undefined;
    const h = req.headers;
    const length = Number(h['content-length']);
    const plainJson = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i.test(
      h['content-type'] ?? '',
    );
    const eligible =
      plainJson &&
      h['idempotency-key'] === undefined &&
      (h['content-encoding'] === undefined || h['content-encoding'] === 'identity') &&
      h['transfer-encoding'] === undefined &&
      Number.isInteger(length) &&
      length <= this.bodyLimit;
    return eligible ? fast : undefined;
  }

  private async serve(fast: FastRoute, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { route } = fast;
    const correlationId = correlationIdFrom(req.headers['x-correlation-id']);
    // A stream sends it with its head (a header set on `res` is kept for the response's life).
    if (!('stream' in fast)) res.setHeader('x-correlation-id', correlationId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      this.metrics.httpRequests.inc({
        method: route.method,
        route: route.path,
        status: String(res.statusCode),
      });
      this.metrics.httpDuration.observe(
        { method: route.method, route: route.path },
        Number(process.hrtime.bigint() - started) / 1e9,
      );
    });
    await this.context.run({ correlationId }, async () => {
      try {
        // In the framework's order: the body parser, then the guard, then validation.
        const body = parseJsonBody(await readBody(req));
        const caller = await authenticate(route, this.verifier, req.headers, undefined);
        refuseHostileInput({ params: {}, query: {}, body });
        const parsed = route.body.safeParse(body);
        if (!parsed.success) {
          const issues = toFieldIssues(parsed.error).map((i) => ({
            path: i.path ? `body.${i.path}` : 'body',
            message: i.message,
          }));
          throw new AppError('validation_failed', `invalid request: ${describeIssues(issues)}`, { issues });
        }
        const ctx = callContext(caller, correlationId);
        if ('stream' in fast) {
          await fast.stream(parsed.data, ctx, req, res, { 'x-correlation-id': correlationId });
          return;
        }
        const answer = await fast.answer(parsed.data, ctx);
        const json = JSON.stringify(answer);
        res
          .writeHead(route.status ?? 200, {
            'content-type': 'application/json; charset=utf-8',
            'content-length': Buffer.byteLength(json),
          })
          .end(json);
      } catch (err) {
        if (!res.headersSent) res.setHeader('x-correlation-id', correlationId);
        sendRawProblem(err, correlationId, route.method, route.path, res, this.logger);
      }
    });
  }
}

/** The body as text (its length was checked against the limit before; the bytes must agree). */
function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** JSON as the framework's body parser reads it: strict (an object or an array), empty is `{}`. */
function parseJsonBody(text: string): unknown {
  const first = /\S/.exec(text)?.[0];
  if (first === undefined) return {};
  try {
    if (first !== '{' && first !== '[') throw new SyntaxError('not an object or an array');
    return JSON.parse(text) as unknown;
  } catch {
    throw Object.assign(new SyntaxError('request body is not valid JSON'), { type: 'entity.parse.failed' });
  }
}
