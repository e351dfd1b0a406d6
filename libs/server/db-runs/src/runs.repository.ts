import { Inject, Injectable, Optional } from '@nestjs/common';
import {
  AppError,
  type BudgetUsage,
  type RunEvent,
  type RunEventBody,
  type RunEventType,
  type RunStatus,
  type RunSummary,
  type SandboxPosture,
  type StepApprovalRequested,
} from '@switchyard/contracts';
import type { PrismaClient } from '@prisma/client';
import type { Pool } from 'pg';
import { databaseUnavailable, likePattern, PRISMA, storableText } from '@switchyard/server-db';
import { epochMs, EVENT_AT_MS, storedEvent, toEvent, type EventRow } from '@switchyard/server-db-run-events';
import { Coalescer } from '@switchyard/server-runtime';
import { RUNS_POOL } from './runs-pool';
import {
  admitAndWrite,
  admitForeground,
  checkRoom,
  type AdmittedWrite,
  type ForegroundLimits,
} from './foreground-limits';

/** Statuses of a run that some replica is (or should be) driving. */
const ACTIVE_SQL = `ARRAY['planning','awaiting_plan_approval','running','awaiting_step_approval']::"RunStatus"[]`;

/**
 * When a statement stores events, as its rows give it back: `created_at` defaults to the
 * transaction's `now()`, kept to the millisecond (timestamptz(3) rounds), so every event a statement
 * stores has this time. Epoch milliseconds (a float8), not a timestamp: no date string to parse.
 */
const STORED_AT_MS = epochMs('now()::timestamptz(3)');

/**
 * Runs with their first events, one or several in one statement (group commit: the background runs
 * a replica creates in one turn, a batch of task bodies starting at once). Rows: one per run written,
 * with when its first events were stored; those are the bodies sent, numbered 1, 2, … in order.
 */
const CREATE_COLUMNS = `id uuid, owner_id uuid, status text, goal text, config jsonb, inputs jsonb, files jsonb,
  plan jsonb, source_run_id uuid, batch_id uuid, replica text, lease_ms double precision, events jsonb,
  workflow_id uuid, agent_id int, sandbox_posture text, file_grants jsonb, background boolean, usage jsonb`;
/** CREATE_RUNS after its `input` (the runs to write, with their first events), but for its rows. */
const CREATE_FROM_INPUT = `r AS (
         INSERT INTO run (id, owner_id, status, goal, config, inputs, files, plan, source_run_id, batch_id,
                          owner_replica, lease_until, next_seq, updated_at, workflow_id, agent_id, sandbox_posture, file_grants, background,
                          usage)
         SELECT id, owner_id, status::"RunStatus", goal, config, inputs, files, plan, source_run_id, batch_id,
                replica, now() + make_interval(secs => lease_ms / 1000), jsonb_array_length(events) + 1, now(),
                workflow_id, agent_id, sandbox_posture, file_grants, background, usage
         FROM input
         RETURNING id
       ), stored AS (
         INSERT INTO run_event (run_id, seq, type, data)
         SELECT r.id, e.ord, e.type, COALESCE(e.data, '{}'::jsonb)
         FROM r JOIN input i ON i.id = r.id,
              ROWS FROM (jsonb_to_recordset(i.events) AS (type text, data jsonb)) WITH ORDINALITY AS e(type, data, ord)
       )`;
const CREATED_ROWS = `SELECT r.id AS run_id, ${STORED_AT_MS} AS at_ms FROM r`;
const CREATE_RUNS = `WITH input AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(${CREATE_COLUMNS})),
       ${CREATE_FROM_INPUT}
       ${CREATED_ROWS}`;

/** CREATE_RUNS as the write of an admission (`admitAndWrite`): the runs of `creates` it let in. */
function createAdmittedWrite(creates: readonly NewRunWithEvents[]): AdmittedWrite {
  return {
    name: 'run_create_admitted',
    ctes: `input AS (
         SELECT x.* FROM jsonb_to_recordset($4::jsonb) AS x(${CREATE_COLUMNS}, k int) JOIN admitted a ON a.k = x.k
       ), ${CREATE_FROM_INPUT}`,
    select: CREATED_ROWS,
    values: [JSON.stringify(creates.map((c, k) => ({ ...createRecord(c.run, c.events), k })))],
  };
}

/** A row of CREATE_RUNS: a run written, and when its first events were stored. */
interface CreatedRow {
  readonly run_id: string;
  readonly at_ms: number;
}

/** A run to write with its first events. */
interface NewRunWithEvents {
  readonly run: NewRun;
  readonly events: readonly RunEventBody[];
}

