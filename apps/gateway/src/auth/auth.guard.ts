import type { IncomingHttpHeaders } from 'node:http';
import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppError, type RouteDef } from '@switchyard/contracts';
import { PUBLIC_ROUTE } from '@switchyard/server-runtime';
import { ROUTE_DEF, type GatewayRequest } from '../http/endpoint';
import type { Principal } from './principal';
import { TokenVerifier } from './token-verifier';

/** Reads the token from `X-Switchyard-Token` or `Authorization: Bearer`, and `?token=` where allowed. */
export function presentedToken(
  headers: IncomingHttpHeaders,
  queryToken: unknown,
  allowQuery: boolean,
): string | undefined {
  const header = headers['x-switchyard-token'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  const auth = headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1];
  }
  if (allowQuery && typeof queryToken === 'string' && queryToken) return queryToken;
  return undefined;
}

/**
 * The caller of a non-public route, or an AppError: no or unknown token → unauthenticated (401); a
 * known owner whose role lacks the route's permission → forbidden (403). Shared by the guard and
 * the stream's fast path.
 */
export async function authenticate(
  def: RouteDef,
  verifier: TokenVerifier,
  headers: IncomingHttpHeaders,
  queryToken: unknown,
): Promise<Principal> {
  if (!def.queryToken && typeof queryToken === 'string' && !presentedToken(headers, undefined, false)) {
    throw new AppError(
      'unauthenticated',
      'a token in the query string is accepted only on the event streams; send the X-Switchyard-Token header',
    );
  }
  const token = presentedToken(headers, queryToken, def.queryToken === true);
  if (!token) {
    throw new AppError(
      'unauthenticated',
      'missing API token: send X-Switchyard-Token: <token> or Authorization: Bearer <token>',
    );
  }
  if (token.length > 512) throw new AppError('unauthenticated', 'invalid API token');
  const principal = await verifier.verify(token);
  if (!principal) throw new AppError('unauthenticated', 'invalid, expired or revoked API token');
  if (typeof def.auth === 'object') {
    const needed = 'permission' in def.auth ? [def.auth.permission] : def.auth.anyOf;
    if (!needed.some((p) => principal.permissions.includes(p))) {
      const what =
        needed.length === 1 ? `the ${needed[0]} permission` : `one of the permissions ${needed.join(', ')}`;
      throw new AppError(
        'forbidden',
        `this needs ${what}, which role ${principal.owner.role} does not have`,
        {
          details: { permission: needed.length === 1 ? needed[0] : needed, role: principal.owner.role },
        },
      );
    }
  }
  return principal;
}

/**
 * Every handler is closed unless its route definition says `public` or, for handlers outside the
 * route table (probes, the API document), it is marked `@Public()`. A handler with neither is denied
 * to everyone, token or not, as if it did not exist: forgetting a mark closes a route, never opens it.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly verifier: TokenVerifier,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (ctx.getType() !== 'http') return true;
    const def = this.reflector.get<RouteDef | undefined>(ROUTE_DEF, ctx.getHandler());
    if (!def) {
      if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, [ctx.getHandler(), ctx.getClass()]))
        return true;
      throw new AppError('not_found', 'no such route; see /api/docs');
    }
    if (def.auth === 'public') return true;
    const req = ctx.switchToHttp().getRequest<GatewayRequest>();
    req.principal = await authenticate(def, this.verifier, req.headers, req.query['token']);
    return true;
  }
}
