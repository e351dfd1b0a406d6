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

/** A tool call's row as the model asked for it (with the gate's decision when there is one). */
export interface NewToolCall {
  readonly callId: string;
  readonly messageId: string;
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
  readonly effect?: string;
  readonly status?: ChatToolCallStatus;
  readonly decision?: PermissionDecision;
}

/**
 * Rows of the chat tables an append writes in the statement that stores its events, so a call's row
 * and its `tool_call` event, or its outcome, its tool message and its `tool_result` event, are one
 * write: all of them or none.
 */
export interface ChatRowChanges {
  readonly newCalls?: readonly NewToolCall[];
  readonly callPatches?: ReadonlyArray<{ readonly callId: string } & ToolCallPatch>;
  /** Tool messages (what the model reads for each call), numbered in order after the last message. */
  readonly toolMessages?: ReadonlyArray<{ readonly callId: string; readonly content: string }>;
}

/** Patches in order: a field a later patch sets wins (a result of JSON null is a value, not "unset"). */
function mergePatch<T extends ToolCallPatch>(a: T, b: ToolCallPatch): T {
  const out = { ...a } as Record<string, unknown>;
  for (const [k, v] of Object.entries(b)) if (v !== undefined) out[k] = v;
  return out as T;
}

/**
 * Several appends' row changes as one: in order, with a patch of a call written in the same changes
 * folded into its new row (one statement's parts all see the table as it was before it).
 */
export function mergeRowChanges(
  parts: ReadonlyArray<ChatRowChanges | undefined>,
): ChatRowChanges | undefined {
  const present = parts.filter((p): p is ChatRowChanges => p !== undefined);
  if (!present.length) return undefined;
  const fresh = new Map<string, NewToolCall & ToolCallPatch>();
  const patches = new Map<string, ToolCallPatch>();
  const toolMessages: Array<{ callId: string; content: string }> = [];
  for (const p of present) {
    for (const c of p.newCalls ?? []) fresh.set(c.callId, { ...c });
    for (const { callId, ...patch } of p.callPatches ?? []) {
      const row = fresh.get(callId);
      if (row) fresh.set(callId, mergePatch(row, patch));
      else patches.set(callId, mergePatch(patches.get(callId) ?? {}, patch));
    }
    toolMessages.push(...(p.toolMessages ?? []));
  }
  return {
    newCalls: [...fresh.values()],
    callPatches: [...patches].map(([callId, patch]) => ({ callId, ...patch })),
    toolMessages,
  };
}

/** A patch's columns as a row of the statement's JSON (a result boxed, so JSON null is a value). */
function patchColumns(p: ToolCallPatch) {
  return {
    status: p.status ?? null,
    decision: p.decision ?? null,
    edited_arguments: p.editedArguments ?? null,
    result_box: p.result !== undefined ? { v: p.result } : null,
    error: p.error ?? null,
    duration_ms: p.durationMs ?? null,
  };
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

  /** The conversation so far, for the model: messages in order and every tool call by id. */
  async history(
    ownerId: string,
    sessionId: string,
  ): Promise<{ messages: ChatMessage[]; calls: Map<string, ChatToolCall> }> {
    const detail = await this.detail(ownerId, sessionId);
    return { messages: detail.messages, calls: new Map(detail.toolCalls.map((c) => [c.callId, c])) };
  }

  /** Tool calls of the session still open (a turn that ended leaves none open). */
  async closeOpenCalls(ownerId: string, sessionId: string, status: ChatToolCallStatus): Promise<void> {
    await this.db.chatToolCall.updateMany({
      where: { sessionId, session: { ownerId }, status: { in: ['pending', 'awaiting_approval', 'running'] } },
      data: { status, updatedAt: new Date() },
    });
  }

  /**
   * Stores events with the next sequence numbers of the session (and the session row's change, and
   * the row changes that go with them, merged in order: `mergeRowChanges`), in one statement; only
   * while `replica` drives the session.
   */
  async append(
    ownerId: string,
    sessionId: string,
    events: readonly ChatEventBody[],
    replica: string,
    update?: ChatSessionUpdate,
    changes: ReadonlyArray<ChatRowChanges | undefined> = [],
  ): Promise<ChatEvent[]> {
    if (!events.length) return [];
    const rowsToo = mergeRowChanges(changes);
    const values = [
      sessionId,
      ownerId,
      events.length,
      JSON.stringify(events.map((e) => ({ type: e.type, data: e.data }))),
      replica,
      update?.status ?? null,
      update?.release === true,
    ];
    // The rows give back only what the statement decided (numbers, times): the bodies are the ones sent.
    const rows = rowsToo
      ? await this.query<{ seq: number; at: Date }>('chat_append_rows', APPEND_WITH_ROWS, [
          ...values,
          JSON.stringify(
            rowsToo.newCalls?.map((c) => ({
              call_id: c.callId,
              message_id: c.messageId,
              tool: c.tool,
              arguments: c.arguments,
              effect: c.effect ?? null,
              ...patchColumns(c),
            })) ?? [],
          ),
          JSON.stringify(rowsToo.callPatches?.map((p) => ({ call_id: p.callId, ...patchColumns(p) })) ?? []),
          JSON.stringify(
            rowsToo.toolMessages?.map((m) => ({ call_id: m.callId, content: storableText(m.content) })) ?? [],
          ),
        ])
      : await this.query<{ seq: number; at: Date }>('chat_append', `${BUMP} ${INSERT_EVENTS}`, values);
    if (!rows.length)
      throw new AppError('conflict', `chat session ${sessionId} is not driven by this replica any more`);
    const stamps = rows.map((r) => ({ seq: Number(r.seq), at: new Date(r.at).toISOString() }));
    stamps.sort((a, b) => a.seq - b.seq);
    return events.map((e, i) => ({ ...e, sessionId, ...stamps[i]! }) as ChatEvent);
  }
}