/** CREATE_RUNS's values for `creates`. */
function createValues(creates: readonly NewRunWithEvents[]): unknown[] {
  return [JSON.stringify(creates.map((c) => createRecord(c.run, c.events)))];
}

/** Each create's stored first events, in the order of `creates`, from CREATE_RUNS's rows. */
function createdEvents(creates: readonly NewRunWithEvents[], rows: readonly CreatedRow[]): RunEvent[][] {
  const atMs = new Map(rows.map((r) => [r.run_id, r.at_ms]));
  return creates.map((c) => {
    const at = atMs.get(c.run.id);
    if (at === undefined) throw new Error(`run ${c.run.id} was not written`);
    return numberedEvents(c.run.id, c.events, 1, at);
  });
}

/** One create's stored first events, from CREATE_RUNS's rows for it alone. */
function createdOne(create: NewRunWithEvents, rows: readonly CreatedRow[]): RunEvent[] {
  return createdEvents([create], rows)[0] as RunEvent[];
}

/**
 * Events as a statement stored them: the bodies sent (not parsed back out of jsonb), numbered from
 * `firstSeq` in the order sent, at the statement's time.
 */
function numberedEvents(
  runId: string,
  events: readonly RunEventBody[],
  firstSeq: number,
  atMs: number,
): RunEvent[] {
  const at = new Date(atMs).toISOString();
  return events.map((e, i) => storedEvent(runId, e, firstSeq + i, at));
}

/**
 * A batch that failed for its data, tried one create at a time, so one bad run refuses only itself:
 * each answer is its events or its error.
 */
