import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { z } from 'zod';
import {
  AppError,
  describeIssues,
  LocalServerConfig,
  RemoteServerConfig,
  toFieldIssues,
  type CreateMcpToolBody,
  type DeletedMcpTools,
  type McpToolAllQuery,
  type McpToolListQuery,
  type McpToolOptions,
  type McpToolPage,
  type McpToolRecord,
  type McpToolStatus,
  type McpToolTestResult,
  type McpToolType,
  type UpdateMcpToolBody,
} from '@switchyard/contracts';
import { SecretBox } from '@switchyard/server-db';
import {
  McpOAuthRepository,
  McpToolRepository,
  oauthStatusOf,
  type McpOAuthGrantRow,
  type McpToolRow,
} from '@switchyard/server-db-tools';
import { requireAdmin, type CallContext, type Logger } from '@switchyard/server-observability';
import { LOGGER } from '@switchyard/server-runtime';
import { McpClientPool } from '../mcp/mcp-client.pool';
import { RecordCache } from '../mcp/record-cache';
import { RecordHealth } from '../mcp/record-health';
import { AddressPolicy } from '@switchyard/server-runtime';
import { BuiltinRegistry } from '../tools/builtin-registry';

const ADMIN_ONLY = 'managing tool records needs an admin';

function view(row: McpToolRow, disabledUntil?: number, grant?: McpOAuthGrantRow): McpToolRecord {
  const { configEnc: _secret, testedToolsHash: _hash, ...record } = row;
  return {
    ...record,
    disabledUntil: disabledUntil ? new Date(disabledUntil).toISOString() : null,
    oauth: grant ? oauthStatusOf(grant) : null,
  };
}

/**
 * The management API of tool records. Built-in records are code-managed: created at start for each
 * built-in and never added, edited, toggled or deleted through the API. Connection settings are
 * validated for their type, checked (REMOTE addresses like web_fetch), then stored encrypted.
 */
@Injectable()
export class RecordsUseCases implements OnApplicationBootstrap {
  constructor(
    private readonly records: McpToolRepository,
    private readonly grants: McpOAuthRepository,
    private readonly builtins: BuiltinRegistry,
    private readonly box: SecretBox,
    private readonly addresses: AddressPolicy,
    private readonly pool: McpClientPool,
    private readonly cache: RecordCache,
    private readonly health: RecordHealth,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const created = await this.records.ensureBuiltins(
      this.builtins.list().map((t) => ({ name: t.spec.name, description: t.spec.description })),
    );
    if (created) this.logger.info({ count: created }, 'built-in tool records created');
  }

  async list(q: McpToolListQuery): Promise<McpToolPage> {
    const { items, total } = await this.records.page(q, q.pageNum, q.pageSize);
    return { items: await this.views(items), total, pageNum: q.pageNum, pageSize: q.pageSize };
  }

  async all(q: McpToolAllQuery): Promise<{ items: McpToolRecord[] }> {
    return { items: await this.views(await this.records.all(q)) };
  }

  async options(): Promise<McpToolOptions> {
    const rows = await this.records.all({ status: 'ENABLED' });
    return { items: rows.map((r) => ({ id: r.id, name: r.name, description: r.description, type: r.type })) };
  }

  async get(id: number): Promise<McpToolRecord> {
    return (await this.views([await this.records.get(id)]))[0] as McpToolRecord;
  }

  private async views(rows: McpToolRow[]): Promise<McpToolRecord[]> {
    const ids = rows.filter((r) => r.type !== 'BUILTIN').map((r) => r.id);
    const [disabled, grants] = await Promise.all([this.health.disabledMap(ids), this.grants.grants(ids)]);
    return rows.map((r) => view(r, disabled.get(r.id), grants.get(r.id)));
  }

  async create(caller: CallContext, body: CreateMcpToolBody): Promise<McpToolRecord> {
    requireAdmin(caller, ADMIN_ONLY);
    if (body.type === 'BUILTIN')
      throw new AppError(
        'conflict',
        'built-in tools are defined in code and cannot be added through the API',
      );
    const { configEnc, oauthGrant } = await this.sealConfig(body.type, body.configJson);
    const row = await this.records.create({
      name: body.name,
      description: body.description,
      type: body.type,
      status: body.status,
      configEnc,
      effect: body.effect ?? null,
      idempotent: body.idempotent ?? null,
      ...(body.sampling ? { sampling: body.sampling } : {}),
    });
    if (oauthGrant) await this.grants.reset(row.id, oauthGrant);
    this.logger.info({ id: row.id, name: row.name, type: row.type }, 'tool record created');
    this.cache.changed({ id: row.id, reason: 'created' });
    return (await this.views([row]))[0] as McpToolRecord;
  }

