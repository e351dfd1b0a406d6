import { Controller, Inject, Req } from '@nestjs/common';
import {
  Routes,
  Rpc,
  type EvaluatedCalls,
  type Hook,
  type HookList,
  type PermissionDecision,
  type PermissionSettings,
} from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { BUS } from '@switchyard/server-runtime';
import { asCaller, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';

/** Permission rules, hooks and the gate's dry run (all owned by the executor). */
@Controller()
export class SettingsController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Endpoint(Routes.permissionsGet)
  permissions(
    @In() input: Input<typeof Routes.permissionsGet>,
    @Req() req: GatewayRequest,
  ): Promise<PermissionSettings> {
    return this.bus.call(Rpc.executor.permissionsGet, input.query, asCaller(req));
  }

  @Endpoint(Routes.permissionsPut)
  replace(
    @In() input: Input<typeof Routes.permissionsPut>,
    @Req() req: GatewayRequest,
  ): Promise<PermissionSettings> {
    return this.bus.call(
      Rpc.executor.permissionsPut,
      { scope: input.query.scope, rules: input.body },
      asCaller(req),
    );
  }

  @Endpoint(Routes.permissionsEvaluate)
  evaluate(
    @In() input: Input<typeof Routes.permissionsEvaluate>,
    @Req() req: GatewayRequest,
  ): Promise<PermissionDecision> {
    return this.bus.call(Rpc.executor.permissionsEvaluate, input.body, {
      ...asCaller(req),
      timeoutMs: 660_000, // hooks may take up to their own timeouts (at most 600 s)
    });
  }

  @Endpoint(Routes.permissionsEvaluateMany)
  evaluateMany(
    @In() input: Input<typeof Routes.permissionsEvaluateMany>,
    @Req() req: GatewayRequest,
  ): Promise<EvaluatedCalls> {
    return this.bus.call(Rpc.executor.permissionsEvaluateMany, input.body, {
      ...asCaller(req),
      timeoutMs: 660_000, // the calls' hooks run side by side, each within its own timeout
    });
  }

  @Endpoint(Routes.hookList)
  hooks(@Req() req: GatewayRequest): Promise<HookList> {
    return this.bus.call(Rpc.executor.hookList, {}, asCaller(req));
  }

  @Endpoint(Routes.hookCreate)
  create(@In() input: Input<typeof Routes.hookCreate>, @Req() req: GatewayRequest): Promise<Hook> {
    return this.bus.call(Rpc.executor.hookCreate, input.body, asCaller(req));
  }

  @Endpoint(Routes.hookUpdate)
  update(@In() input: Input<typeof Routes.hookUpdate>, @Req() req: GatewayRequest): Promise<Hook> {
    return this.bus.call(Rpc.executor.hookUpdate, { id: input.params.id, body: input.body }, asCaller(req));
  }

  @Endpoint(Routes.hookDelete)
  delete(@In() input: Input<typeof Routes.hookDelete>, @Req() req: GatewayRequest): Promise<Hook> {
    return this.bus.call(Rpc.executor.hookDelete, { id: input.params.id }, asCaller(req));
  }
}