function eachAlone<C extends NewRunWithEvents>(
  batch: readonly C[],
  write: (create: C) => Promise<readonly CreatedRow[]>,
): Promise<Array<RunEvent[] | Error>> {
  return Promise.all(
    batch.map((c) =>
      write(c).then(
        (rows) => createdOne(c, rows),
        (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
      ),
    ),
  );
}

/** One run of CREATE_RUNS, as its input record. */
function createRecord(run: NewRun, events: readonly RunEventBody[]): Record<string, unknown> {
  return {
    id: run.id,
    owner_id: run.ownerId,
    status: run.status,
    goal: run.goal,
    config: run.config,
    inputs: run.inputs,
    files: run.files,
    plan: run.plan ?? null,
    source_run_id: run.sourceRunId ?? null,
    batch_id: run.batchId ?? null,
    replica: run.replica,
    lease_ms: run.leaseMs,
    events: eventRecords(events),
    workflow_id: run.workflowId ?? null,
    agent_id: run.agentId ?? null,
    sandbox_posture: run.sandboxPosture ?? null,
    file_grants: run.fileGrants ?? [],
    background: run.background ?? false,
    usage: run.usage ?? null,
  };
}

export interface NewRun {
  readonly id: string;
  readonly ownerId: string;
  readonly status: RunStatus;
  readonly goal: string;
  readonly config: Record<string, unknown>;
  readonly inputs: Record<string, unknown>;
  readonly files: readonly string[];
  /** The run's materialised file grants (ResolvedGrant[]). */
  readonly fileGrants?: readonly unknown[];
  readonly plan: unknown;
  readonly sourceRunId?: string | null;
  readonly batchId?: string | null;
  /** The saved workflow the run was started from. */
  readonly workflowId?: string | null;
  /** The agent driving the run. */
  readonly agentId?: number | null;
  /** The plugin sandbox posture it is created under (null: not known). */
  readonly sandboxPosture?: SandboxPosture | null;
  /** The replica that will drive it, holding the lease for `leaseMs`. */
  readonly replica: string;
  readonly leaseMs: number;
  /** A background task's run, or a workflow's called as a tool: not counted against foreground limits. */
  readonly background?: boolean;
  /** What it has spent, when its first events say (see RunUpdate.usage); none otherwise. */
  readonly usage?: BudgetUsage;
}

/** One run's append, as `appendMany` writes it with others. */
interface Append {
  readonly runId: string;
  readonly events: readonly RunEventBody[];
  readonly replica?: string;
  readonly update?: RunUpdate;
}

/** How one append of a batch went: its events stored, its row refused it, or its own error. */
type Appended = RunEvent[] | 'missing' | Error;

/**
 * The appends of several runs in one statement: each run's row is bumped (guarded by its replica
 * when one is given) with its changes, and its events numbered after its last one. Rows: one per
 * run bumped, with its first number and when its events were stored (a run missing from them was
 * refused by its row).
 */
const APPEND_MANY = `WITH input AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(
      k int, id uuid, n int, replica text, events jsonb, status text,
      set_plan boolean, plan jsonb, set_summary boolean, summary text, set_error boolean, error text,
      finished boolean, release boolean, usage jsonb, config jsonb)
  ), bumped AS (
    UPDATE run r SET next_seq = r.next_seq + i.n, updated_at = now(),
      status = COALESCE(i.status::"RunStatus", r.status),
      plan = CASE WHEN i.set_plan THEN i.plan ELSE r.plan END,
      summary = CASE WHEN i.set_summary THEN i.summary ELSE r.summary END,
      error = CASE WHEN i.set_error THEN i.error ELSE r.error END,
      finished_at = CASE WHEN i.finished IS NULL THEN r.finished_at WHEN i.finished THEN now() ELSE NULL END,
      owner_replica = CASE WHEN i.release THEN NULL ELSE r.owner_replica END,
      lease_until = CASE WHEN i.release THEN NULL ELSE r.lease_until END,
      usage = COALESCE(i.usage, r.usage),
      config = COALESCE(i.config, r.config)
    FROM input i
    WHERE r.id = ANY($2::uuid[]) AND r.id = i.id AND (i.replica IS NULL OR r.owner_replica = i.replica)
    RETURNING i.k, r.next_seq - i.n AS first_seq, r.id
  ), inserted AS (
    INSERT INTO run_event (run_id, seq, type, data)
    SELECT b.id, b.first_seq + e.ord - 1, e.type, COALESCE(e.data, '{}'::jsonb)
    FROM bumped b JOIN input i ON i.k = b.k,
         ROWS FROM (jsonb_to_recordset(i.events) AS (type text, data jsonb)) WITH ORDINALITY AS e(type, data, ord)
  )
  SELECT b.k, b.first_seq, ${STORED_AT_MS} AS at_ms FROM bumped b`;

/** Fields an append may change on the run row, in the same statement. */
export interface RunUpdate {
  readonly status?: RunStatus;
  readonly plan?: unknown;
  readonly summary?: string | null;
  readonly error?: string | null;
  /** true stamps finished_at, false clears it. */
  readonly finished?: boolean;
  /** Give the run up: no owner replica, no lease (terminal states). */
  readonly release?: boolean;
  /** What the run has spent against its budget, as of this write. */
  readonly usage?: BudgetUsage;
  /** A new config (a resume with a new budget). */
  readonly config?: Record<string, unknown>;
}

/** A gate of a run waiting for its owner: the plan, or one step (with what its request said). */
export interface OpenGate {
  readonly run: RunRow;
  readonly gate: 'plan' | 'step';
  readonly since: string;
  readonly request?: StepApprovalRequested;
}

export interface RunRow extends RunSummary {
  readonly config: Record<string, unknown>;
  readonly inputs: Record<string, unknown>;
  readonly files: string[];
  readonly fileGrants: unknown[];
  readonly plan: unknown;
  readonly ownerReplica: string | null;
  readonly leaseUntil: string | null;
  readonly agentId: number | null;
  readonly sandboxPosture: SandboxPosture | null;
  /** As last written (see RunUpdate.usage); null before the first write of it. */
  readonly usage: BudgetUsage | null;
}

/** The replica no longer holds the run (its lease expired and another replica interrupted it). */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
}

