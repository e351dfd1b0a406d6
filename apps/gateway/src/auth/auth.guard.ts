import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppError, type RouteDef } from '@switchyard/contracts';
import { ROUTE_DEF, type GatewayRequest } from '../http/endpoint';
import { TokenVerifier } from './token-verifier';

/** Reads the token from `X-Switchyard-Token` or `Authorization: Bearer`, and `?token=` where allowed. */
export function presentedToken(req: GatewayRequest, allowQuery: boolean): string | undefined {
  const header = req.headers['x-switchyard-token'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1];
  }
  if (allowQuery && typeof req.query['token'] === 'string' && req.query['token']) return req.query['token'];
  return undefined;
}

/**
 * Every route is closed unless its route definition says `public`. Unknown token → 401; a known
 * owner whose role lacks the route's permission → 403.
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
    if (!def) return true; // probes and metrics: not part of the API
    if (def.auth === 'public') return true;
    const req = ctx.switchToHttp().getRequest<GatewayRequest>();
    if (!def.queryToken && typeof req.query['token'] === 'string' && !presentedToken(req, false)) {
      throw new AppError(
        'unauthenticated',
        'a token in the query string is accepted only on the event stream; send the X-Switchyard-Token header',
      );
    }
    const token = presentedToken(req, def.queryToken === true);
    if (!token) {
      throw new AppError(
        'unauthenticated',
        'missing API token: send X-Switchyard-Token: <token> or Authorization: Bearer <token>',
      );
    }
    if (token.length > 512) throw new AppError('unauthenticated', 'invalid API token');
    const principal = await this.verifier.verify(token);
    if (!principal) throw new AppError('unauthenticated', 'invalid, expired or revoked API token');
    req.principal = principal;
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
    return true;
  }
}
