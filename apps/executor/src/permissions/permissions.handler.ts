import { Controller, Inject } from '@nestjs/common';
import {
  AppError,
  Rpc,
  type EvaluateBody,
  type EvaluatedCalls,
  type EvaluateManyBody,
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

/** How many calls of one batch the gate asks about at a time (see `dryRun`). */
const DRY_RUNS_AT_ONCE = 6;

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
    const [answer] = await this.dryRun([body], body, ctx);
    if (answer instanceof AppError) throw answer;
    return answer as PermissionDecision;
  }

  @RpcHandler(Rpc.executor.permissionsEvaluateMany)
  async evaluateMany(
    @RpcPayload(Rpc.executor.permissionsEvaluateMany) body: EvaluateManyBody,
    @Caller() ctx: CallContext,
  ): Promise<EvaluatedCalls> {
    const answers = await this.dryRun(body.calls, body, ctx);
    return {
      items: answers.map((a) =>
        a instanceof AppError ? { error: { code: a.code, message: a.message } } : a,
      ),
    };
  }

  /**
   * The gate's dry run for each call, in order, against one read of the caller's catalog. At most
   * DRY_RUNS_AT_ONCE at a time: each may run the pre-tool-use hooks (processes, HTTP requests). A
   * call refused with an AppError (no such tool, a hook that failed closed) answers that error in
   * its place; anything else fails the whole ask.
   */
  private async dryRun(
    calls: ReadonlyArray<Pick<EvaluateBody, 'tool' | 'arguments'>>,
    how: Pick<EvaluateBody, 'permissionMode' | 'unattended'>,
    ctx: CallContext,
  ): Promise<Array<PermissionDecision | AppError>> {
    const ownerId = requireOwner(ctx, 'rules');
    const { tools } = await this.bus.call(Rpc.registry.catalog, {}, { ctx });
    const byName = new Map(tools.map((t) => [t.name, t]));
    await this.permissions.warm(ownerId);
    const decide = async (c: Pick<EvaluateBody, 'tool' | 'arguments'>) => {
      const tool = byName.get(c.tool);
      if (!tool) return new AppError('not_found', `no tool named ${c.tool} in your catalog`);
      try {
        return await this.permissions.decide({
          ownerId,
          call: toolCallOf(tool, c.arguments),
          step: { id: 'evaluate' },
          config: {
            permissionMode: how.permissionMode ?? 'ask',
            stepApproval: 'none',
            capabilityMode: 'read-write',
            unattended: how.unattended,
          },
          dryRun: true,
        });
      } catch (err) {
        if (err instanceof AppError) return err;
        throw err;
      }
    };
    const answers: Array<PermissionDecision | AppError> = [];
    let next = 0;
    const lane = async () => {
      while (next < calls.length) {
        const i = next++;
        answers[i] = await decide(calls[i] as Pick<EvaluateBody, 'tool' | 'arguments'>);
      }
    };
    await Promise.all(Array.from({ length: Math.min(DRY_RUNS_AT_ONCE, calls.length) }, lane));
    return answers;
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