interface RunDbRow {
  id: string;
  owner_id: string;
  status: RunStatus;
  goal: string;
  config: Record<string, unknown>;
  inputs: Record<string, unknown>;
  files: string[];
  file_grants: unknown[];
  plan: unknown;
  summary: string | null;
  error: string | null;
  source_run_id: string | null;
  batch_id: string | null;
  owner_replica: string | null;
  lease_until: Date | null;
  agent_id: number | null;
  sandbox_posture: SandboxPosture | null;
  usage: BudgetUsage | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

const RUN_COLUMNS =
  'id, owner_id, status, goal, config, inputs, files, file_grants, plan, summary, error, source_run_id, batch_id, owner_replica, lease_until, agent_id, sandbox_posture, usage, created_at, updated_at, finished_at';

function iso(d: Date | null): string | null {
  return d ? new Date(d).toISOString() : null;
}

function toRun(r: RunDbRow): RunRow {
  return {
    id: r.id,
    ownerId: r.owner_id,
    status: r.status,
    goal: r.goal,
    summary: r.summary,
    error: r.error,
    sourceRunId: r.source_run_id,
    batchId: r.batch_id,
    createdAt: iso(r.created_at) as string,
    updatedAt: iso(r.updated_at) as string,
    finishedAt: iso(r.finished_at),
    config: r.config ?? {},
    inputs: r.inputs ?? {},
    files: r.files ?? [],
    fileGrants: r.file_grants ?? [],
    plan: r.plan,
    ownerReplica: r.owner_replica,
    leaseUntil: iso(r.lease_until),
    agentId: r.agent_id,
    sandboxPosture: r.sandbox_posture,
    usage: r.usage,
  };
}

/** A create waiting for admission (see RunsRepository.create). */
interface AdmittedCreate extends NewRunWithEvents {
  readonly admit: ForegroundLimits;
}

/**
 * An append's outcome as a batch answers it: a run that refused the write (gone, or held by another
 * replica) is 'missing'; another failure is that append's error (`append` throws it to its caller).
 */
async function appendedOf(append: Promise<RunEvent[]>): Promise<Appended> {
  try {
    return await append;
  } catch (e) {
    if (e instanceof LeaseLostError || (e instanceof AppError && e.code === 'not_found')) return 'missing';
    return e instanceof Error ? e : new Error(String(e));
  }
}

/** Events as the statements' `jsonb_to_recordset(… AS (type text, data jsonb))` reads them. */
function eventRecords(events: readonly RunEventBody[]): Array<{ type: string; data: unknown }> {
  return events.map((e) => ({ type: e.type, data: e.data }));
}

function encodeEvents(events: readonly RunEventBody[]): string {
  return JSON.stringify(eventRecords(events));
}

/** `%`, `_` and `\` stand for themselves in a search. */

/**
 * Runs and their audit log, written by the executor. Every change of a run's row travels in the same
 * statement as the events that announce it, guarded by the writing replica's ownership, so the log and
 * the row cannot disagree and a replica that lost its lease cannot write behind the one that took over.
 */
@Injectable()
export class RunsRepository {
  /** Appends under way on the pool, written together (see `append`). */
  private readonly appends: Coalescer<Append, Appended> | undefined;
  /** Admitted creates under way on the pool, admitted together (see `create`). */
  private readonly admitted: Coalescer<AdmittedCreate, RunEvent[] | Error> | undefined;
  /** Creates without admission under way on the pool, written together (see `create`). */
  private readonly plain: Coalescer<NewRunWithEvents, RunEvent[] | Error> | undefined;

  /** `pool`: raw pg for the hot path (appends and creates as prepared statements); else Prisma. */
  constructor(
    @Inject(PRISMA) private readonly prisma: PrismaClient,
    @Optional() @Inject(RUNS_POOL) private readonly pool?: Pool,
  ) {
    this.appends = pool ? new Coalescer((batch) => this.appendMany(batch)) : undefined;
    this.admitted = pool ? new Coalescer((batch) => this.createAdmitted(pool, batch)) : undefined;
    this.plain = pool ? new Coalescer((batch) => this.createPlain(batch)) : undefined;
  }

  /** Runs a statement through the pool (prepared once per connection when named) or Prisma. */
  private async query<T>(name: string | undefined, text: string, values: unknown[]): Promise<T[]> {
    if (this.pool) return (await this.pool.query({ ...(name ? { name } : {}), text, values })).rows as T[];
    return this.prisma.$queryRawUnsafe<T[]>(text, ...values);
  }

  /** Runs a statement for its row count (prepared once per connection when named). */
  private async execute(name: string, text: string, values: unknown[]): Promise<number> {
    if (this.pool) return (await this.pool.query({ name, text, values })).rowCount ?? 0;
    return this.prisma.$executeRawUnsafe(text, ...values);
  }

  /** Whether `wanted` more foreground runs fit the limits now: the refusal they would meet, if any. */
  async foregroundRoom(
    ownerId: string,
    limits: ForegroundLimits,
    wanted: number,
  ): Promise<AppError | undefined> {
    return checkRoom((text, values) => this.query(undefined, text, values), ownerId, limits, wanted);
  }

  /**
   * Inserts the run and its first events in one statement. With `admit`, only within the owner's and
   * the deployment's foreground limits (checked under their locks, in the same transaction): refused
   * with `capacity_exceeded` otherwise.
   */
  async create(run: NewRun, events: readonly RunEventBody[], admit?: ForegroundLimits): Promise<RunEvent[]> {
    if (admit && this.admitted) {
      const stored = await this.admitted.call({ run, events, admit });
      if (stored instanceof Error) throw stored;
      return stored;
    }
    if (!admit && this.plain) {
      const stored = await this.plain.call({ run, events });
      if (stored instanceof Error) throw stored;
      return stored;
    }
    const values = createValues([{ run, events }]);
    const rows = admit
      ? await admitForeground({ pool: this.pool, prisma: this.prisma }, run.ownerId, admit, (q) =>
          q<CreatedRow>(CREATE_RUNS, values),
        )
      : await this.query<CreatedRow>('run_create', CREATE_RUNS, values);
    return createdOne({ run, events }, rows);
  }

