import { Controller } from '@nestjs/common';
import type { z } from 'zod';
import {
  Rpc,
  type ResolvedWorkflow,
  type ToolDescriptor,
  type Workflow,
  type WorkflowPage,
  type WorkflowTemplateList,
  type WorkflowVersionList,
} from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';
import { Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { WorkflowsService } from './workflows.service';

type In<K extends keyof typeof Rpc.workflows> = z.output<(typeof Rpc.workflows)[K]['request']>;

/** `planner.workflows.*`: the caller's workflow definitions, their versions, and their catalog tools. */
@Controller()
export class WorkflowsHandler {
  constructor(private readonly workflows: WorkflowsService) {}

  @RpcHandler(Rpc.workflows.create)
  create(
    @RpcPayload(Rpc.workflows.create) body: In<'create'>,
    @Caller() ctx: CallContext,
  ): Promise<Workflow> {
    return this.workflows.create(ctx, body);
  }

  @RpcHandler(Rpc.workflows.list)
  list(@RpcPayload(Rpc.workflows.list) q: In<'list'>, @Caller() ctx: CallContext): Promise<WorkflowPage> {
    return this.workflows.list(ctx, q);
  }

  @RpcHandler(Rpc.workflows.get)
  get(@RpcPayload(Rpc.workflows.get) q: In<'get'>, @Caller() ctx: CallContext): Promise<Workflow> {
    return this.workflows.get(ctx, q.id);
  }

  @RpcHandler(Rpc.workflows.update)
  update(@RpcPayload(Rpc.workflows.update) q: In<'update'>, @Caller() ctx: CallContext): Promise<Workflow> {
    return this.workflows.update(ctx, q.id, q.body);
  }

  @RpcHandler(Rpc.workflows.delete)
  delete(@RpcPayload(Rpc.workflows.delete) q: In<'delete'>, @Caller() ctx: CallContext): Promise<Workflow> {
    return this.workflows.delete(ctx, q.id, q.revision);
  }

  @RpcHandler(Rpc.workflows.copy)
  copy(@RpcPayload(Rpc.workflows.copy) q: In<'copy'>, @Caller() ctx: CallContext): Promise<Workflow> {
    return this.workflows.copy(ctx, q.id);
  }

  @RpcHandler(Rpc.workflows.publish)
  publish(
    @RpcPayload(Rpc.workflows.publish) q: In<'publish'>,
    @Caller() ctx: CallContext,
  ): Promise<Workflow> {
    return this.workflows.publish(ctx, q.id, q.revision);
  }

  @RpcHandler(Rpc.workflows.unpublish)
  unpublish(
    @RpcPayload(Rpc.workflows.unpublish) q: In<'unpublish'>,
    @Caller() ctx: CallContext,
  ): Promise<Workflow> {
    return this.workflows.unpublish(ctx, q.id, q.revision);
  }

  @RpcHandler(Rpc.workflows.versions)
  versions(
    @RpcPayload(Rpc.workflows.versions) q: In<'versions'>,
    @Caller() ctx: CallContext,
  ): Promise<WorkflowVersionList> {
    return this.workflows.versions(ctx, q.id);
  }

  @RpcHandler(Rpc.workflows.restore)
  restore(
    @RpcPayload(Rpc.workflows.restore) q: In<'restore'>,
    @Caller() ctx: CallContext,
  ): Promise<Workflow> {
    return this.workflows.restore(ctx, q.id, q.n, q.revision);
  }

  @RpcHandler(Rpc.workflows.templates)
  templates(@RpcPayload(Rpc.workflows.templates) _: In<'templates'>): WorkflowTemplateList {
    return this.workflows.templates();
  }

  @RpcHandler(Rpc.workflows.instantiate)
  instantiate(
    @RpcPayload(Rpc.workflows.instantiate) q: In<'instantiate'>,
    @Caller() ctx: CallContext,
  ): Promise<Workflow> {
    return this.workflows.instantiate(ctx, q.id, q.body.name);
  }

  @RpcHandler(Rpc.workflows.resolve)
  resolve(
    @RpcPayload(Rpc.workflows.resolve) q: In<'resolve'>,
    @Caller() ctx: CallContext,
  ): Promise<ResolvedWorkflow> {
    return this.workflows.resolve(ctx, q.id, q.version);
  }

  @RpcHandler(Rpc.workflows.tools)
  tools(
    @RpcPayload(Rpc.workflows.tools) _: In<'tools'>,
    @Caller() ctx: CallContext,
  ): Promise<{ tools: ToolDescriptor[] }> {
    return this.workflows.tools(ctx);
  }
}
