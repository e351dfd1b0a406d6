import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '@switchyard/contracts';
import type { PrismaClient, Plugin } from '@prisma/client';
import { PRISMA } from '@switchyard/server-db';

/** What the executor needs of an installed plugin to run (or list) its hooks. */
export interface PluginHookRow {
  readonly id: string;
  readonly name: string;
  readonly version: string;
  readonly installDir: string;
  readonly enabled: boolean;
  readonly hooksTrusted: boolean;
  readonly hooksTrustedAt: Date | null;
  /** SHA-256 of the hooks file as trusted. */
  readonly hooksDigest: string | null;
}

function toRow(p: Plugin): PluginHookRow {
  return {
    id: p.id,
    name: p.name,
    version: p.version,
    installDir: p.installDir,
    enabled: p.enabled,
    hooksTrusted: p.hooksTrusted,
    hooksTrustedAt: p.hooksTrustedAt,
    hooksDigest: p.hooksDigest,
  };
}

/**
 * The plugin table as the executor sees it: it reads installed plugins (the tool registry installs
 * them) and writes only their hook trust (`hooks_trusted`, `hooks_trusted_at`, `hooks_digest`).
 */
@Injectable()
export class PluginHooksRepository {
  constructor(@Inject(PRISMA) private readonly prisma: PrismaClient) {}

  async all(): Promise<PluginHookRow[]> {
    return (await this.prisma.plugin.findMany({ orderBy: { id: 'asc' } })).map(toRow);
  }

  /** Enabled plugins whose hooks an admin trusts: the only ones whose hooks may run. */
  async trustedEnabled(): Promise<PluginHookRow[]> {
    const rows = await this.prisma.plugin.findMany({
      where: { enabled: true, hooksTrusted: true, hooksDigest: { not: null } },
      orderBy: { id: 'asc' },
    });
    return rows.map(toRow);
  }

  async get(id: string): Promise<PluginHookRow> {
    const row = await this.prisma.plugin.findUnique({ where: { id } });
    if (!row) throw new AppError('not_found', `no plugin ${id} is installed`);
    return toRow(row);
  }

  /** Trust (with the digest of the file trusted) or untrust a plugin's hooks. */
  async setTrust(id: string, digest: string | null, at: Date): Promise<PluginHookRow> {
    const row = await this.prisma.plugin.update({
      where: { id },
      data: { hooksTrusted: digest !== null, hooksTrustedAt: digest ? at : null, hooksDigest: digest },
    });
    return toRow(row);
  }
}
