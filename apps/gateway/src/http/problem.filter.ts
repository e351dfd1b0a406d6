import { type ArgumentsHost, Catch, type ExceptionFilter, Inject } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { NextFunction, Response } from 'express';
import type { Problem } from '@switchyard/contracts';
import type { Logger } from '@switchyard/server-observability';
import { LOGGER } from '@switchyard/server-runtime';
import type { GatewayRequest } from './endpoint';
import { toProblem } from './problem';

/** The problem for `err`, logged as it deserves, and the headers it goes with. */
function problemFor(
  err: unknown,
  correlationId: string,
  method: string,
  url: string | undefined,
  logger: Logger,
): { problem: Problem; headers: Record<string, string> } {
  const { problem, bug } = toProblem(err, correlationId, url?.split('?')[0]);
  if (bug) logger.error({ err, correlationId, method, url }, 'request failed with an unexpected error');
  else if (problem.status >= 500)
    logger.warn({ code: problem.code, correlationId, detail: problem.detail }, 'request failed');
  const headers: Record<string, string> = {};
  if (problem.code === 'capacity_exceeded') {
    // The refusing service's hint (details.retryAfterSeconds), else a second.
    const hint = problem.details?.['retryAfterSeconds'];
    headers['retry-after'] = String(typeof hint === 'number' && hint >= 1 ? Math.ceil(hint) : 1);
  }
  return { problem, headers };
}

export function sendProblem(err: unknown, req: GatewayRequest, res: Response, logger: Logger): void {
  const correlationId = req.correlationId ?? 'unknown';
  const { problem, headers } = problemFor(err, correlationId, req.method, req.originalUrl, logger);
  if (res.headersSent) {
    res.end();
    return;
  }
  res.set(headers);
  res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
}

/** The same answer on a plain node:http response (the fast paths, outside Express). */
export function sendRawProblem(
  err: unknown,
  correlationId: string,
  method: string,
  url: string,
  res: ServerResponse,
  logger: Logger,
): void {
  const { problem, headers } = problemFor(err, correlationId, method, url, logger);
  if (res.headersSent) {
    res.end();
    return;
  }
  const json = JSON.stringify(problem);
  res
    .writeHead(problem.status, {
      ...headers,
      'content-type': 'application/problem+json; charset=utf-8',
      'content-length': Buffer.byteLength(json),
    })
    .end(json);
}

/** Every error from a route handler, guard, pipe or interceptor leaves as problem+json. */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendProblem(exception, http.getRequest<GatewayRequest>(), http.getResponse<Response>(), this.logger);
  }
}

/** Express-level errors (body parser: bad JSON, too large) happen before Nest: same format. */
export function expressProblemHandler(logger: Logger) {
  return (err: unknown, req: GatewayRequest, res: Response, _next: NextFunction): void =>
    sendProblem(err, req, res, logger);
}
