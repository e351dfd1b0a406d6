import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AppError, type McpOAuthState, type McpToolOAuthStatus } from '@switchyard/contracts';
import type { McpOAuthGrant, PrismaClient } from '@prisma/client';
import { PRISMA } from '@switchyard/server-db';

export interface McpOAuthGrantRow {
  readonly recordId: number;
  readonly grant: McpToolOAuthStatus['grant'];
  readonly state: McpOAuthState;
  readonly reason: string | null;
  /** Sealed (SecretBox) JSON of the registered client, the tokens and the discovered metadata. */
  readonly secretsEnc: string | null;
  readonly connectedAt: string | null;
  readonly connectedBy: string | null;
}

/** A Connect in progress, found by its state parameter. */
export interface McpOAuthStartRow {
  readonly recordId: number;
  readonly ownerId: string;
  readonly verifierEnc: string;
  readonly redirectUri: string;
  readonly expiresAt: Date;
}

const hashState = (state: string) => createHash('sha256').update(state).digest('hex');

function toGrant(g: McpOAuthGrant): McpOAuthGrantRow {
  return {
    recordId: g.recordId,
    grant: g.grant === 'client_credentials' ? 'client_credentials' : 'authorization_code',
    state: g.state === 'connected' || g.state === 'reconnect' ? g.state : 'not_connected',
    reason: g.reason,
    secretsEnc: g.secretsEnc,
    connectedAt: g.connectedAt?.toISOString() ?? null,
    connectedBy: g.connectedBy,
  };
}

export function oauthStatusOf(g: McpOAuthGrantRow): McpToolOAuthStatus {
  return {
    grant: g.grant,
    state: g.state,
    reason: g.reason,
    connectedAt: g.connectedAt,
    connectedBy: g.connectedBy,
  };
}

/**
 * OAuth grants of REMOTE tool records (one per record, shared by every owner who uses the record)
 * and the Connects in progress. Admin-managed like the records themselves: no owner scope, except
 * that a start is bound to the owner who made it.
 */
@Injectable()
export class McpOAuthRepository {
  constructor(@Inject(PRISMA) private readonly prisma: PrismaClient) {}

  async grant(recordId: number): Promise<McpOAuthGrantRow | undefined> {
    const g = await this.prisma.mcpOAuthGrant.findUnique({ where: { recordId } });
    return g ? toGrant(g) : undefined;
  }

  async grants(recordIds: number[]): Promise<Map<number, McpOAuthGrantRow>> {
    if (!recordIds.length) return new Map();
    const rows = await this.prisma.mcpOAuthGrant.findMany({ where: { recordId: { in: recordIds } } });
    return new Map(rows.map((g) => [g.recordId, toGrant(g)]));
  }

  /** The record's configuration was replaced: a fresh, unconnected grant (or none without OAuth). */
  async reset(recordId: number, grant: McpToolOAuthStatus['grant'] | undefined): Promise<void> {
    if (!grant) {
      await this.prisma.mcpOAuthGrant.deleteMany({ where: { recordId } });
      return;
    }
    const fresh = {
      grant,
      state: 'not_connected',
      reason: 'not connected yet: Connect signs in with the provider',
      secretsEnc: null,
      connectedAt: null,
      connectedBy: null,
    };
    await this.prisma.mcpOAuthGrant.upsert({
      where: { recordId },
      create: { recordId, ...fresh },
      update: fresh,
    });
  }

  /** Stores what the OAuth client learned (a registration, new tokens, metadata); the state is unchanged. */
  async saveSecrets(recordId: number, secretsEnc: string): Promise<void> {
    await this.prisma.mcpOAuthGrant.updateMany({ where: { recordId }, data: { secretsEnc } });
  }

  async markConnected(recordId: number, secretsEnc: string, by: string | null): Promise<void> {
    const { count } = await this.prisma.mcpOAuthGrant.updateMany({
      where: { recordId },
      data: { secretsEnc, state: 'connected', reason: null, connectedAt: new Date(), connectedBy: by },
    });
    if (!count) throw new AppError('conflict', `tool record ${recordId} no longer signs in with OAuth`);
  }

  /** The provider refused the grant: its tools leave the catalog until someone reconnects. */
  async markReconnect(recordId: number, reason: string): Promise<void> {
    await this.prisma.mcpOAuthGrant.updateMany({ where: { recordId }, data: { state: 'reconnect', reason } });
  }

  async start(s: { state: string } & Omit<McpOAuthStartRow, 'expiresAt'> & { ttlMs: number }): Promise<void> {
    // Expired starts of anyone are dropped on the way: they can never complete.
    await this.prisma.mcpOAuthStart.deleteMany({ where: { expiresAt: { lt: new Date() } } });
    await this.prisma.mcpOAuthStart.create({
      data: {
        stateHash: hashState(s.state),
        recordId: s.recordId,
        ownerId: s.ownerId,
        verifierEnc: s.verifierEnc,
        redirectUri: s.redirectUri,
        expiresAt: new Date(Date.now() + s.ttlMs),
      },
    });
  }

  /** Takes the start of `state` (single use: a second take finds nothing), expired or not. */
  async take(state: string): Promise<McpOAuthStartRow | undefined> {
    // One statement: two callbacks racing with the same state cannot both find it.
    const rows = await this.prisma.$queryRaw<
      Array<{
        record_id: number;
        owner_id: string;
        verifier_enc: string;
        redirect_uri: string;
        expires_at: Date;
      }>
    >`DELETE FROM mcp_oauth_start WHERE state_hash = ${hashState(state)}
      RETURNING record_id, owner_id::text AS owner_id, verifier_enc, redirect_uri, expires_at`;
    const r = rows[0];
    return r
      ? {
          recordId: r.record_id,
          ownerId: r.owner_id,
          verifierEnc: r.verifier_enc,
          redirectUri: r.redirect_uri,
          expiresAt: r.expires_at,
        }
      : undefined;
  }
}
