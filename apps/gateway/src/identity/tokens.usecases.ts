import { Injectable } from '@nestjs/common';
import {
  AppError,
  type ApiTokenInfo,
  type CreatedToken,
  type CreateTokenBody,
  type TokenListQuery,
  type TokenPage,
} from '@switchyard/contracts';
import { IdentityRepository } from '@switchyard/server-db-identity';
import type { Principal } from '../auth/principal';
import { TokenVerifier } from '../auth/token-verifier';

const DAY_MS = 86_400_000;

/** Token management: anyone manages their own tokens; identity:token:admin manages everyone's. */
@Injectable()
export class TokenUseCases {
  constructor(
    private readonly identity: IdentityRepository,
    private readonly verifier: TokenVerifier,
  ) {}

  private isAdmin(caller: Principal): boolean {
    return caller.permissions.includes('identity:token:admin');
  }

  async create(caller: Principal, body: CreateTokenBody): Promise<CreatedToken> {
    const forOther = body.owner !== undefined && body.owner !== caller.owner.name;
    if ((forOther || body.role !== undefined) && !this.isAdmin(caller)) {
      throw new AppError(
        'forbidden',
        'creating tokens for other owners or choosing a role needs identity:token:admin',
        {
          details: { permission: 'identity:token:admin' },
        },
      );
    }
    let ownerId = caller.owner.id;
    if (forOther && body.owner) {
      const { owner } = await this.identity.ensureOwner(body.owner, body.role ?? 'user');
      if (body.role && owner.role !== body.role) {
        throw new AppError(
          'conflict',
          `owner ${owner.name} already exists with role ${owner.role}; roles are not changed by token creation`,
        );
      }
      ownerId = owner.id;
    }
    const expiresAt = body.expiresInDays ? new Date(Date.now() + body.expiresInDays * DAY_MS) : undefined;
    return this.identity.createToken(ownerId, { label: body.label, expiresAt });
  }

  async list(caller: Principal, query: TokenListQuery): Promise<TokenPage> {
    let ownerId = caller.owner.id;
    if (query.owner && query.owner !== caller.owner.name) {
      if (!this.isAdmin(caller))
        throw new AppError('forbidden', "listing another owner's tokens needs identity:token:admin");
      const owner = await this.identity.findOwnerByName(query.owner);
      if (!owner) throw new AppError('not_found', `owner ${query.owner} does not exist`);
      ownerId = owner.id;
    }
    return this.identity.listTokens(ownerId, { limit: query.limit, cursor: query.cursor });
  }

  async revoke(caller: Principal, tokenId: string): Promise<ApiTokenInfo> {
    const { info, digest } = await this.identity.revokeToken(
      tokenId,
      this.isAdmin(caller) ? null : caller.owner.id,
    );
    this.verifier.forget(digest);
    return info;
  }
}
