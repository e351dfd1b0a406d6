import { Inject, Injectable } from '@nestjs/common';
import { AppError, type Hook, type HookBody, type RuleLists } from '@switchyard/contracts';
import type { PrismaClient, Hook as HookRow } from '@prisma/client';
import { PRISMA } from '@switchyard/server-db';

export const GLOBAL_SCOPE = 'global';

export interface StoredRules extends RuleLists {
  readonly updatedAt: string | null;
}

function toHook(r: HookRow): Hook {
  return {
    id: r.id,
    ownerId: r.ownerId,
    name: r.name,
    event: r.event as Hook['event'],
    matcher: r.matcher,
    type: r.type as Hook['type'],
    ...(r.command !== null ? { command: r.command } : {}),
    ...(r.url !== null ? { url: r.url } : {}),
    timeoutSeconds: r.timeoutSeconds,
    enabled: r.enabled,
    failClosed: r.failClosed,
    global: r.ownerId === null,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

function hookData(body: HookBody) {
  return {
    name: body.name,
    event: body.event,
    matcher: body.matcher,
    type: body.type,
    command: body.command ?? null,
    url: body.url ?? null,
    timeoutSeconds: body.timeoutSeconds,
    enabled: body.enabled,
    failClosed: body.failClosed,
  };
}

/** Permission rules (per owner and global) and hooks; written by the executor only. */
@Injectable()
export class PermissionsRepository {
  constructor(@Inject(PRISMA) private readonly prisma: PrismaClient) {}

  /** `scope`: an owner id, or GLOBAL_SCOPE. No row yet: empty lists. */
  async rules(scope: string): Promise<StoredRules> {
    const row = await this.prisma.permissionSettings.findUnique({ where: { scope } });
    return {
      allow: row?.allow ?? [],
      ask: row?.ask ?? [],
      deny: row?.deny ?? [],
      updatedAt: row ? row.updatedAt.toISOString() : null,
    };
  }

  async putRules(scope: string, lists: RuleLists): Promise<StoredRules> {
    const data = { allow: lists.allow, ask: lists.ask, deny: lists.deny, updatedAt: new Date() };
    const row = await this.prisma.permissionSettings.upsert({
      where: { scope },
      create: { scope, ...data },
      update: data,
    });
    return { allow: row.allow, ask: row.ask, deny: row.deny, updatedAt: row.updatedAt.toISOString() };
  }

  /** The owner's hooks and the global ones, oldest first. */
  async hooks(ownerId: string, opts: { enabledOnly?: boolean } = {}): Promise<Hook[]> {
    const rows = await this.prisma.hook.findMany({
      where: {
        OR: [{ ownerId }, { ownerId: null }],
        ...(opts.enabledOnly ? { enabled: true } : {}),
      },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    return rows.map(toHook);
  }

  /**
   * A hook the caller may change: their own, or (admins) a global one. Another owner's hook is
   * hidden (not_found, like a missing one); a global hook is listed to everyone, so changing it
   * without being an admin is a missing permission (forbidden).
   */
  async ownHook(id: string, ownerId: string, admin: boolean): Promise<Hook> {
    const row = await this.prisma.hook.findUnique({ where: { id } });
    if (!row || (row.ownerId !== null && row.ownerId !== ownerId))
      throw new AppError('not_found', `hook ${id} does not exist`);
    if (row.ownerId === null && !admin)
      throw new AppError('forbidden', 'only admins may change global hooks');
    return toHook(row);
  }

  async createHook(ownerId: string | null, body: HookBody): Promise<Hook> {
    return toHook(await this.prisma.hook.create({ data: { ownerId, ...hookData(body) } }));
  }

  async updateHook(id: string, ownerId: string | null, body: HookBody): Promise<Hook> {
    return toHook(
      await this.prisma.hook.update({
        where: { id },
        data: { ownerId, ...hookData(body), updatedAt: new Date() },
      }),
    );
  }

  async deleteHook(id: string): Promise<Hook> {
    return toHook(await this.prisma.hook.delete({ where: { id } }));
  }
}