  /**
   * Creates without admission that arrived together, in one statement. When the batch fails for its
   * data rather than a database that is away, each is tried alone (`eachAlone`).
   */
  private async createPlain(batch: readonly NewRunWithEvents[]): Promise<Array<RunEvent[] | Error>> {
    try {
      return createdEvents(batch, await this.query('run_create', CREATE_RUNS, createValues(batch)));
    } catch (err) {
      if (batch.length === 1 || databaseUnavailable(err)) throw err;
      return eachAlone(batch, (c) => this.query<CreatedRow>('run_create', CREATE_RUNS, createValues([c])));
    }
  }

  /**
   * Creates that arrived together, admitted and written in one message (`admitAndWrite`: starts of
   * many runs at once all wait on the deployment's admission lock), one round trip however many
   * arrived. When the batch fails for its data rather than a database that is away, each create is
   * tried alone, so one bad run refuses only itself.
   */
  private async createAdmitted(
    pool: Pool,
    batch: readonly AdmittedCreate[],
  ): Promise<Array<RunEvent[] | Error>> {
    try {
      const { rows, admitted, refused } = await admitAndWrite<CreatedRow>(
        pool,
        batch.map((c) => ({ ownerId: c.run.ownerId, limits: c.admit })),
        createAdmittedWrite(batch),
      );
      const written = createdEvents(
        admitted.map((i) => batch[i] as AdmittedCreate),
        rows,
      );
      const out: Array<RunEvent[] | Error> = [];
      for (const [i, refusal] of refused) out[i] = refusal;
      admitted.forEach((i, j) => (out[i] = written[j] as RunEvent[]));
      return out;
    } catch (err) {
      if (batch.length === 1 || databaseUnavailable(err)) throw err;
      return eachAlone(batch, (c) =>
        admitForeground({ pool, prisma: this.prisma }, c.run.ownerId, c.admit, (q) =>
          q<CreatedRow>(CREATE_RUNS, createValues([c])),
        ),
      );
    }
  }

  /**
   * Appends events (numbered gaplessly after the run's last one) and applies `update` to the run row,
   * in one statement. With `replica`, only while that replica owns the run: otherwise LeaseLostError.
   * On the pool, appends of several runs made while the previous ones are being written are written
   * together, in one statement (group commit: each run's own appends stay in order, as its writer
   * sends the next only once the last is stored).
   */
  async append(
    runId: string,
    events: readonly RunEventBody[],
    opts: { readonly replica?: string; readonly update?: RunUpdate } = {},
  ): Promise<RunEvent[]> {
    if (!this.appends) return this.appendOne(runId, events, opts);
    const stored = await this.appends.call({ runId, events, ...opts });
    if (stored instanceof Error) throw stored;
    if (stored === 'missing') {
      if (opts.replica) throw new LeaseLostError(`run ${runId} is no longer held by this replica`);
      throw new AppError('not_found', `run ${runId} does not exist`);
    }
    return stored;
  }

  /**
   * The appends of several runs; 'missing' where the row refused. A run twice in the batch (a
   * writer's closing event racing its last batch) goes in a later statement: one statement updates
   * a row once.
   */
  private async appendMany(batch: readonly Append[]): Promise<Appended[]> {
    const out: Appended[] = [];
    let rest = batch.map((a, i) => ({ a, i }));
    while (rest.length) {
      const seen = new Set<string>();
      const now = rest.filter(({ a }) => !seen.has(a.runId) && seen.add(a.runId));
      rest = rest.filter((x) => !now.includes(x));
      const stored = await this.appendDistinct(now.map((x) => x.a));
      now.forEach((x, j) => (out[x.i] = stored[j] as Appended));
    }
    return out;
  }

  /**
   * Appends of distinct runs in one statement. When Postgres refuses the statement for its data (an
   * event it cannot store) rather than for being away, each append is tried alone, so one run's bad
   * event fails that run's write only.
   */
  private async appendDistinct(batch: readonly Append[]): Promise<Appended[]> {
    // One run alone (a sequential chain's every step): the single-run statement, which Postgres
    // runs in ~0.4 ms against ~0.5 for the batch form's recordset and join (A/B, one connection).
    const [only] = batch;
    if (only && batch.length === 1) return [await appendedOf(this.appendOne(only.runId, only.events, only))];
    try {
      return await this.appendTogether(batch);
    } catch (err) {
      if (databaseUnavailable(err)) throw err;
      return Promise.all(batch.map((a) => appendedOf(this.appendOne(a.runId, a.events, a))));
    }
  }