/** An append's first part: the session row, only while the replica drives it, gives the numbers. */
const BUMP = `WITH bumped AS (
  UPDATE chat_session SET next_seq = next_seq + $3, updated_at = now(),
    status = COALESCE($6, status),
    replica = CASE WHEN $7::boolean THEN NULL ELSE replica END
  WHERE id = $1::uuid AND owner_id = $2::uuid AND replica = $5
  RETURNING id, next_seq - $3 AS first_seq
)`;

const INSERT_EVENTS = `INSERT INTO chat_event (session_id, seq, type, data)
SELECT bumped.id, bumped.first_seq + e.ord - 1, e.type, COALESCE(e.data, '{}'::jsonb)
FROM bumped, ROWS FROM (jsonb_to_recordset($4::jsonb) AS (type text, data jsonb)) WITH ORDINALITY AS e(type, data, ord)
RETURNING seq, created_at AS at`;

/** A patch's columns in the statement's JSON rows (see patchColumns). */
const PATCH_COLUMNS = `status text, decision jsonb, edited_arguments jsonb, result_box jsonb, error jsonb, duration_ms float8`;

/**
 * An append that also writes tool calls' rows and tool messages. Nothing is written unless the
 * session row was (the owner's, driven by this replica): each part reads `bumped`.
 */
const APPEND_WITH_ROWS = `${BUMP},
new_calls AS (
  INSERT INTO chat_tool_call (session_id, call_id, message_id, tool, arguments, effect,
    status, decision, edited_arguments, result, error, duration_ms)
  SELECT bumped.id, c.call_id, c.message_id, c.tool, COALESCE(c.arguments, '{}'::jsonb), c.effect,
    COALESCE(c.status, 'pending'), c.decision, c.edited_arguments, c.result_box -> 'v', c.error, c.duration_ms
  FROM bumped, jsonb_to_recordset($8::jsonb) AS c(call_id text, message_id uuid, tool text, arguments jsonb,
    effect text, ${PATCH_COLUMNS})
),
patched AS (
  UPDATE chat_tool_call t SET
    status = COALESCE(p.status, t.status),
    decision = COALESCE(p.decision, t.decision),
    edited_arguments = COALESCE(p.edited_arguments, t.edited_arguments),
    result = CASE WHEN p.result_box IS NULL THEN t.result ELSE p.result_box -> 'v' END,
    error = COALESCE(p.error, t.error),
    duration_ms = COALESCE(p.duration_ms, t.duration_ms),
    updated_at = now()
  FROM bumped, jsonb_to_recordset($9::jsonb) AS p(call_id text, ${PATCH_COLUMNS})
  WHERE t.session_id = bumped.id AND t.call_id = p.call_id
),
answers AS (
  INSERT INTO chat_message (id, session_id, seq, role, content, call_id)
  SELECT gen_random_uuid(), bumped.id, base.m + a.ord, 'tool', a.content, a.call_id
  FROM bumped,
       LATERAL (SELECT COALESCE(MAX(seq), 0) AS m FROM chat_message WHERE session_id = bumped.id) base,
       ROWS FROM (jsonb_to_recordset($10::jsonb) AS (call_id text, content text)) WITH ORDINALITY AS a(call_id, content, ord)
)
${INSERT_EVENTS}`;
