import { Inject, Injectable } from '@nestjs/common';
import { Prisma } from '@prisma/client';
import {
  ElicitationContent,
  RequestedSchema,
  type ElicitationParams,
  type InputAnsweredBy,
  type InputRequest,
  type InputRequestStatus,
} from '@switchyard/contracts';
import { PRISMA, storableText, type PrismaClient } from '@switchyard/server-db';

/** Most pending requests one listing answers (oldest first). */
export const INPUT_LIST_LIMIT = 200;

export interface NewInputRequest {
  readonly id: string;
  readonly ownerId: string;
  readonly target:
    | { readonly runId: string; readonly stepId: string }
    | { readonly sessionId: string; readonly callId: string };
  readonly label: string;
  readonly invocationId: string;
  readonly tool: string;
  readonly server: string;
  readonly request: ElicitationParams;
  readonly expiresAt: Date;
  /** Settled at once (an unattended run declines): written as settled, never pending. */
  readonly settled?: InputSettlement;
}

export interface InputSettlement {
  readonly status: Exclude<InputRequestStatus, 'pending'>;
  readonly content?: ElicitationContent;
  readonly reason?: string;
  readonly answeredBy: InputAnsweredBy;
  readonly answeredByOwner?: string;
}

type Row = Prisma.InputRequestGetPayload<object>;

/** The table's columns under the model's field names (for raw reads into a `Row`). */
const ROW_COLUMNS = Prisma.raw(
  [
    'id',
    'owner_id AS "ownerId"',
    'run_id AS "runId"',
    'step_id AS "stepId"',
    'session_id AS "sessionId"',
    'call_id AS "callId"',
    'label',
    'invocation_id AS "invocationId"',
    'tool',
    'server',
    'mode',
    'message',
    'requested_schema AS "requestedSchema"',
    'url',
    'status',
    'content',
    'reason',
    'answered_by AS "answeredBy"',
    'answered_by_owner AS "answeredByOwner"',
    'created_at AS "createdAt"',
    'expires_at AS "expiresAt"',
    'answered_at AS "answeredAt"',
  ].join(', '),
);

function toView(r: Row): InputRequest {
  const schema = r.requestedSchema === null ? null : RequestedSchema.safeParse(r.requestedSchema);
  const content = r.content === null ? null : ElicitationContent.safeParse(r.content);
  return {
    id: r.id,
    ownerId: r.ownerId,
    status: r.status as InputRequestStatus,
    runId: r.runId,
    stepId: r.stepId,
    sessionId: r.sessionId,
    callId: r.callId,
    label: r.label,
    tool: r.tool,
    server: r.server,
    mode: r.mode === 'url' ? 'url' : 'form',
    message: r.message,
    requestedSchema: schema?.success ? schema.data : null,
    url: r.url,
    content: content?.success ? content.data : null,
    reason: r.reason,
    answeredBy: r.answeredBy === 'person' || r.answeredBy === 'platform' ? r.answeredBy : null,
    createdAt: r.createdAt.toISOString(),
    expiresAt: r.expiresAt.toISOString(),
    answeredAt: r.answeredAt?.toISOString() ?? null,
  };
}

/**
 * Input requests of MCP servers (the executor's): written by the replica holding the wait,
 * settled once (pending → accepted | declined | cancelled, guarded by the status), read for the
 * inbox, the run and chat pages and the check of an answer.
 */
@Injectable()
export class InputRequestsRepository {
  constructor(@Inject(PRISMA) private readonly prisma: PrismaClient) {}

  async create(r: NewInputRequest): Promise<InputRequest> {
    const row = await this.prisma.inputRequest.create({
      data: {
        id: r.id,
        ownerId: r.ownerId,
        ...('runId' in r.target
          ? { runId: r.target.runId, stepId: r.target.stepId }
          : { sessionId: r.target.sessionId, callId: r.target.callId }),
        label: storableText(r.label).slice(0, 500),
        invocationId: r.invocationId,
        tool: r.tool,
        server: r.server,
        mode: r.request.mode,
        message: storableText(r.request.message),
        ...(r.request.mode === 'form'
          ? { requestedSchema: storable(r.request.requestedSchema) as Prisma.InputJsonValue }
          : { url: r.request.url }),
        expiresAt: r.expiresAt,
        ...(r.settled ? { ...settlementData(r.settled), answeredAt: new Date() } : {}),
      },
    });
    return toView(row);
  }

  /** Settles a pending request; undefined when it was settled already (the first answer wins). */
  async settle(id: string, s: InputSettlement): Promise<InputRequest | undefined> {
    const { count } = await this.prisma.inputRequest.updateMany({
      where: { id, status: 'pending' },
      data: { ...settlementData(s), answeredAt: new Date() },
    });
    if (!count) return undefined;
    const row = await this.prisma.inputRequest.findUnique({ where: { id } });
    return row ? toView(row) : undefined;
  }

  /**
   * One request as the caller may see it: their own; an admin also any run's (as they see every
   * run), never another owner's chat (chats are private).
   */
  async findForCaller(id: string, ownerId: string, admin: boolean): Promise<InputRequest | undefined> {
    const row = await this.prisma.inputRequest.findFirst({
      where: {
        id,
        OR: [{ ownerId }, ...(admin ? [{ runId: { not: null } }] : [])],
      },
    });
    return row ? toView(row) : undefined;
  }

  /** The owner's requests still waiting (not past their end), oldest first; optionally of one run or chat. */
  async pendingOf(
    ownerId: string,
    filter: { readonly runId?: string | undefined; readonly sessionId?: string | undefined } = {},
    limit = INPUT_LIST_LIMIT,
  ): Promise<InputRequest[]> {
    const where = [Prisma.sql`owner_id = ${ownerId}::uuid`];
    if (filter.runId) where.push(Prisma.sql`run_id = ${filter.runId}::uuid`);
    if (filter.sessionId) where.push(Prisma.sql`session_id = ${filter.sessionId}::uuid`);
    return this.pending(Prisma.join(where, ' AND '), limit);
  }

  /** A run's requests still waiting (whoever reads the run may see them: checked by the caller). */
  async pendingOfRun(runId: string): Promise<InputRequest[]> {
    return this.pending(Prisma.sql`run_id = ${runId}::uuid`, INPUT_LIST_LIMIT);
  }

  /**
   * Pending requests, oldest first. Raw SQL: these are read with every read of a run and of the
   * inbox, and Prisma's query builder compiled its query anew on each call (about a millisecond of
   * CPU, more than the read itself).
   */
  private async pending(where: Prisma.Sql, limit: number): Promise<InputRequest[]> {
    const rows = await this.prisma.$queryRaw<Row[]>`
      SELECT ${ROW_COLUMNS} FROM input_request
      WHERE ${where} AND status = 'pending' AND expires_at > ${new Date()}
      ORDER BY created_at, id
      LIMIT ${limit}`;
    return rows.map(toView);
  }
}

function settlementData(s: InputSettlement) {
  return {
    status: s.status,
    answeredBy: s.answeredBy,
    ...(s.content ? { content: storable(s.content) as Prisma.InputJsonValue } : {}),
    ...(s.reason ? { reason: storableText(s.reason).slice(0, 2_000) } : {}),
    ...(s.answeredByOwner ? { answeredByOwner: s.answeredByOwner } : {}),
  };
}

/** A JSON value with every string (keys too) made storable (see `storableText`). */
function storable(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.map(storable);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [storableText(k), storable(v)]));
  return value;
}
