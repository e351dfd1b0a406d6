import { Inject, Injectable } from '@nestjs/common';
import { AppError, type ChatEvent, type ChatEventBody } from '@switchyard/contracts';
import { PRISMA, type PrismaClient } from '@switchyard/server-db';

/** A chat_event row as the chat repositories' SQL returns it (`created_at AS at`). */
export type ChatEventRow = ChatEventBody & { seq: number; at: Date };

export function toChatEvent(sessionId: string, r: ChatEventRow): ChatEvent {
  return { ...r, sessionId, seq: Number(r.seq), at: new Date(r.at).toISOString() } as ChatEvent;
}

/**
 * The read-only face of the chat event log, for the gateway's stream: a session is only ever visible
 * to its owner. The executor writes the log (libs/server/db-runs ChatRepository).
 */
@Injectable()
export class ChatEventsReader {
  constructor(@Inject(PRISMA) private readonly prisma: PrismaClient) {}

  /** not_found unless the session is the owner's. */
  async assertOwned(sessionId: string, ownerId: string): Promise<void> {
    const row = await this.prisma.chatSession.findFirst({
      where: { id: sessionId, ownerId },
      select: { id: true },
    });
    if (!row) throw new AppError('not_found', `chat session ${sessionId} does not exist`);
  }

  /** Events after `afterSeq` in order, at most `limit`. */
  async readAfter(sessionId: string, afterSeq: number, limit = 500): Promise<ChatEvent[]> {
    const rows = await this.prisma.$queryRawUnsafe<ChatEventRow[]>(
      'SELECT seq, type, data, created_at AS at FROM chat_event WHERE session_id = $1::uuid AND seq > $2 ORDER BY seq LIMIT $3',
      sessionId,
      afterSeq,
      limit,
    );
    return rows.map((r) => toChatEvent(sessionId, r));
  }
}