  private async appendTogether(batch: readonly Append[]): Promise<Appended[]> {
    const input = batch.map((a, k) => {
      const u = a.update ?? {};
      return {
        k,
        id: a.runId,
        n: a.events.length,
        replica: a.replica ?? null,
        events: a.events.map((e) => ({ type: e.type, data: e.data })),
        status: u.status ?? null,
        set_plan: u.plan !== undefined,
        plan: u.plan ?? null,
        set_summary: u.summary !== undefined,
        summary: u.summary ?? null,
        set_error: u.error !== undefined,
        error: u.error ?? null,
        finished: u.finished ?? null,
        release: u.release === true,
        usage: u.usage ?? null,
        config: u.config ?? null,
      };
    });
    // Not a prepared statement: its plan is made for the runs of this batch and the run table as it
    // is now. A generic plan is made once per connection and kept: made while the table was small (a
    // new deployment's first minute), it read the whole table per batch until autovacuum's ANALYZE
    // replanned it, 37 times a second by ~5,000 rows each in the tasks bench. Planning each time
    // costs ~0.17 ms of Postgres CPU per batch (0.52 → 0.69 ms for five runs, one connection).
    const rows = await this.query<{ k: number; first_seq: number; at_ms: number }>(undefined, APPEND_MANY, [
      JSON.stringify(input),
      batch.map((a) => a.runId),
    ]);
    const out: Appended[] = batch.map(() => 'missing');
    for (const r of rows) {
      const a = batch[r.k];
      if (a) out[r.k] = numberedEvents(a.runId, a.events, Number(r.first_seq), r.at_ms);
    }
    return out;
  }

  private async appendOne(
    runId: string,
    events: readonly RunEventBody[],
    opts: { readonly replica?: string; readonly update?: RunUpdate } = {},
  ): Promise<RunEvent[]> {
    const params: unknown[] = [runId, events.length];
    const sets = ['next_seq = next_seq + $2', 'updated_at = now()'];
    const u = opts.update ?? {};
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    if (u.status) sets.push(`status = ${param(u.status)}::"RunStatus"`);
    if (u.plan !== undefined)
      sets.push(`plan = ${param(u.plan === null ? null : JSON.stringify(u.plan))}::jsonb`);
    if (u.summary !== undefined) sets.push(`summary = ${param(u.summary)}`);
    if (u.error !== undefined) sets.push(`error = ${param(u.error)}`);
    if (u.finished !== undefined) sets.push(u.finished ? 'finished_at = now()' : 'finished_at = NULL');
    if (u.release) sets.push('owner_replica = NULL', 'lease_until = NULL');
    if (u.usage) sets.push(`usage = ${param(JSON.stringify(u.usage))}::jsonb`);
    if (u.config) sets.push(`config = ${param(JSON.stringify(u.config))}::jsonb`);
    const guard = opts.replica ? ` AND owner_replica = ${param(opts.replica)}` : '';
    const eventsParam = param(encodeEvents(events));
    // The common shapes (no row change, with or without the guard) are prepared statements.
    const name = sets.length === 2 ? `run_append${opts.replica ? '_guarded' : ''}` : undefined;
    // The row gives back only what the statement decided (the first number, the time): the bodies
    // are the ones sent, not parsed back out of jsonb.
    const [row] = await this.query<{ first_seq: number; at_ms: number }>(
      name,
      `WITH bumped AS (
         UPDATE run SET ${sets.join(', ')} WHERE id = $1::uuid${guard}
         RETURNING next_seq - $2 AS first_seq
       ), inserted AS (
         INSERT INTO run_event (run_id, seq, type, data)
         SELECT $1::uuid, bumped.first_seq + e.ord - 1, e.type, COALESCE(e.data, '{}'::jsonb)
         FROM bumped, ROWS FROM (jsonb_to_recordset(${eventsParam}::jsonb) AS (type text, data jsonb)) WITH ORDINALITY AS e(type, data, ord)
       )
       SELECT first_seq, ${STORED_AT_MS} AS at_ms FROM bumped`,
      params,
    );
    if (!row) {
      if (opts.replica) throw new LeaseLostError(`run ${runId} is no longer held by this replica`);
      throw new AppError('not_found', `run ${runId} does not exist`);
    }
    return numberedEvents(runId, events, Number(row.first_seq), row.at_ms);
  }

