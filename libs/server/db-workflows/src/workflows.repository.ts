import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  AppError,
  workflowToolName,
  type AgentPlan,
  type ResolvedWorkflow,
  type RunStatus,
  type ToolEffect,
  type Workflow,
  type WorkflowSummary,
  type WorkflowVersion,
} from '@switchyard/contracts';
import type { PrismaClient } from '@prisma/client';
import { likePattern, PRISMA } from '@switchyard/server-db';

/** What a save stores: the plan already compiled and validated, the graph verbatim. */
export interface WorkflowDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  readonly plan: AgentPlan;
  readonly graph: unknown;
}

export interface WorkflowListOptions {
  readonly pageNum: number;
  readonly pageSize: number;
  readonly q?: string | undefined;
}

/** A published workflow as the catalog needs it: the published version's definition. */
export interface PublishedWorkflow {
  readonly workflowId: string;
  readonly version: number;
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  readonly plan: AgentPlan;
  /** Taken from the tools' effects when the version was published. */
  readonly effect: ToolEffect;
}

/** Who resolves: the owner, or an admin (who may resolve anyone's workflow; say so explicitly). */
export interface ResolveScope {
  readonly ownerId: string;
  readonly admin: boolean;
}

export type VersionSelector = number | 'draft' | 'published';

interface WorkflowDbRow {
  id: string;
  owner_id: string;
  name: string;
  description: string;
  revision: number;
  published_version: number | null;
  created_at: Date;
  updated_at: Date;
  input_schema?: Record<string, unknown>;
  plan?: AgentPlan;
  graph?: unknown;
  last_run?: { id: string; status: RunStatus; createdAt: string } | null;
}

interface VersionDbRow {
  workflow_id: string;
  version: number;
  name: string;
  description: string;
  created_at: Date;
  input_schema?: Record<string, unknown>;
  plan?: AgentPlan;
  graph?: unknown;
  effect?: ToolEffect;
}

const BASE_COLUMNS = [
  'id',
  'owner_id',
  'name',
  'description',
  'revision',
  'published_version',
  'created_at',
  'updated_at',
];

/**
 * The newest run the owner started from the workflow `t` (runs are the executor's: read here, never
 * written), through the run (owner_id, workflow_id, created_at) index: one lookup per row, in the
 * same statement.
 */
const lastRun = (t: string) =>
  `(SELECT json_build_object('id', r.id, 'status', r.status, 'createdAt', r.created_at)
      FROM run r WHERE r.owner_id = ${t}.owner_id AND r.workflow_id = ${t}.id
     ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS last_run`;

/** The summary's columns of table (or alias) `t`. */
const summaryColumns = (t: string) => [...BASE_COLUMNS.map((c) => `${t}.${c}`), lastRun(t)].join(', ');
/** Every column of table (or alias) `t`. */
const columns = (t: string) =>
  `${summaryColumns(t)}, ${['input_schema', 'plan', 'graph'].map((c) => `${t}.${c}`).join(', ')}`;
const COLUMNS = columns('workflow');

const iso = (d: Date): string => new Date(d).toISOString();

function toSummary(r: WorkflowDbRow): WorkflowSummary {
  return {
    id: r.id,
    ownerId: r.owner_id,
    name: r.name,
    description: r.description,
    revision: r.revision,
    publishedVersion: r.published_version,
    tool: r.published_version === null ? null : workflowToolName(r.id),
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
    lastRun: r.last_run
      ? { id: r.last_run.id, status: r.last_run.status, createdAt: iso(new Date(r.last_run.createdAt)) }
      : null,
  };
}

function toWorkflow(r: WorkflowDbRow): Workflow {
  return {
    ...toSummary(r),
    inputSchema: r.input_schema ?? {},
    plan: r.plan as AgentPlan,
    graph: r.graph ?? null,
  };
}

function toVersion(r: VersionDbRow): WorkflowVersion {
  return {
    workflowId: r.workflow_id,
    version: r.version,
    name: r.name,
    description: r.description,
    inputSchema: r.input_schema ?? {},
    plan: r.plan as AgentPlan,
    graph: r.graph ?? null,
    createdAt: iso(r.created_at),
  };
}

/** `%`, `_` and `\` stand for themselves in a search. */