  async update(caller: CallContext, body: UpdateMcpToolBody): Promise<McpToolRecord> {
    requireAdmin(caller, ADMIN_ONLY);
    const current = await this.records.get(body.id);
    this.refuseBuiltin(current, 'edited');
    if (body.type === 'BUILTIN')
      throw new AppError('conflict', 'a record cannot be turned into a built-in tool');
    const type = body.type ?? current.type;
    if (type === 'BUILTIN') throw new AppError('conflict', 'a record cannot be turned into a built-in tool');
    const newConfig = body.configJson?.trim() ? body.configJson : undefined;
    if (type !== current.type && !newConfig) {
      throw new AppError(
        'validation_failed',
        `changing the type to ${type} needs a complete new configJson for it`,
        {
          issues: [{ path: 'configJson', message: 'required when the type changes' }],
        },
      );
    }
    const sealed = newConfig ? await this.sealConfig(type, newConfig) : undefined;
    const row = await this.records.update(body.id, {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.type !== undefined ? { type: body.type } : {}),
      ...(body.status !== undefined ? { status: body.status } : {}),
      ...(sealed ? { configEnc: sealed.configEnc } : {}),
      ...(body.effect !== undefined ? { effect: body.effect } : {}),
      ...(body.idempotent !== undefined ? { idempotent: body.idempotent } : {}),
      // A new setting moves updatedAt: every replica reconnects, declaring the capability or not.
      ...(body.sampling !== undefined ? { sampling: body.sampling } : {}),
    });
    if (sealed) {
      await this.health.clear(row.id);
      // New settings, new sign-in: tokens got for other settings are not carried over.
      await this.grants.reset(row.id, sealed.oauthGrant);
    }
    this.cache.changed({ id: row.id, reason: 'updated' });
    return (await this.views([row]))[0] as McpToolRecord;
  }

  async setStatus(caller: CallContext, id: number, status: McpToolStatus): Promise<McpToolRecord> {
    requireAdmin(caller, ADMIN_ONLY);
    this.refuseBuiltin(await this.records.get(id), status === 'ENABLED' ? 'enabled' : 'disabled');
    const row = await this.records.update(id, { status });
    this.cache.changed({ id, reason: 'status' });
    return (await this.views([row]))[0] as McpToolRecord;
  }

  async delete(caller: CallContext, ids: number[]): Promise<DeletedMcpTools> {
    requireAdmin(caller, ADMIN_ONLY);
    const found = await this.records.findByIds(ids);
    const missing = ids.filter((id) => !found.some((r) => r.id === id));
    if (missing.length)
      throw new AppError(
        'not_found',
        `tool record(s) ${missing.join(', ')} do not exist; nothing was deleted`,
      );
    const builtin = found.filter((r) => r.type === 'BUILTIN');
    if (builtin.length) {
      throw new AppError(
        'conflict',
        `built-in tools are code-managed and cannot be deleted: ${builtin.map((r) => r.name).join(', ')}; nothing was deleted`,
      );
    }
    const deleted = await this.records.deleteMany(ids);
    for (const id of deleted) this.cache.changed({ id, reason: 'deleted' });
    return { deleted };
  }

  /** A real connection: the server's real tool count and names, or the real reason it failed. */
  async test(caller: CallContext, id: number): Promise<McpToolTestResult> {
    requireAdmin(caller, ADMIN_ONLY);
    const record = await this.records.get(id);
    if (record.type === 'BUILTIN') {
      const builtin = this.builtins.get(record.name);
      return builtin
        ? { success: true, message: 'built-in tool is registered', toolCount: 1, tools: [record.name] }
        : {
            success: false,
            message: `no built-in tool named ${record.name} exists in this version`,
            toolCount: 0,
            tools: [],
          };
    }
    try {
      const conn = await this.pool.get(record, { fresh: true });
      await this.records.markTested(record.id, conn.hash);
      this.cache.forget();
      const tools = conn.tools.map((t) => t.name);
      return { success: true, message: `connected; ${tools.length} tool(s)`, toolCount: tools.length, tools };
    } catch (err) {
      return { success: false, message: (err as Error).message, toolCount: 0, tools: [] };
    }
  }

  private refuseBuiltin(row: McpToolRow, verb: string): void {
    if (row.type === 'BUILTIN')
      throw new AppError(
        'conflict',
        `${row.name} is a built-in tool: it is code-managed and cannot be ${verb}`,
      );
  }

  /**
   * Parses, validates for the type and encrypts; every problem is reported under `configJson`.
   * `oauthGrant`: the record signs in with OAuth, with this grant.
   */
  private async sealConfig(
    type: Exclude<McpToolType, 'BUILTIN'>,
    configJson: string,
  ): Promise<{ configEnc: string; oauthGrant: 'authorization_code' | 'client_credentials' | undefined }> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(configJson);
    } catch {
      throw new AppError('validation_failed', 'configJson is not valid JSON', {
        issues: [{ path: 'configJson', message: 'not valid JSON' }],
      });
    }
    const schema: z.ZodType = type === 'LOCAL' ? LocalServerConfig : RemoteServerConfig;
    const result = schema.safeParse(parsed);
    if (!result.success) {
      const issues = toFieldIssues(result.error).map((i) => ({
        ...i,
        path: i.path ? `configJson.${i.path}` : 'configJson',
      }));
      throw new AppError('validation_failed', `invalid ${type} configJson: ${describeIssues(issues)}`, {
        issues,
      });
    }
    const remote = type === 'REMOTE' ? (result.data as RemoteServerConfig) : undefined;
    if (remote) await this.addresses.vet(remote.baseUrl);
    return { configEnc: this.box.seal(JSON.stringify(result.data)), oauthGrant: remote?.oauth?.grant };
  }
}
