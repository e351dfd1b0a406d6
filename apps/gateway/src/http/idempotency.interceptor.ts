import { createHash } from 'node:crypto';
import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { AppError, type RouteDef } from '@switchyard/contracts';
import { IdempotencyRepository } from '@switchyard/server-db-identity';
import { ROUTE_DEF, type GatewayRequest } from './endpoint';

const HEADER = 'idempotency-key';
/** A repeat of a request still running waits this long for its answer. */
const WAIT_MS = 30_000;
const POLL_MS = 25;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `Idempotency-Key` on the start routes: the first request with a key runs and its answer is kept;
 * a repeat with the same key and the same body (path parameters included) gets that answer, while
 * the first is still running it waits for it; the same key with another body is 409. A failed first
 * attempt keeps nothing, so a retry runs again. Keys are per owner and route, for 24 hours.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly repo: IdempotencyRepository,
  ) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    const def = this.reflector.get<RouteDef | undefined>(ROUTE_DEF, ctx.getHandler());
    const req = ctx.switchToHttp().getRequest<GatewayRequest>();
    const key = req.headers[HEADER];
    if (!def?.idempotencyKey || key === undefined || !req.principal) return next.handle();
    if (typeof key !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(key))
      throw new AppError('validation_failed', 'Idempotency-Key must be 1–255 printable ASCII characters', {
        issues: [{ path: 'headers.idempotency-key', message: '1–255 printable ASCII characters' }],
      });
    const ownerId = req.principal.owner.id;
    const route = `${def.method} ${def.path}`;
    const digest = createHash('sha256')
      .update(JSON.stringify({ params: req.params ?? {}, body: req.body ?? {} }))
      .digest('hex');
    return from(
      this.once(ownerId, route, key, digest, def.status ?? 200, () => lastValueFrom(next.handle())),
    );
  }

  private async once(
    ownerId: string,
    route: string,
    key: string,
    digest: string,
    status: number,
    run: () => Promise<unknown>,
  ): Promise<unknown> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const claim = await this.repo.claim(ownerId, route, key, digest);
      switch (claim.kind) {
        case 'mine': {
          let answer: unknown;
          try {
            answer = await run();
          } catch (err) {
            await this.repo.release(ownerId, route, key);
            throw err;
          }
          await this.repo.complete(ownerId, route, key, status, answer);
          return answer;
        }
        case 'done':
          return claim.response;
        case 'other-body':
          throw new AppError(
            'conflict',
            'this Idempotency-Key was used with another request body; use a new key for a new request',
          );
        case 'pending':
          if (Date.now() > deadline)
            throw new AppError(
              'conflict',
              'a request with this Idempotency-Key is still running; retry later',
            );
          await pause(POLL_MS);
      }
    }
  }
}
