import { Controller, Inject } from '@nestjs/common';
import {
  AppError,
  Rpc,
  type EvaluateBody,
  type Hook,
  type HookBody,
  type HookList,
  type PermissionDecision,
  type PermissionSettings,
  type RpcRequest,
} from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { requireOwner, type CallContext } from '@switchyard/server-observability';
import { BUS, Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { HooksService } from './hooks.service';
import { PermissionSettingsService } from './permission-settings.service';
import { PermissionsService } from './permissions.service';
import { toolCallOf } from '@switchyard/permissions';

/** `executor.permissions.*` and `executor.hooks.*`: the caller's rules and hooks, and the dry run. */
@Controller()
export class PermissionsHandler {
  constructor(
    private readonly permissions: PermissionsService,
    private readonly settings: PermissionSettingsService,
    private readonly hooks: HooksService,
    @Inject(BUS) private readonly bus: Bus,
  ) {}

  @RpcHandler(Rpc.executor.permissionsGet)
  get(
    @RpcPayload(Rpc.executor.permissionsGet) q: RpcRequest<typeof Rpc.executor.permissionsGet>,
    @Caller() ctx: CallContext,
  ): Promise<PermissionSettings> {
    return this.settings.settings(q.scope ?? 'owner', ctx);
  }

  @RpcHandler(Rpc.executor.permissionsPut)
  put(
    @RpcPayload(Rpc.executor.permissionsPut) req: RpcRequest<typeof Rpc.executor.permissionsPut>,
    @Caller() ctx: CallContext,
  ): Promise<PermissionSettings> {
    return this.settings.replace(
      req.scope ?? 'owner',
      req.rules as Parameters<PermissionSettingsService['replace']>[1],
      ctx,
    );
  }

  @RpcHandler(Rpc.executor.permissionsEvaluate)
  async evaluate(
    @RpcPayload(Rpc.executor.permissionsEvaluate) body: EvaluateBody,
    @Caller() ctx: CallContext,
  ): Promise<PermissionDecision> {
    const ownerId = requireOwner(ctx, 'rules');
    const { tools } = await this.bus.call(Rpc.registry.catalog, {}, { ctx });
    const tool = tools.find((t) => t.name === body.tool);
    if (!tool) throw new AppError('not_found', `no tool named ${body.tool} in your catalog`);
    await this.permissions.warm(ownerId);
    return this.permissions.decide({
      ownerId,
      call: toolCallOf(tool, body.arguments),
      step: { id: 'evaluate' },
      config: {
        permissionMode: body.permissionMode ?? 'ask',
        stepApproval: 'none',
        capabilityMode: 'read-write',
        unattended: body.unattended,
      },
      dryRun: true,
    });
  }

  @RpcHandler(Rpc.executor.hookList)
  async list(@RpcPayload(Rpc.executor.hookList) _: unknown, @Caller() ctx: CallContext): Promise<HookList> {
    return { items: await this.hooks.list(ctx) };
  }

  @RpcHandler(Rpc.executor.hookCreate)
  create(@RpcPayload(Rpc.executor.hookCreate) body: HookBody, @Caller() ctx: CallContext): Promise<Hook> {
    return this.hooks.create(body, ctx);
  }

  @RpcHandler(Rpc.executor.hookUpdate)
  update(
    @RpcPayload(Rpc.executor.hookUpdate) req: RpcRequest<typeof Rpc.executor.hookUpdate>,
    @Caller() ctx: CallContext,
  ): Promise<Hook> {
    return this.hooks.update(req.id, req.body as HookBody, ctx);
  }

  @RpcHandler(Rpc.executor.hookDelete)
  delete(
    @RpcPayload(Rpc.executor.hookDelete) req: RpcRequest<typeof Rpc.executor.hookDelete>,
    @Caller() ctx: CallContext,
  ): Promise<Hook> {
    return this.hooks.delete(req.id, ctx);
  }
}
