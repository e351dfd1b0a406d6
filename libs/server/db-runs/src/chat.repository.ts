import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Pool } from 'pg';
import { Prisma } from '@prisma/client';
import {
  AppError,
  Budget,
  BudgetUsage,
  ChatError,
  PermissionDecision,
  ToolEffect,
  type ChatEvent,
  type ChatEventBody,
  type ChatMessage,
  type ChatRole,
  type ChatSession,
  type ChatSessionDetail,
  type ChatSessionListQuery,
  type ChatSessionPage,
  type ChatToolCall,
  type ChatToolCallStatus,
  type ChatTurnStatus,
  type PermissionMode,
} from '@switchyard/contracts';
import {
  decodeKeysetCursor,
  encodeKeysetCursor,
  PRISMA,
  storableText,
  type PrismaClient,
} from '@switchyard/server-db';
import { RUNS_POOL } from './runs-pool';
import { admitForeground, type ForegroundLimits } from './foreground-limits';

/** Statuses of a session whose turn some replica drives. */
export const ACTIVE_CHAT_STATUSES: ReadonlySet<ChatTurnStatus> = new Set(['running', 'awaiting_approval']);

export interface NewChatSession {
  readonly agentId?: number | undefined;
  readonly permissionMode: PermissionMode;
  readonly title?: string | undefined;
  readonly budget?: Budget | undefined;
}

export interface ChatSessionPatch {
  readonly permissionMode?: PermissionMode | undefined;
  readonly title?: string | undefined;
  readonly budget?: Budget | null | undefined;
}

/** What an append may change on the session row in the same statement. */
export interface ChatSessionUpdate {
  readonly status?: ChatTurnStatus;
  /** Give the session up (the turn ended): no replica drives it. */
  readonly release?: boolean;
}

export interface NewChatMessage {
  readonly role: ChatRole;
  readonly content: string;
  readonly callIds?: readonly string[];
  readonly callId?: string;
  readonly usage?: BudgetUsage;
}

export interface ToolCallPatch {
  readonly status?: ChatToolCallStatus;
  readonly decision?: PermissionDecision;
  readonly editedArguments?: Record<string, unknown>;
  readonly result?: unknown;
  readonly error?: ChatError;
  readonly durationMs?: number;
}

type SessionRow = Prisma.ChatSessionGetPayload<object>;
type MessageRow = Prisma.ChatMessageGetPayload<object>;
type CallRow = Prisma.ChatToolCallGetPayload<object>;

