import {
  applyDecorators,
  UseFilters,
  UseInterceptors,
  type ArgumentsHost,
  Catch,
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  type NestInterceptor,
  type PipeTransform,
  createParamDecorator,
  type RpcExceptionFilter,
} from '@nestjs/common';
import { MessagePattern, NatsContext, Payload } from '@nestjs/microservices';
import { Observable, throwError } from 'rxjs';
import type { z } from 'zod';
import {
  AppError,
  Headers,
  parseOrThrow,
  Role,
  type ErrorBody,
  type RpcContract,
} from '@switchyard/contracts';
import {
  correlationIdFrom,
  type CallContext,
  type ContextStore,
  type Logger,
  type Metrics,
} from '@switchyard/server-observability';
import { CONTEXT, LOGGER, METRICS } from './tokens';

function callContextFrom(natsCtx: NatsContext | undefined): CallContext {
  const h = natsCtx?.getHeaders?.();
  const role = Role.safeParse(h?.get(Headers.role)).data;
  const ownerId = h?.get(Headers.ownerId) || undefined;
  return {
    correlationId: correlationIdFrom(h?.get(Headers.correlationId) || undefined),
    ...(ownerId ? { ownerId } : {}),
    ...(role ? { role } : {}),
  };
}

class ZodRpcPipe implements PipeTransform {
  constructor(private readonly schema: z.ZodType) {}
  transform(value: unknown): unknown {
    return parseOrThrow(this.schema, value ?? {}, 'message');
  }
}

/** The message body, validated against the contract's request schema (→ `validation_failed`). */
export function RpcPayload(contract: RpcContract): ParameterDecorator {
  return Payload(new ZodRpcPipe(contract.request));
}

/** Who is calling: owner and role from NATS headers (set by the gateway), never from the body. */
export const Caller = createParamDecorator((_: unknown, ctx: ExecutionContext): CallContext => {
  return callContextFrom(ctx.switchToRpc().getContext<NatsContext>());
});

/**
 * Runs every NATS handler inside the caller's context (correlation id in logs and onward calls) and
 * counts it in the metrics.
 */
@Injectable()
export class RpcContextInterceptor implements NestInterceptor {
  constructor(
    @Inject(CONTEXT) private readonly store: ContextStore,
    @Inject(METRICS) private readonly metrics: Metrics,
  ) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (ctx.getType() !== 'rpc') return next.handle();
    const natsCtx = ctx.switchToRpc().getContext<NatsContext>();
    const subject = natsCtx.getSubject();
    const call = callContextFrom(natsCtx);
    const end = this.metrics.rpcDuration.startTimer({ subject });
    return new Observable((subscriber) =>
      this.store.run(call, () =>
        next.handle().subscribe({
          next: (v) => subscriber.next(v),
          error: (err: unknown) => {
            end();
            this.metrics.rpcRequests.inc({
              subject,
              outcome: err instanceof AppError ? err.code : 'internal',
            });
            subscriber.error(err);
          },
          complete: () => {
            end();
            this.metrics.rpcRequests.inc({ subject, outcome: 'ok' });
            subscriber.complete();
          },
        }),
      ),
    );
  }
}

/**
 * Errors leave a service as data (`{code, message, details?}`). An AppError keeps its code; anything
 * else is a bug: logged with its stack here, and sent as `internal` with the correlation id only.
 */
@Catch()
export class RpcErrorFilter implements RpcExceptionFilter<unknown> {
  constructor(
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(CONTEXT) private readonly store: ContextStore,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): Observable<never> {
    const natsCtx = host.getType() === 'rpc' ? host.switchToRpc().getContext<NatsContext>() : undefined;
    const correlationId = this.store.correlationId() ?? callContextFrom(natsCtx).correlationId;
    let body: ErrorBody;
    if (exception instanceof AppError) {
      body = exception.toBody(correlationId);
      if (exception.code === 'internal')
        this.logger.error({ err: exception, correlationId }, exception.message);
    } else {
      this.logger.error(
        { err: exception, correlationId, subject: natsCtx?.getSubject() },
        `unhandled error in handler: ${(exception as Error)?.message ?? String(exception)}`,
      );
      body = { code: 'internal', message: `internal error (correlation id ${correlationId})`, correlationId };
    }
    return throwError(() => body);
  }
}

/**
 * Registers a NATS request handler for a contract, inside the caller's context and with errors sent
 * back as data. Use with `@RpcPayload(contract)` and, where identity matters, `@Caller()`.
 */
export function RpcHandler(contract: RpcContract): MethodDecorator {
  return applyDecorators(
    MessagePattern(contract.subject),
    UseInterceptors(RpcContextInterceptor),
    UseFilters(RpcErrorFilter),
  );
}
