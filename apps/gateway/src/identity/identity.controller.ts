import { Controller } from '@nestjs/common';
import { Routes, type ApiTokenInfo, type CreatedToken, type Me, type TokenPage } from '@switchyard/contracts';
import type { Principal } from '../auth/principal';
import { Caller, Endpoint, In, type Input } from '../http/endpoint';
import { TokenUseCases } from './tokens.usecases';

@Controller()
export class IdentityController {
  constructor(private readonly tokens: TokenUseCases) {}

  @Endpoint(Routes.me)
  me(@Caller() caller: Principal): Me {
    return { owner: caller.owner, permissions: [...caller.permissions], tokenId: caller.tokenId };
  }

  @Endpoint(Routes.createToken)
  create(@Caller() caller: Principal, @In() input: Input<typeof Routes.createToken>): Promise<CreatedToken> {
    return this.tokens.create(caller, input.body);
  }

  @Endpoint(Routes.listTokens)
  list(@Caller() caller: Principal, @In() input: Input<typeof Routes.listTokens>): Promise<TokenPage> {
    return this.tokens.list(caller, input.query);
  }

  @Endpoint(Routes.revokeToken)
  revoke(@Caller() caller: Principal, @In() input: Input<typeof Routes.revokeToken>): Promise<ApiTokenInfo> {
    return this.tokens.revoke(caller, input.params.id);
  }
}
