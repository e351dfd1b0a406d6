import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  AppError,
  MEMORY_PER_OWNER_MAX,
  type Memory,
  type MemoryPage,
  type ScoredMemory,
} from '@switchyard/contracts';
import type { PrismaClient } from '@prisma/client';
import { decodeKeysetCursor, encodeKeysetCursor, likePattern, PRISMA } from '@switchyard/server-db';
import { keywords, rankMemories } from './ranking';

interface MemoryDbRow {
  id: string;
  text: string;
  keywords: string[];
  created_at: Date;
  last_used_at: Date | null;
}

const COLUMNS = 'id, text, keywords, created_at, last_used_at';

const iso = (d: Date): string => new Date(d).toISOString();

function toMemory(r: MemoryDbRow): Memory {
  return {
    id: r.id,
    text: r.text,
    createdAt: iso(r.created_at),
    lastUsedAt: r.last_used_at ? iso(r.last_used_at) : null,
  };
}

export function memoryNotFound(id: string): AppError {
  return new AppError('not_found', `memory ${id} does not exist`);
}

export function memoryOff(): AppError {
  return new AppError(
    'conflict',
    'memory is off for you: turn it on in Settings → Memory (PUT /api/settings/memory {"enabled": true})',
  );
}

/** `%`, `_` and `\` stand for themselves in a search. */

/**
 * The owners' memories and memory settings, written by the planner. Every method takes the owner;
 * another owner's memory is "not found". No setting row means memory is off.
 */
@Injectable()
export class MemoryRepository {
  constructor(@Inject(PRISMA) private readonly prisma: PrismaClient) {}

  private query<T>(text: string, ...values: unknown[]): Promise<T[]> {
    return this.prisma.$queryRawUnsafe<T[]>(text, ...values);
  }

  async enabled(ownerId: string): Promise<boolean> {
    const [row] = await this.query<{ enabled: boolean }>(
      'SELECT enabled FROM memory_setting WHERE owner_id = $1::uuid',
      ownerId,
    );
    return row?.enabled ?? false;
  }

  async setEnabled(ownerId: string, enabled: boolean): Promise<boolean> {
    const [row] = await this.query<{ enabled: boolean }>(
      `INSERT INTO memory_setting (owner_id, enabled) VALUES ($1::uuid, $2)
       ON CONFLICT (owner_id) DO UPDATE SET enabled = EXCLUDED.enabled, updated_at = now()
       RETURNING enabled`,
      ownerId,
      enabled,
    );
    return row?.enabled ?? enabled;
  }

  /**
   * Stores a fact while memory is on and the owner is under the limit: both checked with the
   * owner's setting row locked, so a remember racing a switch-off or another remember cannot pass.
   */
  async remember(ownerId: string, text: string, now = new Date()): Promise<Memory> {
    return this.prisma.$transaction(async (tx) => {
      const [setting] = await tx.$queryRawUnsafe<Array<{ enabled: boolean }>>(
        'SELECT enabled FROM memory_setting WHERE owner_id = $1::uuid FOR UPDATE',
        ownerId,
      );
      if (!setting?.enabled) throw memoryOff();
      const [count] = await tx.$queryRawUnsafe<Array<{ n: number }>>(
        'SELECT count(*)::int AS n FROM memory WHERE owner_id = $1::uuid',
        ownerId,
      );
      if ((count?.n ?? 0) >= MEMORY_PER_OWNER_MAX) {
        throw new AppError(
          'conflict',
          `you have ${MEMORY_PER_OWNER_MAX} memories, the most kept per person: forget some before remembering more`,
          { details: { limit: MEMORY_PER_OWNER_MAX } },
        );
      }
      const [row] = await tx.$queryRawUnsafe<MemoryDbRow[]>(
        `INSERT INTO memory (id, owner_id, text, keywords, created_at)
         VALUES ($1::uuid, $2::uuid, $3, $4::text[], $5)
         RETURNING ${COLUMNS}`,
        randomUUID(),
        ownerId,
        text,
        keywords(text),
        now,
      );
      return toMemory(row as MemoryDbRow);
    });
  }

  /**
   * The owner's memories that share a keyword with the query, ranked (see `rankMemories`); with
   * `touch`, the found ones are marked used now.
   */
  async search(
    ownerId: string,
    query: string,
    opts: { limit: number; touch: boolean; now?: Date },
  ): Promise<ScoredMemory[]> {
    const tokens = keywords(query);
    if (!tokens.length) return [];
    const now = opts.now ?? new Date();
    // Candidates through the GIN index; an owner has at most MEMORY_PER_OWNER_MAX, ranked here.
    const rows = await this.query<MemoryDbRow>(
      `SELECT ${COLUMNS} FROM memory WHERE owner_id = $1::uuid AND keywords && $2::text[]`,
      ownerId,
      tokens,
    );
    const ranked = rankMemories(
      query,
      rows.map((r) => ({ row: r, keywords: r.keywords, createdAt: new Date(r.created_at) })),
      now,
      opts.limit,
    );
    if (opts.touch && ranked.length) {
      await this.query(
        'UPDATE memory SET last_used_at = $3 WHERE owner_id = $1::uuid AND id = ANY($2::uuid[]) RETURNING id',
        ownerId,
        ranked.map((r) => r.row.id),
        now,
      );
    }
    return ranked.map((r) => ({
      ...toMemory(r.row),
      ...(opts.touch ? { lastUsedAt: now.toISOString() } : {}),
      score: r.score,
    }));
  }

  /** Newest first, by keyset; `q` filters by contained text (case-insensitive). */
  async page(ownerId: string, opts: { limit: number; cursor?: string; q?: string }): Promise<MemoryPage> {
    const after = opts.cursor ? decodeKeysetCursor(opts.cursor) : undefined;
    const pattern = opts.q?.trim() ? likePattern(opts.q.trim()) : null;
    const rows = await this.query<MemoryDbRow>(
      `SELECT ${COLUMNS} FROM memory
       WHERE owner_id = $1::uuid
         AND ($2::text IS NULL OR text ILIKE $2)
         AND ($3::timestamptz IS NULL OR (created_at, id) < ($3::timestamptz, $4::uuid))
       ORDER BY created_at DESC, id DESC
       LIMIT $5`,
      ownerId,
      pattern,
      after?.at ?? null,
      after?.id ?? null,
      opts.limit + 1,
    );
    const [count] = await this.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM memory WHERE owner_id = $1::uuid AND ($2::text IS NULL OR text ILIKE $2)',
      ownerId,
      pattern,
    );
    const items = rows.slice(0, opts.limit);
    const last = items[items.length - 1];
    return {
      items: items.map(toMemory),
      nextCursor:
        rows.length > opts.limit && last ? encodeKeysetCursor(new Date(iso(last.created_at)), last.id) : null,
      total: count?.n ?? 0,
    };
  }

  async forget(ownerId: string, id: string): Promise<Memory> {
    const [row] = await this.query<MemoryDbRow>(
      `DELETE FROM memory WHERE id = $1::uuid AND owner_id = $2::uuid RETURNING ${COLUMNS}`,
      id,
      ownerId,
    );
    if (!row) throw memoryNotFound(id);
    return toMemory(row);
  }
}
