import { type ArgumentsHost, Catch, type ExceptionFilter, Inject } from '@nestjs/common';
import type { NextFunction, Response } from 'express';
import type { Logger } from '@switchyard/server-observability';
import { LOGGER } from '@switchyard/server-runtime';
import type { GatewayRequest } from './endpoint';
import { toProblem } from './problem';

export function sendProblem(err: unknown, req: GatewayRequest, res: Response, logger: Logger): void {
  const correlationId = req.correlationId ?? 'unknown';
  const { problem, bug } = toProblem(err, correlationId, req.originalUrl?.split('?')[0]);
  if (bug)
    logger.error(
      { err, correlationId, method: req.method, url: req.originalUrl },
      'request failed with an unexpected error',
    );
  else if (problem.status >= 500)
    logger.warn({ code: problem.code, correlationId, detail: problem.detail }, 'request failed');
  if (res.headersSent) {
    res.end();
    return;
  }
  if (problem.code === 'capacity_exceeded') {
    // The refusing service's hint (details.retryAfterSeconds), else a second.
    const hint = problem.details?.['retryAfterSeconds'];
    res.setHeader('Retry-After', String(typeof hint === 'number' && hint >= 1 ? Math.ceil(hint) : 1));
  }
  res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
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
