import { Inject, Injectable } from '@nestjs/common';
import type { PrismaClient } from '@prisma/client';
import { PermissionMode, type McpAccessBody } from '@switchyard/contracts';
import { PRISMA } from '@switchyard/server-db';

/** An owner's MCP access as stored; the defaults when no row exists. */
export interface McpAccessRecord {
  readonly ownerId: string;
  readonly enabled: boolean;
  readonly permissionMode: PermissionMode;
  /** null: every published workflow. */
  readonly exposedWorkflows: readonly string[] | null;
  readonly updatedAt: Date | null;
}

/** MCP access per owner (the gateway's table, like owners and tokens). Every method takes the owner. */
@Injectable()
export class McpAccessRepository {
  constructor(@Inject(PRISMA) private readonly prisma: PrismaClient) {}

  async get(ownerId: string): Promise<McpAccessRecord> {
    const row = await this.prisma.mcpAccess.findUnique({ where: { ownerId } });
    if (!row)
      return { ownerId, enabled: true, permissionMode: 'ask', exposedWorkflows: null, updatedAt: null };
    return {
      ownerId,
      enabled: row.enabled,
      // Written only through put() with a checked mode; an unknown value reads as the safest one.
      permissionMode: PermissionMode.catch('ask').parse(row.permissionMode),
      exposedWorkflows: row.exposeAll ? null : row.exposedWorkflows,
      updatedAt: row.updatedAt,
    };
  }

  /** Changes what the body gives; what it leaves out keeps its stored (or default) value. */
  async put(ownerId: string, body: McpAccessBody): Promise<McpAccessRecord> {
    const data = {
      ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
      ...(body.permissionMode !== undefined ? { permissionMode: body.permissionMode } : {}),
      ...(body.exposedWorkflows !== undefined
        ? body.exposedWorkflows === 'all'
          ? { exposeAll: true, exposedWorkflows: [] }
          : { exposeAll: false, exposedWorkflows: [...new Set(body.exposedWorkflows)] }
        : {}),
      updatedAt: new Date(),
    };
    await this.prisma.mcpAccess.upsert({ where: { ownerId }, create: { ownerId, ...data }, update: data });
    return this.get(ownerId);
  }
}