/** JSON for a jsonb parameter; a missing graph is SQL NULL, not JSON null. */
function jsonb(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

export function notFound(id: string): AppError {
  return new AppError('not_found', `workflow ${id} does not exist`);
}

export function staleRevision(id: string, current: number, edited: number): AppError {
  return new AppError(
    'conflict',
    `workflow ${id} is at revision ${current}; you edited revision ${edited} — reload and try again`,
    { details: { currentRevision: current } },
  );
}

export function noVersion(id: string, n: number): AppError {
  return new AppError('not_found', `workflow ${id} has no version ${n}`);
}

export function notPublished(id: string): AppError {
  return new AppError('conflict', `workflow ${id} is not published`);
}

/**
 * Workflow definitions and their published versions, written by the planner. Every method takes the
 * owner; another owner's workflow is "not found". Changes are optimistic: each names the revision it
 * is based on, and is one statement guarded by that revision, so of two edits of the same revision
 * exactly one wins and the other learns the current revision.
 */
@Injectable()
export class WorkflowsRepository {
  constructor(@Inject(PRISMA) private readonly prisma: PrismaClient) {}

  private query<T>(text: string, ...values: unknown[]): Promise<T[]> {
    return this.prisma.$queryRawUnsafe<T[]>(text, ...values);
  }

  /** Why a guarded change of `id` matched no row: not the owner's (or gone), or a newer revision. */
  private async refusal(ownerId: string, id: string, revision: number): Promise<AppError | undefined> {
    const [row] = await this.query<{ owner_id: string; revision: number }>(
      'SELECT owner_id, revision FROM workflow WHERE id = $1::uuid',
      id,
    );
    if (!row || row.owner_id !== ownerId) return notFound(id);
    if (row.revision !== revision) return staleRevision(id, row.revision, revision);
    return undefined;
  }

  private async guarded(
    ownerId: string,
    id: string,
    revision: number,
    rows: WorkflowDbRow[],
    otherwise?: () => AppError,
  ): Promise<Workflow> {
    const row = rows[0];
    if (row) return toWorkflow(row);
    const why = await this.refusal(ownerId, id, revision);
    throw why ?? otherwise?.() ?? new AppError('conflict', `workflow ${id} changed; reload and try again`);
  }

  async create(ownerId: string, def: WorkflowDefinition): Promise<Workflow> {
    const [row] = await this.query<WorkflowDbRow>(
      `INSERT INTO workflow (id, owner_id, name, description, input_schema, plan, graph)
       VALUES ($1::uuid, $2::uuid, $3, $4, $5::json, $6::jsonb, $7::jsonb)
       RETURNING ${COLUMNS}`,
      randomUUID(),
      ownerId,
      def.name,
      def.description,
      jsonb(def.inputSchema),
      jsonb(def.plan),
      jsonb(def.graph),
    );
    return toWorkflow(row as WorkflowDbRow);
  }

  /** The owner's workflows by name (then id), `q` matched literally in the name or description. */
  async page(
    ownerId: string,
    opts: WorkflowListOptions,
  ): Promise<{ items: WorkflowSummary[]; total: number }> {
    const params: unknown[] = [ownerId];
    let where = 'owner_id = $1::uuid';
    if (opts.q) {
      params.push(likePattern(opts.q));
      where += ` AND (name ILIKE $${params.length} OR description ILIKE $${params.length})`;
    }
    const [rows, [count]] = await Promise.all([
      this.query<WorkflowDbRow>(
        `SELECT ${summaryColumns('workflow')} FROM workflow WHERE ${where}
         ORDER BY name, id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        ...params,
        opts.pageSize,
        (opts.pageNum - 1) * opts.pageSize,
      ),
      this.query<{ total: number }>(`SELECT count(*)::int AS total FROM workflow WHERE ${where}`, ...params),
    ]);
    return { items: rows.map(toSummary), total: count?.total ?? 0 };
  }

  async get(ownerId: string, id: string): Promise<Workflow> {
    const [row] = await this.query<WorkflowDbRow>(
      `SELECT ${COLUMNS} FROM workflow WHERE id = $1::uuid AND owner_id = $2::uuid`,
      id,
      ownerId,
    );
    if (!row) throw notFound(id);
    return toWorkflow(row);
  }

  /** Replaces the draft; `revision` is the one the edit is based on. */
  async update(ownerId: string, id: string, revision: number, def: WorkflowDefinition): Promise<Workflow> {
    const rows = await this.query<WorkflowDbRow>(
      `UPDATE workflow SET name = $4, description = $5, input_schema = $6::json, plan = $7::jsonb,
              graph = $8::jsonb, revision = revision + 1, updated_at = now()
       WHERE id = $1::uuid AND owner_id = $2::uuid AND revision = $3
       RETURNING ${COLUMNS}`,
      id,
      ownerId,
      revision,
      def.name,
      def.description,
      jsonb(def.inputSchema),
      jsonb(def.plan),
      jsonb(def.graph),
    );
    return this.guarded(ownerId, id, revision, rows);
  }

  /** Deletes the workflow and its versions; answers what was deleted. */
  async delete(ownerId: string, id: string, revision: number): Promise<Workflow> {
    const rows = await this.query<WorkflowDbRow>(
      `DELETE FROM workflow WHERE id = $1::uuid AND owner_id = $2::uuid AND revision = $3 RETURNING ${COLUMNS}`,
      id,
      ownerId,
      revision,
    );
    return this.guarded(ownerId, id, revision, rows);
  }

  /** A new, unpublished workflow "<name> (copy)" with the draft of `id`. */
  async copy(ownerId: string, id: string): Promise<Workflow> {
    const [row] = await this.query<WorkflowDbRow>(
      `INSERT INTO workflow (id, owner_id, name, description, input_schema, plan, graph)
       SELECT $3::uuid, owner_id, left(name, 193) || ' (copy)', description, input_schema, plan, graph
       FROM workflow WHERE id = $1::uuid AND owner_id = $2::uuid
       RETURNING ${COLUMNS}`,
      id,
      ownerId,
      randomUUID(),
    );
    if (!row) throw notFound(id);
    return toWorkflow(row);
  }

  /**
   * Snapshots the draft into version max+1 and serves it, in one statement (so one transaction):
   * the guarded UPDATE locks the row, so concurrent publishes cannot pick the same number. `effect`
   * is what running the snapshot does (from its tools' effects), kept with the version.
   */
  async publish(ownerId: string, id: string, revision: number, effect: ToolEffect): Promise<Workflow> {
    const rows = await this.query<WorkflowDbRow>(
      `WITH w AS (
         UPDATE workflow SET
           published_version = (SELECT COALESCE(max(version), 0) + 1 FROM workflow_version WHERE workflow_id = $1::uuid),
           revision = revision + 1, updated_at = now()
         WHERE id = $1::uuid AND owner_id = $2::uuid AND revision = $3
         RETURNING ${COLUMNS}
       ), v AS (
         INSERT INTO workflow_version (workflow_id, version, name, description, input_schema, plan, graph, effect)
         SELECT id, published_version, name, description, input_schema, plan, graph, $4::"ToolEffect" FROM w
       )
       SELECT * FROM w`,
      id,
      ownerId,
      revision,
      effect,
    );
    return this.guarded(ownerId, id, revision, rows);
  }

  /** Stops serving the published version (the versions stay). */
  async unpublish(ownerId: string, id: string, revision: number): Promise<Workflow> {
    const rows = await this.query<WorkflowDbRow>(
      `UPDATE workflow SET published_version = NULL, revision = revision + 1, updated_at = now()
       WHERE id = $1::uuid AND owner_id = $2::uuid AND revision = $3 AND published_version IS NOT NULL
       RETURNING ${COLUMNS}`,
      id,
      ownerId,
      revision,
    );
    return this.guarded(ownerId, id, revision, rows, () => notPublished(id));
  }

  /** Copies version `n` into the draft; the published version does not change. */
  async restore(ownerId: string, id: string, n: number, revision: number): Promise<Workflow> {
    const rows = await this.query<WorkflowDbRow>(
      `UPDATE workflow w SET name = v.name, description = v.description, input_schema = v.input_schema,
              plan = v.plan, graph = v.graph, revision = w.revision + 1, updated_at = now()
       FROM workflow_version v
       WHERE w.id = $1::uuid AND w.owner_id = $2::uuid AND w.revision = $3
         AND v.workflow_id = w.id AND v.version = $4
       RETURNING ${columns('w')}`,
      id,
      ownerId,
      revision,
      n,
    );
    return this.guarded(ownerId, id, revision, rows, () => noVersion(id, n));
  }

  /** The published versions, newest first, without their definitions. */
  async versions(
    ownerId: string,
    id: string,
  ): Promise<Array<Omit<WorkflowVersion, 'plan' | 'graph' | 'inputSchema'>>> {
    const [owned] = await this.query<{ id: string }>(
      'SELECT id FROM workflow WHERE id = $1::uuid AND owner_id = $2::uuid',
      id,
      ownerId,
    );
    if (!owned) throw notFound(id);
    const rows = await this.query<VersionDbRow>(
      `SELECT workflow_id, version, name, description, created_at FROM workflow_version
       WHERE workflow_id = $1::uuid ORDER BY version DESC`,
      id,
    );
    return rows.map((r) => {
      const { plan: _p, graph: _g, inputSchema: _i, ...rest } = toVersion(r);
      return rest;
    });
  }

  async version(ownerId: string, id: string, n: number): Promise<WorkflowVersion> {
    const [row] = await this.query<VersionDbRow & { owned: boolean }>(
      `SELECT w.id AS workflow_id, v.version, v.name, v.description, v.input_schema, v.plan, v.graph, v.created_at
       FROM workflow w LEFT JOIN workflow_version v ON v.workflow_id = w.id AND v.version = $3
       WHERE w.id = $1::uuid AND w.owner_id = $2::uuid`,
      id,
      ownerId,
      n,
    );
    if (!row) throw notFound(id);
    if (row.version === null) throw noVersion(id, n);
    return toVersion(row);
  }

  /** The definition to run: the draft, version n, or the published version. */
  async resolve(scope: ResolveScope, id: string, selector: VersionSelector): Promise<ResolvedWorkflow> {
    if (selector !== 'draft') return this.resolveVersion(scope, id, selector);
    const [w] = await this.query<WorkflowDbRow>(
      `SELECT ${COLUMNS} FROM workflow WHERE id = $1::uuid AND ($3::boolean OR owner_id = $2::uuid)`,
      id,
      scope.ownerId,
      scope.admin,
    );
    if (!w) throw notFound(id);
    return {
      workflowId: w.id,
      version: null,
      name: w.name,
      inputSchema: w.input_schema ?? {},
      plan: w.plan as AgentPlan,
    };
  }

  /**
   * A published (or numbered) version in one round trip: every background task resolves its
   * workflow's published version when its body starts, so this is on the tasks' hot path.
   */
  private async resolveVersion(
    scope: ResolveScope,
    id: string,
    selector: 'published' | number,
  ): Promise<ResolvedWorkflow> {
    const [r] = await this.query<VersionDbRow & { published_version: number | null; found: number | null }>(
      `SELECT w.published_version, v.version AS found, v.workflow_id, v.version, v.name, v.input_schema, v.plan
       FROM workflow w
       LEFT JOIN workflow_version v
         ON v.workflow_id = w.id AND v.version = COALESCE($4::int, w.published_version)
       WHERE w.id = $1::uuid AND ($3::boolean OR w.owner_id = $2::uuid)`,
      id,
      scope.ownerId,
      scope.admin,
      selector === 'published' ? null : selector,
    );
    if (!r) throw notFound(id);
    const n = selector === 'published' ? r.published_version : selector;
    if (n === null) throw notPublished(id);
    if (r.found === null) throw noVersion(id, n);
    return {
      workflowId: r.workflow_id,
      version: r.version,
      name: r.name,
      inputSchema: r.input_schema ?? {},
      plan: r.plan as AgentPlan,
    };
  }

  /** The owner's published workflows with their published definitions, by name: one query. */
  async published(ownerId: string): Promise<PublishedWorkflow[]> {
    const rows = await this.query<VersionDbRow>(
      `SELECT v.workflow_id, v.version, v.name, v.description, v.input_schema, v.plan, v.effect, v.created_at
       FROM workflow w JOIN workflow_version v ON v.workflow_id = w.id AND v.version = w.published_version
       WHERE w.owner_id = $1::uuid
       ORDER BY v.name, w.id`,
      ownerId,
    );
    return rows.map((r) => ({
      workflowId: r.workflow_id,
      version: r.version,
      name: r.name,
      description: r.description,
      inputSchema: r.input_schema ?? {},
      plan: r.plan as AgentPlan,
      effect: r.effect ?? 'external',
    }));
  }
}
