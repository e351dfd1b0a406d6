import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Observable } from 'rxjs';
import {
  AppError,
  describeIssues,
  inputTextIssues,
  MAX_JSON_DEPTH,
  toFieldIssues,
  type FieldIssue,
  type RouteDef,
} from '@switchyard/contracts';
import { ROUTE_DEF, type GatewayRequest } from './endpoint';

type Where = 'params' | 'query' | 'body';

/**
 * Refuses, before any schema or lookup, what no route accepts anywhere: text with U+0000 or an
 * unpaired surrogate (Postgres stores neither) and nesting deeper than MAX_JSON_DEPTH.
 */
export function refuseHostileInput(parts: Partial<Record<Where, unknown>>): void {
  const issues = Object.entries(parts).flatMap(([where, value]) =>
    inputTextIssues(value, where, MAX_JSON_DEPTH),
  );
  if (issues.length)
    throw new AppError('validation_failed', `invalid request: ${describeIssues(issues)}`, { issues });
}

/**
 * Validates params, query and body (first refusing hostile text and nesting, then against the route's
 * zod schemas) before the handler runs; every bad field is listed (path prefixed with where it was:
 * `body.owner`, `query.limit`).
 */
@Injectable()
export class ValidationInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    const def = this.reflector.get<RouteDef | undefined>(ROUTE_DEF, ctx.getHandler());
    if (!def) return next.handle();
    const req = ctx.switchToHttp().getRequest<GatewayRequest>();
    const issues: FieldIssue[] = [];
    const { token: _token, ...query } = req.query as Record<string, unknown>;
    refuseHostileInput({ params: req.params, query, body: req.body });
    const check = (where: Where, schema: RouteDef['body'], value: unknown): unknown => {
      if (!schema) return undefined;
      const r = schema.safeParse(value);
      if (r.success) return r.data;
      for (const i of toFieldIssues(r.error))
        issues.push({ path: i.path ? `${where}.${i.path}` : where, message: i.message });
      return undefined;
    };
    const validated = {
      params: check('params', def.params, req.params),
      query: check('query', def.query, query),
      body: check('body', def.body, req.body ?? {}),
    };
    if (
      def.body === undefined &&
      req.body &&
      typeof req.body === 'object' &&
      Object.keys(req.body as object).length > 0 &&
      def.method === 'GET'
    ) {
      issues.push({ path: 'body', message: 'GET requests take no body' });
    }
    if (issues.length)
      throw new AppError('validation_failed', `invalid request: ${describeIssues(issues)}`, { issues });
    req.validated = validated;
    return next.handle();
  }
}
