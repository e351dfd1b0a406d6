import {
  applyDecorators,
  type ArgumentsHost,
  Catch,
  createParamDecorator,
  type ExecutionContext,
  Inject,
  type PipeTransform,
  type RpcExceptionFilter,
  UseFilters,
} from '@nestjs/common';
import { MessagePattern, NatsContext, Payload } from '@nestjs/microservices';
import { type Observable, throwError } from 'rxjs';
import type { z } from 'zod';
import { AppError, parseOrThrow, type ErrorBody, type RpcContract } from '@switchyard/contracts';
import { databaseUnavailable } from '@switchyard/server-db';
import { callContextFromHeaders, refusedMessage } from '@switchyard/server-bus';
import type { CallContext, ContextStore, Logger } from '@switchyard/server-observability';
import { CONTEXT, LOGGER } from './tokens';

function callContextFrom(natsCtx: NatsContext | undefined): CallContext {
  return callContextFromHeaders(natsCtx?.getHeaders?.());
}

class ZodRpcPipe implements PipeTransform {
  constructor(private readonly schema: z.ZodType) {}
  transform(value: unknown): unknown {
    const refused = refusedMessage(value);
    if (refused) throw refused;
    return parseOrThrow(this.schema, value ?? {}, 'message');
  }
}

/**
 * The message body, validated against the contract's request schema (→ `validation_failed`); text
 * Postgres cannot store and nesting past MAX_MESSAGE_DEPTH are refused first, whoever sent them.
 */
export function RpcPayload(contract: RpcContract): ParameterDecorator {
  return Payload(new ZodRpcPipe(contract.request));
}

/** Who is calling: owner and role from NATS headers (set by the gateway), never from the body. */
export const Caller = createParamDecorator((_: unknown, ctx: ExecutionContext): CallContext => {
  return callContextFrom(ctx.switchToRpc().getContext<NatsContext>());
});

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
    const away = exception instanceof AppError ? undefined : databaseUnavailable(exception);
    if (exception instanceof AppError) {
      body = exception.toBody(correlationId);
      if (exception.code === 'internal')
        this.logger.error({ err: exception, correlationId }, exception.message);
    } else if (away) {
      this.logger.warn({ err: (exception as Error)?.message, correlationId }, away.message);
      body = away.toBody(correlationId);
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
 * Registers a NATS request handler for a contract, with errors sent back as data (the transport runs
 * it inside the caller's context and counts it in the metrics). Use with `@RpcPayload(contract)` and, where identity matters, `@Caller()`.
 */
export function RpcHandler<C extends RpcContract>(contract: C): RpcMethodDecorator<C> {
  const decorate = applyDecorators(MessagePattern(contract.subject), UseFilters(RpcErrorFilter));
  return (target, key, descriptor) => {
    decorate(target, key, descriptor);
  };
}

/**
 * Binds a handler to its contract by type: the method takes the contract's (parsed) request first
 * and answers what the response schema accepts, so a handler cannot drift from its contract.
 */
export type RpcMethodDecorator<C extends RpcContract> = <
  F extends (request: z.output<C['request']>, ...rest: never[]) => Awaitable<z.input<C['response']>>,
>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<F>,
) => void;

type Awaitable<T> = T | Promise<T>;