  /** Takes a finished run over for `replica` (resume), if it is in one of `from`. */
  async claim(runId: string, replica: string, leaseMs: number, from: readonly RunStatus[]): Promise<boolean> {
    const n = await this.prisma.$executeRawUnsafe(
      `UPDATE run SET owner_replica = $2, lease_until = now() + make_interval(secs => $3::double precision / 1000), updated_at = now()
       WHERE id = $1::uuid AND status = ANY($4::"RunStatus"[])`,
      runId,
      replica,
      leaseMs,
      from,
    );
    return n === 1;
  }

  /** Extends the lease of every active run `replica` drives; returns how many. */
  /**
   * Extends the leases of the runs a replica still drives, by id: a run the replica dropped (its
   * driver gone without a terminal write) is not renewed, so the sweep reports it interrupted even
   * while the replica lives on with other runs.
   */
  async renewLeases(replica: string, leaseMs: number, runIds: readonly string[]): Promise<number> {
    if (!runIds.length) return 0;
    // Every third of the lease on every replica: a prepared statement, not a query Prisma compiles.
    return this.execute(
      'run_renew_leases',
      `UPDATE run SET lease_until = now() + make_interval(secs => $2::double precision / 1000)
       WHERE owner_replica = $1 AND id = ANY($3::uuid[]) AND status = ANY(${ACTIVE_SQL})`,
      [replica, leaseMs, runIds],
    );
  }

  /**
   * Marks active runs whose lease ran out (or, with `replica`, every active run of that replica) as
   * interrupted, appending the `interrupted` event in the same statement. Returns the events to publish.
   */
  async interrupt(
    message: string,
    opts: { readonly replica?: string; readonly limit?: number } = {},
  ): Promise<RunEvent[]> {
    const which = opts.replica ? 'owner_replica = $3' : 'lease_until < now()';
    // The sweep runs every RUN_SWEEP_MS on every replica: prepared, not compiled by Prisma each time.
    const rows = await this.query<EventRow & { run_id: string }>(
      opts.replica ? 'run_interrupt_replica' : 'run_interrupt_expired',
      `WITH dead AS (
         SELECT id FROM run WHERE status = ANY(${ACTIVE_SQL}) AND ${which}
         ORDER BY lease_until LIMIT $2 FOR UPDATE SKIP LOCKED
       ), upd AS (
         UPDATE run r SET status = 'interrupted', error = $1, finished_at = now(), updated_at = now(),
                          owner_replica = NULL, lease_until = NULL, next_seq = r.next_seq + 1
         FROM dead WHERE r.id = dead.id
         RETURNING r.id, r.next_seq - 1 AS seq
       )
       INSERT INTO run_event (run_id, seq, type, data)
       SELECT upd.id, upd.seq, 'interrupted', jsonb_build_object('message', $1::text) FROM upd
       RETURNING run_id, seq, type, data, created_at AS at`,
      [message, opts.limit ?? 100, ...(opts.replica ? [opts.replica] : [])],
    );
    return rows.map((r) => toEvent(r.run_id, r));
  }

  /**
   * The run's last word when its log refused an event (even the `error` event that should end it):
   * marks the run failed and appends a bare `error` event, in one statement, while `replica` holds
   * the run. Returns the event to publish (none when the run is no longer this replica's).
   */
  async fail(runId: string, replica: string, message: string): Promise<RunEvent[]> {
    const rows = await this.query<EventRow>(
      undefined,
      `WITH upd AS (
         UPDATE run SET status = 'failed', error = $3, finished_at = now(), updated_at = now(),
                        owner_replica = NULL, lease_until = NULL, next_seq = next_seq + 1
         WHERE id = $1::uuid AND owner_replica = $2
         RETURNING next_seq - 1 AS seq
       )
       INSERT INTO run_event (run_id, seq, type, data)
       SELECT $1::uuid, upd.seq, 'error', jsonb_build_object('message', $3::text, 'code', 'internal') FROM upd
       RETURNING seq, type, data, created_at AS at`,
      [runId, replica, storableText(message)],
    );
    return rows.map((r) => toEvent(runId, r));
  }

  async get(runId: string): Promise<RunRow | undefined> {
    const rows = await this.query<RunDbRow>('run_get', `SELECT ${RUN_COLUMNS} FROM run WHERE id = $1::uuid`, [
      runId,
    ]);
    return rows[0] ? toRun(rows[0]) : undefined;
  }

  /** The run if `ownerId` may see it (null: an admin, who sees every run); otherwise not_found. */
  async getVisible(runId: string, ownerId: string | null): Promise<RunRow> {
    const run = await this.get(runId);
    if (!run || (ownerId !== null && run.ownerId !== ownerId))
      throw new AppError('not_found', `run ${runId} does not exist`);
    return run;
  }

