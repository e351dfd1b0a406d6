import { Inject, Injectable } from '@nestjs/common';
import { AppError, PluginManifest } from '@switchyard/contracts';
import { Prisma, type Plugin, type PrismaClient } from '@prisma/client';
import { PRISMA } from '@switchyard/server-db';

/** An installed plugin as the registry works with it (manifest parsed, dates as ISO strings). */
export interface PluginRow {
  readonly id: string;
  readonly version: string;
  readonly name: string;
  readonly description: string;
  readonly manifest: PluginManifest;
  readonly installDir: string;
  readonly enabled: boolean;
  readonly networkGranted: boolean;
  readonly filesGranted: boolean;
  readonly settingsEnc: string | null;
  readonly hooksTrusted: boolean;
  readonly installedAt: string;
  readonly updatedAt: string;
}

/** What an install writes: the bundle's identity; grants, settings and trust are left as they are. */
export interface PluginInstall {
  readonly id: string;
  readonly version: string;
  readonly name: string;
  readonly description: string;
  readonly manifest: PluginManifest;
  readonly installDir: string;
}

export interface PluginWrite {
  enabled?: boolean;
  networkGranted?: boolean;
  filesGranted?: boolean;
  settingsEnc?: string | null;
}

function toRow(p: Plugin, manifest: PluginManifest = PluginManifest.parse(p.manifest)): PluginRow {
  return {
    id: p.id,
    version: p.version,
    name: p.name,
    description: p.description,
    // Stored only after validation; parsing again fills defaults a later version of the schema added.
    manifest,
    installDir: p.installDir,
    enabled: p.enabled,
    networkGranted: p.networkGranted,
    filesGranted: p.filesGranted,
    settingsEnc: p.settingsEnc,
    hooksTrusted: p.hooksTrusted,
    installedAt: p.installedAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}

/** Installed plugins (admin-managed, one catalog for every owner: no owner column). */
@Injectable()
export class PluginRepository {
  constructor(@Inject(PRISMA) private readonly prisma: PrismaClient) {}

  async all(): Promise<PluginRow[]> {
    return (await this.prisma.plugin.findMany({ orderBy: { id: 'asc' } })).map((p) => toRow(p));
  }

  /**
   * Enabled plugins whose stored manifest still reads as one: a row that does not (written around
   * the installer, or by a version whose schema this one no longer takes) stays out of the catalog
   * instead of failing every caller's catalog.
   */
  async enabled(): Promise<PluginRow[]> {
    const rows = await this.prisma.plugin.findMany({ where: { enabled: true }, orderBy: { id: 'asc' } });
    return rows.flatMap((p) => {
      const manifest = PluginManifest.safeParse(p.manifest);
      return manifest.success ? [toRow(p, manifest.data)] : [];
    });
  }

  async find(id: string): Promise<PluginRow | undefined> {
    const row = await this.prisma.plugin.findUnique({ where: { id } });
    return row ? toRow(row) : undefined;
  }

  async get(id: string): Promise<PluginRow> {
    const row = await this.find(id);
    if (!row) throw new AppError('not_found', `no plugin ${id} is installed`);
    return row;
  }

  /**
   * Installs or upgrades: a new id starts disabled with nothing granted; an existing one keeps its
   * enabled state, grants, settings and hook trust (an upgrade is the same plugin, newer).
   */
  async upsert(p: PluginInstall): Promise<{ row: PluginRow; previous: PluginRow | undefined }> {
    return this.prisma.$transaction(async (tx) => {
      const before = await tx.plugin.findUnique({ where: { id: p.id } });
      const data = {
        version: p.version,
        name: p.name,
        description: p.description,
        manifest: p.manifest as unknown as Prisma.InputJsonValue,
        installDir: p.installDir,
      };
      const row = before
        ? await tx.plugin.update({ where: { id: p.id }, data })
        : await tx.plugin.create({ data: { id: p.id, ...data } });
      return { row: toRow(row), previous: before ? toRow(before) : undefined };
    });
  }

  async update(id: string, data: PluginWrite): Promise<PluginRow> {
    try {
      return toRow(await this.prisma.plugin.update({ where: { id }, data }));
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2025')
        throw new AppError('not_found', `no plugin ${id} is installed`);
      throw err;
    }
  }

  async delete(id: string): Promise<PluginRow> {
    try {
      return toRow(await this.prisma.plugin.delete({ where: { id } }));
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2025')
        throw new AppError('not_found', `no plugin ${id} is installed`);
      throw err;
    }
  }
}
