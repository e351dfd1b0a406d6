import { Controller, Inject, Req } from '@nestjs/common';
import {
  Routes,
  Rpc,
  type InputOptions,
  type StartedRun,
  type Workflow,
  type WorkflowPage,
  type WorkflowTemplateList,
  type WorkflowVersionList,
} from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { BUS } from '@switchyard/server-runtime';
import { asCaller, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';

/** Saved workflows (owned by the planner); running one goes to the executor. */
@Controller()
export class WorkflowsController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Endpoint(Routes.workflowCreate)
  create(@In() input: Input<typeof Routes.workflowCreate>, @Req() req: GatewayRequest): Promise<Workflow> {
    return this.bus.call(Rpc.workflows.create, input.body, asCaller(req));
  }

  @Endpoint(Routes.workflowList)
  list(@In() input: Input<typeof Routes.workflowList>, @Req() req: GatewayRequest): Promise<WorkflowPage> {
    return this.bus.call(Rpc.workflows.list, input.query, asCaller(req));
  }

  // Before `workflowGet`: express matches in registration order, and /templates is not a workflow id.
  @Endpoint(Routes.workflowTemplates)
  templates(@Req() req: GatewayRequest): Promise<WorkflowTemplateList> {
    return this.bus.call(Rpc.workflows.templates, {}, asCaller(req));
  }

  @Endpoint(Routes.workflowInstantiate)
  instantiate(
    @In() input: Input<typeof Routes.workflowInstantiate>,
    @Req() req: GatewayRequest,
  ): Promise<Workflow> {
    return this.bus.call(Rpc.workflows.instantiate, { id: input.params.id, body: input.body }, asCaller(req));
  }

  @Endpoint(Routes.workflowInputOptions)
  inputOptions(
    @In() input: Input<typeof Routes.workflowInputOptions>,
    @Req() req: GatewayRequest,
  ): Promise<InputOptions> {
    return this.bus.call(Rpc.workflows.inputOptions, { ...input.params, ...input.query }, asCaller(req));
  }

  @Endpoint(Routes.workflowGet)
  get(@In() input: Input<typeof Routes.workflowGet>, @Req() req: GatewayRequest): Promise<Workflow> {
    return this.bus.call(Rpc.workflows.get, { id: input.params.id }, asCaller(req));
  }

  @Endpoint(Routes.workflowUpdate)
  update(@In() input: Input<typeof Routes.workflowUpdate>, @Req() req: GatewayRequest): Promise<Workflow> {
    return this.bus.call(Rpc.workflows.update, { id: input.params.id, body: input.body }, asCaller(req));
  }

  @Endpoint(Routes.workflowDelete)
  delete(@In() input: Input<typeof Routes.workflowDelete>, @Req() req: GatewayRequest): Promise<Workflow> {
    return this.bus.call(
      Rpc.workflows.delete,
      { id: input.params.id, revision: input.query.revision },
      asCaller(req),
    );
  }

  @Endpoint(Routes.workflowCopy)
  copy(@In() input: Input<typeof Routes.workflowCopy>, @Req() req: GatewayRequest): Promise<Workflow> {
    return this.bus.call(Rpc.workflows.copy, { id: input.params.id }, asCaller(req));
  }

  @Endpoint(Routes.workflowPublish)
  publish(@In() input: Input<typeof Routes.workflowPublish>, @Req() req: GatewayRequest): Promise<Workflow> {
    return this.bus.call(Rpc.workflows.publish, { id: input.params.id, ...input.body }, asCaller(req));
  }

  @Endpoint(Routes.workflowUnpublish)
  unpublish(
    @In() input: Input<typeof Routes.workflowUnpublish>,
    @Req() req: GatewayRequest,
  ): Promise<Workflow> {
    return this.bus.call(Rpc.workflows.unpublish, { id: input.params.id, ...input.body }, asCaller(req));
  }

  @Endpoint(Routes.workflowVersions)
  versions(
    @In() input: Input<typeof Routes.workflowVersions>,
    @Req() req: GatewayRequest,
  ): Promise<WorkflowVersionList> {
    return this.bus.call(Rpc.workflows.versions, { id: input.params.id }, asCaller(req));
  }

  @Endpoint(Routes.workflowRestore)
  restore(@In() input: Input<typeof Routes.workflowRestore>, @Req() req: GatewayRequest): Promise<Workflow> {
    return this.bus.call(
      Rpc.workflows.restore,
      { id: input.params.id, n: input.params.n, ...input.body },
      asCaller(req),
    );
  }

  @Endpoint(Routes.workflowRun)
  run(@In() input: Input<typeof Routes.workflowRun>, @Req() req: GatewayRequest): Promise<StartedRun> {
    return this.bus.call(Rpc.workflows.run, { id: input.params.id, body: input.body }, asCaller(req));
  }
}