  /** Newest first; the cursor is the last item's `createdAt|id`. */
  async list(
    ownerId: string,
    q: { readonly limit: number; readonly cursor?: string; readonly q?: string; readonly status?: RunStatus },
  ): Promise<{ items: RunRow[]; nextCursor: string | null }> {
    const params: unknown[] = [ownerId, q.limit + 1];
    const where = ['owner_id = $1::uuid'];
    if (q.status) {
      params.push(q.status);
      where.push(`status = $${params.length}::"RunStatus"`);
    }
    if (q.q) {
      params.push(likePattern(q.q));
      const p = `$${params.length}`;
      where.push(`(goal ILIKE ${p} OR summary ILIKE ${p} OR error ILIKE ${p})`);
    }
    if (q.cursor) {
      const [at, id] = q.cursor.split('|');
      if (!at || !id || Number.isNaN(Date.parse(at)) || !/^[0-9a-f-]{36}$/.test(id))
        throw new AppError('validation_failed', 'cursor is not one this API returned');
      params.push(at, id);
      where.push(`(created_at, id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
    }
    const rows = await this.prisma.$queryRawUnsafe<RunDbRow[]>(
      `SELECT ${RUN_COLUMNS} FROM run WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT $2`,
      ...params,
    );
    const items = rows.slice(0, q.limit).map(toRun);
    const last = items[items.length - 1];
    return { items, nextCursor: rows.length > q.limit && last ? `${last.createdAt}|${last.id}` : null };
  }

  /**
   * The owner's open gates, oldest first: each run awaiting plan approval (since its latest
   * plan_approval_requested), and each step_approval_requested of a run awaiting step approval that
   * nothing has answered yet (no later step_approved, step_start, step_failed or new request for the step).
   */
  async openGates(ownerId: string, limit: number): Promise<OpenGate[]> {
    const rows = await this.prisma.$queryRawUnsafe<
      Array<RunDbRow & { gate: 'plan' | 'step'; since: Date; request: StepApprovalRequested | null }>
    >(
      `WITH waiting AS (
         SELECT ${RUN_COLUMNS} FROM run
         WHERE owner_id = $1::uuid AND status IN ('awaiting_plan_approval', 'awaiting_step_approval')
       ), gates AS (
         SELECT w.*, 'plan' AS gate, NULL::jsonb AS request,
                COALESCE((SELECT max(e.created_at) FROM run_event e
                          WHERE e.run_id = w.id AND e.type = 'plan_approval_requested'), w.updated_at) AS since
         FROM waiting w WHERE w.status = 'awaiting_plan_approval'
         UNION ALL
         SELECT w.*, 'step', e.data, e.created_at
         FROM waiting w JOIN run_event e ON e.run_id = w.id AND e.type = 'step_approval_requested'
         WHERE w.status = 'awaiting_step_approval' AND NOT EXISTS (
           SELECT 1 FROM run_event later
           WHERE later.run_id = e.run_id AND later.seq > e.seq
             AND later.type IN ('step_approval_requested', 'step_approved', 'step_start', 'step_failed')
             AND later.data->>'stepId' = e.data->>'stepId')
       )
       SELECT * FROM gates ORDER BY since, id, request->>'stepId' LIMIT $2`,
      ownerId,
      limit,
    );
    return rows.map((r) => ({
      run: toRun(r),
      gate: r.gate,
      since: new Date(r.since).toISOString(),
      ...(r.request ? { request: r.request } : {}),
    }));
  }

  /** The first `limit` events of a run, oldest first. */
  async events(runId: string, limit: number): Promise<RunEvent[]> {
    const rows = await this.query<EventRow>(
      'run_events',
      `SELECT seq, type, data, ${EVENT_AT_MS} FROM run_event WHERE run_id = $1::uuid ORDER BY seq LIMIT $2`,
      [runId, limit],
    );
    return rows.map((r) => toEvent(runId, r));
  }

  /** The events of the given types, oldest first (folding step executions). */
  async eventsOfTypes<T extends RunEventType>(
    runId: string,
    types: readonly T[],
  ): Promise<Array<Extract<RunEvent, { type: T }>>> {
    const rows = await this.query<EventRow>(
      'run_events_of_types',
      `SELECT seq, type, data, ${EVENT_AT_MS} FROM run_event WHERE run_id = $1::uuid AND type = ANY($2::text[]) ORDER BY seq`,
      [runId, types],
    );
    const wanted: ReadonlySet<string> = new Set(types);
    return rows
      .map((r) => toEvent(runId, r))
      .filter((e): e is Extract<RunEvent, { type: T }> => wanted.has(e.type));
  }
}