function toSession(r: SessionRow): ChatSession {
  const budget = r.budget === null ? null : Budget.safeParse(r.budget);
  return {
    id: r.id,
    ownerId: r.ownerId,
    agentId: r.agentId,
    permissionMode: r.permissionMode as PermissionMode,
    title: r.title,
    budget: budget?.success ? budget.data : null,
    status: r.status as ChatTurnStatus,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

function toMessage(r: MessageRow): ChatMessage {
  const usage = r.usage === null ? undefined : BudgetUsage.safeParse(r.usage);
  return {
    id: r.id,
    seq: r.seq,
    role: r.role as ChatRole,
    content: r.content,
    ...(r.role === 'assistant' ? { callIds: r.callIds } : {}),
    ...(r.callId ? { callId: r.callId } : {}),
    createdAt: r.createdAt.toISOString(),
    ...(usage?.success ? { usage: usage.data } : {}),
  };
}

function toToolCall(r: CallRow): ChatToolCall {
  const decision = PermissionDecision.safeParse(r.decision);
  const error = ChatError.safeParse(r.error);
  const effect = ToolEffect.safeParse(r.effect);
  return {
    callId: r.callId,
    tool: r.tool,
    arguments: r.arguments as Record<string, unknown>,
    messageId: r.messageId,
    status: r.status as ChatToolCallStatus,
    ...(effect.success ? { effect: effect.data } : {}),
    ...(decision.success ? { decision: decision.data } : {}),
    ...(r.editedArguments !== null ? { editedArguments: r.editedArguments as Record<string, unknown> } : {}),
    // A completed call whose value is JSON null reads back as null (Prisma does not tell it from SQL NULL).
    ...(r.result !== null || r.status === 'completed' ? { result: r.result } : {}),
    ...(error.success ? { error: error.data } : {}),
    ...(r.durationMs !== null ? { durationMs: r.durationMs } : {}),
  };
}

const json = (v: unknown) => v as Prisma.InputJsonValue;

/**
 * The chat tables (the executor's): sessions, their messages and tool calls, and the turn events.
 * Every method takes the owner: another owner's session is `not_found`. Events get gapless sequence
 * numbers the way run events do: the append bumps the session's `next_seq` in the statement that
 * inserts them.
 */
@Injectable()
export class ChatRepository {
  /** `pool`: raw pg for a turn's writes (prepared statements, like the run log's); else Prisma. */
  constructor(
    @Inject(PRISMA) private readonly db: PrismaClient,
    @Optional() @Inject(RUNS_POOL) private readonly pool?: Pool,
  ) {}

  /** Runs a statement through the pool (prepared once per connection) or Prisma. */
  private async query<T>(name: string, text: string, values: unknown[]): Promise<T[]> {
    if (this.pool) return (await this.pool.query({ name, text, values })).rows as T[];
    return this.db.$queryRawUnsafe<T[]>(text, ...values);
  }

  async create(ownerId: string, s: NewChatSession): Promise<ChatSession> {
    const row = await this.db.chatSession.create({
      data: {
        id: randomUUID(),
        ownerId,
        agentId: s.agentId ?? null,
        permissionMode: s.permissionMode,
        title: storableText(s.title ?? ''),
        ...(s.budget ? { budget: json(s.budget) } : {}),
      },
    });
    return toSession(row);
  }

  async get(ownerId: string, id: string): Promise<ChatSession> {
    const row = await this.db.chatSession.findFirst({ where: { id, ownerId } });
    if (!row) throw new AppError('not_found', `chat session ${id} does not exist`);
    return toSession(row);
  }

  /** The session with the replica driving its turn (if any). */
  async getDriven(ownerId: string, id: string): Promise<ChatSession & { replica: string | null }> {
    const row = await this.db.chatSession.findFirst({ where: { id, ownerId } });
    if (!row) throw new AppError('not_found', `chat session ${id} does not exist`);
    return { ...toSession(row), replica: row.replica };
  }

  async list(ownerId: string, q: ChatSessionListQuery): Promise<ChatSessionPage> {
    const cursor = q.cursor ? decodeKeysetCursor(q.cursor) : undefined;
    const rows = await this.db.chatSession.findMany({
      where: {
        ownerId,
        ...(q.q ? { title: { contains: q.q, mode: 'insensitive' } } : {}),
        ...(cursor
          ? {
              OR: [{ createdAt: { lt: cursor.at } }, { createdAt: cursor.at, id: { lt: cursor.id } }],
            }
          : {}),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: q.limit + 1,
    });
    const items = rows.slice(0, q.limit);
    const last = items[items.length - 1];
    return {
      items: items.map(toSession),
      nextCursor: rows.length > q.limit && last ? encodeKeysetCursor(last.createdAt, last.id) : null,
    };
  }

  async detail(ownerId: string, id: string): Promise<ChatSessionDetail> {
    const row = await this.db.chatSession.findFirst({
      where: { id, ownerId },
      include: { messages: { orderBy: { seq: 'asc' } }, toolCalls: { orderBy: { createdAt: 'asc' } } },
    });
    if (!row) throw new AppError('not_found', `chat session ${id} does not exist`);
    return {
      ...toSession(row),
      messages: row.messages.map(toMessage),
      toolCalls: row.toolCalls.map(toToolCall),
      lastEventId: row.nextSeq - 1,
    };
  }

  async update(ownerId: string, id: string, patch: ChatSessionPatch): Promise<ChatSession> {
    const { count } = await this.db.chatSession.updateMany({
      where: { id, ownerId },
      data: {
        ...(patch.permissionMode ? { permissionMode: patch.permissionMode } : {}),
        ...(patch.title !== undefined ? { title: storableText(patch.title) } : {}),
        ...(patch.budget !== undefined
          ? { budget: patch.budget === null ? Prisma.DbNull : json(patch.budget) }
          : {}),
        updatedAt: new Date(),
      },
    });
    if (!count) throw new AppError('not_found', `chat session ${id} does not exist`);
    return this.get(ownerId, id);
  }

  async delete(ownerId: string, id: string): Promise<ChatSession> {
    const session = await this.get(ownerId, id);
    await this.db.chatSession.deleteMany({ where: { id, ownerId } });
    return session;
  }

  /**
   * Marks a turn as started on `replica`, unless one is in progress: false then. `takeOver` names a
   * replica known to have stopped driving the session (it no longer answers): its turn is replaced.
   * With `admit`, a new turn (not a takeover, which keeps its slot) must fit the owner's and the
   * deployment's foreground limits: `capacity_exceeded` otherwise.
   */
  async claimTurn(
    ownerId: string,
    id: string,
    replica: string,
    takeOver?: string,
    admit?: ForegroundLimits,
  ): Promise<boolean> {
    const text = `UPDATE chat_session SET status = 'running', replica = $3, updated_at = now()
       WHERE id = $1::uuid AND owner_id = $2::uuid
         AND (status NOT IN ('running', 'awaiting_approval') OR ($4::text IS NOT NULL AND replica = $4))
       RETURNING id`;
    const values = [id, ownerId, replica, takeOver ?? null];
    const rows =
      admit && takeOver === undefined
        ? await admitForeground({ pool: this.pool, prisma: this.db }, ownerId, admit, (q) => q(text, values))
        : await this.db.$queryRawUnsafe<unknown[]>(text, ...values);
    return rows.length > 0;
  }

  /** Gives up a turn that never got going (its first write failed). */
  async releaseTurn(ownerId: string, id: string, replica: string): Promise<void> {
    await this.db.$executeRawUnsafe(
      `UPDATE chat_session SET status = 'failed', replica = NULL, updated_at = now()
       WHERE id = $1::uuid AND owner_id = $2::uuid AND replica = $3`,
      id,
      ownerId,
      replica,
    );
  }

  /** The status of a turn this replica drives (between events: a card answered). */
  async setStatus(ownerId: string, id: string, replica: string, status: ChatTurnStatus): Promise<void> {
    await this.db.chatSession.updateMany({
      where: { id, ownerId, replica },
      data: { status, updatedAt: new Date() },
    });
  }

  /** Sets the title unless one is set. */
  async titleIfEmpty(ownerId: string, id: string, title: string): Promise<void> {
    await this.db.chatSession.updateMany({
      where: { id, ownerId, title: '' },
      data: { title: storableText(title) },
    });
  }

  /**
   * Appends a message with the session's next number. Messages are written by one writer at a time
   * (the person's while the turn is claimed, then the turn's one after another), so the number is
   * read, not reserved: the session row is not locked, and the event log's appends never wait for a
   * message (a second writer would hit the unique (session, seq) index instead of interleaving).
   */
  async addMessage(ownerId: string, sessionId: string, m: NewChatMessage): Promise<ChatMessage> {
    const rows = await this.query<MessageRow>(
      'chat_add_message',
      `INSERT INTO chat_message (id, session_id, seq, role, content, call_ids, call_id, usage)
       SELECT $3::uuid, s.id, COALESCE((SELECT MAX(seq) FROM chat_message WHERE session_id = s.id), 0) + 1,
              $4, $5, $6::text[], $7, $8::jsonb
       FROM chat_session s WHERE s.id = $1::uuid AND s.owner_id = $2::uuid
       RETURNING id, session_id AS "sessionId", seq, role, content, call_ids AS "callIds", call_id AS "callId", usage, created_at AS "createdAt"`,
      [
        sessionId,
        ownerId,
        randomUUID(),
        m.role,
        storableText(m.content),
        [...(m.callIds ?? [])],
        m.callId ?? null,
        m.usage ? JSON.stringify(m.usage) : null,
      ],
    );
    const row = rows[0];
    if (!row) throw new AppError('not_found', `chat session ${sessionId} does not exist`);
    return toMessage({ ...row, seq: Number(row.seq) });
  }

  /** Tool messages (what the model reads for each call), numbered in order after the last message. */
  async addToolMessages(
    ownerId: string,
    sessionId: string,
    answers: ReadonlyArray<{ readonly callId: string; readonly content: string }>,
  ): Promise<void> {
    if (!answers.length) return;
    const rows = await this.query<{ seq: number }>(
      'chat_add_tool_messages',
      `INSERT INTO chat_message (id, session_id, seq, role, content, call_id)
       SELECT gen_random_uuid(), s.id, base.m + e.ord, 'tool', e.content, e.call_id
       FROM chat_session s,
            LATERAL (SELECT COALESCE(MAX(seq), 0) AS m FROM chat_message WHERE session_id = s.id) base,
            ROWS FROM (jsonb_to_recordset($3::jsonb) AS (call_id text, content text)) WITH ORDINALITY AS e(call_id, content, ord)
       WHERE s.id = $1::uuid AND s.owner_id = $2::uuid
       RETURNING seq`,
      [
        sessionId,
        ownerId,
        JSON.stringify(answers.map((a) => ({ call_id: a.callId, content: storableText(a.content) }))),
      ],
    );
    if (!rows.length) throw new AppError('not_found', `chat session ${sessionId} does not exist`);
  }

  /** The conversation so far, for the model: messages in order and every tool call by id. */
  async history(
    ownerId: string,
    sessionId: string,
  ): Promise<{ messages: ChatMessage[]; calls: Map<string, ChatToolCall> }> {
    const detail = await this.detail(ownerId, sessionId);
    return { messages: detail.messages, calls: new Map(detail.toolCalls.map((c) => [c.callId, c])) };
  }

  async addToolCall(
    ownerId: string,
    sessionId: string,
    c: {
      callId: string;
      messageId: string;
      tool: string;
      arguments: Record<string, unknown>;
      effect?: string;
      status?: ChatToolCallStatus;
      decision?: PermissionDecision;
    },
  ): Promise<void> {
    const rows = await this.query<{ callId: string }>(
      'chat_add_tool_call',
      `INSERT INTO chat_tool_call (session_id, call_id, message_id, tool, arguments, effect, status, decision)
       SELECT id, $3, $4::uuid, $5, $6::jsonb, $7, $8, $9::jsonb FROM chat_session WHERE id = $1::uuid AND owner_id = $2::uuid
       RETURNING call_id AS "callId"`,
      [
        sessionId,
        ownerId,
        c.callId,
        c.messageId,
        c.tool,
        JSON.stringify(c.arguments),
        c.effect ?? null,
        c.status ?? 'pending',
        c.decision ? JSON.stringify(c.decision) : null,
      ],
    );
    if (!rows.length) throw new AppError('not_found', `chat session ${sessionId} does not exist`);
  }

  async updateToolCall(ownerId: string, sessionId: string, callId: string, p: ToolCallPatch): Promise<void> {
    await this.query(
      'chat_update_tool_call',
      `UPDATE chat_tool_call t SET
         status = COALESCE($4, t.status),
         decision = COALESCE($5::jsonb, t.decision),
         edited_arguments = COALESCE($6::jsonb, t.edited_arguments),
         result = CASE WHEN $7::boolean THEN $8::jsonb ELSE t.result END,
         error = COALESCE($9::jsonb, t.error),
         duration_ms = COALESCE($10::float8, t.duration_ms),
         updated_at = now()
       FROM chat_session s
       WHERE t.session_id = $1::uuid AND t.call_id = $3 AND s.id = t.session_id AND s.owner_id = $2::uuid`,
      [
        sessionId,
        ownerId,
        callId,
        p.status ?? null,
        p.decision ? JSON.stringify(p.decision) : null,
        p.editedArguments ? JSON.stringify(p.editedArguments) : null,
        p.result !== undefined,
        p.result !== undefined ? JSON.stringify(p.result ?? null) : null,
        p.error ? JSON.stringify(p.error) : null,
        p.durationMs ?? null,
      ],
    );
  }

  /** Tool calls of the session still open (a turn that ended leaves none open). */
  async closeOpenCalls(ownerId: string, sessionId: string, status: ChatToolCallStatus): Promise<void> {
    await this.db.chatToolCall.updateMany({
      where: { sessionId, session: { ownerId }, status: { in: ['pending', 'awaiting_approval', 'running'] } },
      data: { status, updatedAt: new Date() },
    });
  }

  /**
   * Stores events with the next sequence numbers of the session (and the session row's change), in
   * one statement; only while `replica` drives the session.
   */
  async append(
    ownerId: string,
    sessionId: string,
    events: readonly ChatEventBody[],
    replica: string,
    update?: ChatSessionUpdate,
  ): Promise<ChatEvent[]> {
    if (!events.length) return [];
    // The rows give back only what the statement decided (numbers, times): the bodies are the ones sent.
    const rows = await this.query<{ seq: number; at: Date }>(
      'chat_append',
      `WITH bumped AS (
         UPDATE chat_session SET next_seq = next_seq + $3, updated_at = now(),
           status = COALESCE($6, status),
           replica = CASE WHEN $7::boolean THEN NULL ELSE replica END
         WHERE id = $1::uuid AND owner_id = $2::uuid AND replica = $5
         RETURNING next_seq - $3 AS first_seq
       )
       INSERT INTO chat_event (session_id, seq, type, data)
       SELECT $1::uuid, bumped.first_seq + e.ord - 1, e.type, COALESCE(e.data, '{}'::jsonb)
       FROM bumped, ROWS FROM (jsonb_to_recordset($4::jsonb) AS (type text, data jsonb)) WITH ORDINALITY AS e(type, data, ord)
       RETURNING seq, created_at AS at`,
      [
        sessionId,
        ownerId,
        events.length,
        JSON.stringify(events.map((e) => ({ type: e.type, data: e.data }))),
        replica,
        update?.status ?? null,
        update?.release === true,
      ],
    );
    if (!rows.length)
      throw new AppError('conflict', `chat session ${sessionId} is not driven by this replica any more`);
    const stamps = rows.map((r) => ({ seq: Number(r.seq), at: new Date(r.at).toISOString() }));
    stamps.sort((a, b) => a.seq - b.seq);
    return events.map((e, i) => ({ ...e, sessionId, ...stamps[i]! }) as ChatEvent);
  }
}
