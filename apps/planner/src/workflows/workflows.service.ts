import { Inject, Injectable } from '@nestjs/common';
import {
  AppError,
  Events,
  Rpc,
  type CreateWorkflowBody,
  type ResolvedWorkflow,
  type ToolDescriptor,
  type UpdateWorkflowBody,
  type Workflow,
  type WorkflowListQuery,
  type WorkflowPage,
  type WorkflowTemplateList,
  type WorkflowVersionList,
} from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import {
  staleRevision,
  WorkflowsRepository,
  type VersionSelector,
  type WorkflowDefinition,
} from '@switchyard/server-db-workflows';
import { requireOwner, type CallContext } from '@switchyard/server-observability';
import { BUS } from '@switchyard/server-runtime';
import { checkDefinition, definitionRefused, type DefinitionInput } from './check-definition';
import { WORKFLOW_TEMPLATES } from './templates';
import { workflowEffect, workflowTool } from './workflow-tool';

const ownerOf = (ctx: CallContext): string => requireOwner(ctx, 'workflows');

/** The owner's workflow definitions: saved, validated, versioned, published as tools. */
@Injectable()
export class WorkflowsService {
  constructor(
    private readonly repo: WorkflowsRepository,
    @Inject(BUS) private readonly bus: Bus,
  ) {}

  private async catalog(ctx: CallContext): Promise<ToolDescriptor[]> {
    return (await this.bus.call(Rpc.registry.catalog, {}, { ctx })).tools;
  }

  /**
   * The plan to store (compiled from the graph, if any) once the definition passes every check, and
   * the catalog it was checked against.
   */
  private async checked(
    ctx: CallContext,
    input: DefinitionInput,
  ): Promise<Pick<WorkflowDefinition, 'plan' | 'graph'> & { tools: ToolDescriptor[] }> {
    let tools: ToolDescriptor[] = [];
    const result = await checkDefinition(input, async () => (tools = await this.catalog(ctx)));
    if (!result.ok) throw definitionRefused(result.issues);
    return { plan: result.plan, graph: result.graph, tools };
  }

  async create(ctx: CallContext, body: CreateWorkflowBody): Promise<Workflow> {
    const ownerId = ownerOf(ctx);
    const { plan, graph } = await this.checked(ctx, body);
    return this.repo.create(ownerId, {
      name: body.name,
      description: body.description,
      inputSchema: body.inputSchema,
      plan,
      graph,
    });
  }

  async list(ctx: CallContext, q: WorkflowListQuery): Promise<WorkflowPage> {
    const { items, total } = await this.repo.page(ownerOf(ctx), q);
    return { items, total, pageNum: q.pageNum, pageSize: q.pageSize };
  }

  get(ctx: CallContext, id: string): Promise<Workflow> {
    return this.repo.get(ownerOf(ctx), id);
  }

  async update(ctx: CallContext, id: string, body: UpdateWorkflowBody): Promise<Workflow> {
    const ownerId = ownerOf(ctx);
    const { plan, graph } = await this.checked(ctx, body);
    return this.repo.update(ownerId, id, body.revision, {
      name: body.name,
      description: body.description,
      inputSchema: body.inputSchema,
      plan,
      graph,
    });
  }

  async delete(ctx: CallContext, id: string, revision: number): Promise<Workflow> {
    const deleted = await this.repo.delete(ownerOf(ctx), id, revision);
    if (deleted.publishedVersion !== null) this.changed(deleted, false);
    return deleted;
  }

  copy(ctx: CallContext, id: string): Promise<Workflow> {
    return this.repo.copy(ownerOf(ctx), id);
  }

  /** Publishes the draft of `revision`, after checking it again: tools may have changed since it was saved. */
  async publish(ctx: CallContext, id: string, revision: number): Promise<Workflow> {
    const ownerId = ownerOf(ctx);
    const draft = await this.repo.get(ownerId, id);
    if (draft.revision !== revision) throw staleRevision(id, draft.revision, revision);
    const { plan, tools } = await this.checked(ctx, draft);
    const effect = workflowEffect(plan, new Map(tools.map((t) => [t.name, t.effect])));
    // Guarded by the revision, so what is snapshotted is the draft just checked.
    return this.changed(await this.repo.publish(ownerId, id, revision, effect), true);
  }

  async unpublish(ctx: CallContext, id: string, revision: number): Promise<Workflow> {
    return this.changed(await this.repo.unpublish(ownerOf(ctx), id, revision), false);
  }

  /** Tells MCP sessions of the owner that their tool list changed (at most once: plain NATS). */
  private changed(workflow: Workflow, published: boolean): Workflow {
    this.bus.emit(Events.workflowsChanged, { ownerId: workflow.ownerId, workflowId: workflow.id, published });
    return workflow;
  }

  async versions(ctx: CallContext, id: string): Promise<WorkflowVersionList> {
    return { items: await this.repo.versions(ownerOf(ctx), id) };
  }

  /** Copies version n into the draft, once it passes today's checks (its tools may be gone). */
  async restore(ctx: CallContext, id: string, n: number, revision: number): Promise<Workflow> {
    const ownerId = ownerOf(ctx);
    const [draft, version] = await Promise.all([
      this.repo.get(ownerId, id),
      this.repo.version(ownerId, id, n),
    ]);
    if (draft.revision !== revision) throw staleRevision(id, draft.revision, revision);
    await this.checked(ctx, version);
    return this.repo.restore(ownerId, id, n, revision);
  }

  templates(): WorkflowTemplateList {
    return { items: [...WORKFLOW_TEMPLATES] };
  }

  /**
   * A template saved as a new draft of the caller's, checked against their catalog like any save. A
   * template that needs plugins the caller's catalog lacks is refused by name, not by a list of
   * unknown tools.
   */
  async instantiate(ctx: CallContext, templateId: string, name?: string): Promise<Workflow> {
    const template = WORKFLOW_TEMPLATES.find((t) => t.id === templateId);
    if (!template) throw new AppError('not_found', `there is no workflow template ${templateId}`);
    if (template.requires?.length) {
      const have = new Set((await this.catalog(ctx)).map((t) => t.name));
      const missing = [
        ...new Set(template.graph.nodes.map((n) => n.data.tool).filter((t): t is string => !!t)),
      ].filter((t) => !have.has(t));
      if (missing.length) {
        const plugins = template.requires.join(', ');
        throw new AppError(
          'conflict',
          `the template ${template.name} needs the ${plugins} plugin${template.requires.length > 1 ? 's' : ''}: ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not in your catalog; an admin installs and enables it`,
          { details: { requires: template.requires, missingTools: missing } },
        );
      }
    }
    return this.create(ctx, {
      name: name ?? template.name,
      description: template.description,
      inputSchema: template.inputSchema as CreateWorkflowBody['inputSchema'],
      graph: structuredClone(template.graph),
    });
  }

  /** The definition to run; admins may resolve anyone's workflow. */
  resolve(ctx: CallContext, id: string, version: VersionSelector): Promise<ResolvedWorkflow> {
    return this.repo.resolve({ ownerId: ownerOf(ctx), admin: ctx.role === 'admin' }, id, version);
  }

  /**
   * The caller's published workflows as catalog tools: one query. The registry asks for these while
   * building its catalog, so this must not ask for the catalog in turn (each would wait on the other);
   * the effect was taken from the catalog at publish time.
   */
  async tools(ctx: CallContext): Promise<{ tools: ToolDescriptor[] }> {
    if (!ctx.ownerId) return { tools: [] };
    return { tools: (await this.repo.published(ctx.ownerId)).map(workflowTool) };
  }
}
