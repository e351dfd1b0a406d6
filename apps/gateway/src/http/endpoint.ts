import {
  applyDecorators,
  createParamDecorator,
  Delete,
  type ExecutionContext,
  Get,
  HttpCode,
  Patch,
  Post,
  Put,
  SetMetadata,
} from '@nestjs/common';
import type { Request } from 'express';
import type { z } from 'zod';
import type { RouteDef } from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';
import type { Principal } from '../auth/principal';

export const ROUTE_DEF = 'switchyard:route';

const METHOD = { GET: Get, POST: Post, PUT: Put, PATCH: Patch, DELETE: Delete } as const;

/** Registers a handler for a route from the contracts' route table (path, status, auth, schemas). */
export function Endpoint(def: RouteDef): MethodDecorator {
  const nestPath = def.path.replace(/\{(\w+)\}/g, ':$1');
  return applyDecorators(
    METHOD[def.method](nestPath),
    HttpCode(def.status ?? 200),
    SetMetadata(ROUTE_DEF, def),
  );
}

/** What the validation interceptor leaves on the request. */
export interface ValidatedInput {
  params: unknown;
  query: unknown;
  body: unknown;
}

export interface GatewayRequest extends Request {
  correlationId: string;
  principal?: Principal;
  validated?: ValidatedInput;
}

type Parts<R extends RouteDef> = {
  params: R['params'] extends z.ZodType ? z.output<R['params']> : undefined;
  query: R['query'] extends z.ZodType ? z.output<R['query']> : undefined;
  body: R['body'] extends z.ZodType ? z.output<R['body']> : undefined;
};
export type Input<R extends RouteDef> = Parts<R>;

/** The route's params, query and body after validation against its schemas. */
export const In = createParamDecorator((_: unknown, ctx: ExecutionContext): ValidatedInput => {
  const req = ctx.switchToHttp().getRequest<GatewayRequest>();
  return req.validated ?? { params: undefined, query: undefined, body: undefined };
});

/** The authenticated caller. Only on routes that are not public. */
export const Caller = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const req = ctx.switchToHttp().getRequest<GatewayRequest>();
  if (!req.principal) throw new Error('Caller used on a route without authentication');
  return req.principal;
});

export function callContext(principal: Principal | undefined, correlationId: string): CallContext {
  return principal
    ? { correlationId, ownerId: principal.owner.id, role: principal.owner.role }
    : { correlationId };
}

/** Request options that carry the HTTP caller to a service: `bus.call(X, payload, asCaller(req))`. */
export function asCaller(req: GatewayRequest): { ctx: CallContext } {
  return { ctx: callContext(req.principal, req.correlationId) };
}
