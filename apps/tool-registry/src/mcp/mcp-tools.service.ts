import { Inject, Injectable } from '@nestjs/common';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import {
  AppError,
  type SamplingNote,
  type ToolContent,
  type ToolDescriptor,
  type ToolResult,
} from '@switchyard/contracts';
import { McpToolRepository, type McpToolRow } from '@switchyard/server-db-tools';
import { RecordCache } from './record-cache';
import type { Logger } from '@switchyard/server-observability';
import { LOGGER } from '@switchyard/server-runtime';
import { McpClientPool } from './mcp-client.pool';
import type { InputRelay, McpConnection } from './mcp-connection';
import { InputRelays, type AskingCall } from './input-relay';

export const MCP_PREFIX = 'mcp__';

/** How long a catalog listing waits for an MCP server that is (re)connecting. */
export const CATALOG_WAIT_MS = 3_000;

/**
 * The SDK's own request timeout for a call that may wait for a person (setTimeout's maximum): the
 * call's deadline is the caller's, which stands still while the person is asked and aborts the call.
 */
const WAITING_CALL_TIMEOUT_MS = 2_147_483_647;

/** `mcp__<record>__<tool>`: the record name made safe for model tool names. */
export function mcpToolName(record: string, tool: string): string {
  return `${MCP_PREFIX}${record.replace(/[^A-Za-z0-9_-]/g, '_')}__${tool}`;
}

/** A server's schema as the catalog shows it: the `$schema` dialect line dropped, as for built-ins. */
export function withoutDialect(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

/** The tools of enabled MCP records in the catalog, and calls to them. */
@Injectable()
export class McpToolsService {
  private readonly ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(
    private readonly records: RecordCache,
    private readonly recordsRepo: McpToolRepository,
    private readonly pool: McpClientPool,
    private readonly relays: InputRelays,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Descriptors of every tool of every enabled MCP record that answers; one that does not is left out and logged. */
  async descriptors(): Promise<ToolDescriptor[]> {
    return (await this.descriptorsOf(await this.records.enabledMcpRecords())).flatMap((d) => d.tools);
  }

  /** Per record: its tools when it is enabled, tested, unchanged and reachable; others are left out. */
  async descriptorsOf(records: McpToolRow[]): Promise<Array<{ recordId: number; tools: ToolDescriptor[] }>> {
    const usable = records.filter(
      (r) => r.type !== 'BUILTIN' && r.status === 'ENABLED' && r.testedToolsHash !== null && !r.changed,
    );
    const lists = await Promise.all(
      usable.map(async (record) => {
        try {
          const pending = this.pool.get(record);
          // A slow server must not hold the whole catalog: list without it this time; the
          // connection goes on in the background (and its failures count in the pool).
          pending.catch(() => undefined);
          const conn = await Promise.race([
            pending,
            new Promise<undefined>((resolve) =>
              setTimeout(() => resolve(undefined), CATALOG_WAIT_MS).unref(),
            ),
          ]);
          if (!conn) {
            this.logger.info(
              { record: record.name },
              'mcp record still connecting; left out of this listing',
            );
            return { recordId: record.id, tools: [] };
          }
          if (await this.changedSinceTest(record, conn.hash)) return { recordId: record.id, tools: [] };
          const tools = conn.tools.map((t): ToolDescriptor => ({
            name: mcpToolName(record.name, t.name),
            description: t.description,
            inputSchema: t.inputSchema,
            effect: record.effect ?? 'external',
            idempotent: record.idempotent ?? false,
            source: 'mcp',
            ...(t.outputSchema ? { outputSchema: withoutDialect(t.outputSchema) } : {}),
          }));
          return { recordId: record.id, tools };
        } catch (err) {
          this.logger.warn(
            { record: record.name, err: (err as Error).message },
            'mcp record left out of the catalog',
          );
          return { recordId: record.id, tools: [] };
        }
      }),
    );
    return lists.filter((l) => l.tools.length > 0);
  }

  /** Marks the record changed (everywhere) when the server no longer describes the tested tools. */
  private async changedSinceTest(record: McpToolRow, hash: string): Promise<boolean> {
    if (record.testedToolsHash === null || record.testedToolsHash === hash) return false;
    this.logger.warn(
      { record: record.name },
      'mcp server changed its tool definitions since the last Test; its tools leave the catalog',
    );
    await this.recordsRepo.markChanged(record.id);
    this.records.forget();
    return true;
  }

  private async resolve(name: string): Promise<{ record: McpToolRow; tool: string }> {
    const enabled = await this.records.enabledMcpRecords();
    for (const record of enabled) {
      const prefix = mcpToolName(record.name, '');
      if (name.startsWith(prefix) && name.length > prefix.length)
        return { record, tool: name.slice(prefix.length) };
    }
    throw new AppError('not_found', `no tool named ${name} in the catalog (is its MCP record enabled?)`);
  }

  async invoke(
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs: number,
    /** Who the call is for: the server's input requests reach them (else they are declined). */
    asking?: AskingCall,
  ): Promise<ToolResult> {
    const { record, tool } = await this.resolve(name);
    if (record.testedToolsHash === null) {
      throw new AppError(
        'conflict',
        `MCP record ${record.name} has not been tested yet; an admin must Test it before its tools can be used`,
      );
    }
    if (record.changed) {
      throw new AppError(
        'conflict',
        `MCP record ${record.name} changed its tool definitions since its last Test; an admin must Test it again`,
      );
    }
    const conn = await this.pool.get(record);
    if (await this.changedSinceTest(record, conn.hash)) {
      throw new AppError(
        'conflict',
        `MCP record ${record.name} changed its tool definitions since its last Test; an admin must Test it again`,
      );
    }
    return this.call(conn, {
      name,
      tool,
      args,
      signal,
      timeoutMs,
      validatorKey: `${record.id}:${record.updatedAt}:${tool}`,
      server: `MCP server ${record.name}`,
      onExit: () => this.pool.drop(record.id),
      ...(asking ? { relay: this.relays.relay(asking, name, record.name) } : {}),
    });
  }

  /**
   * One call of `tool` on a live connection, shown to callers as `name`: arguments checked against
   * the server's schema, the result's content mapped (structured content becomes the value).
   */
  async call(
    conn: McpConnection,
    c: {
      name: string;
      tool: string;
      args: Record<string, unknown>;
      signal: AbortSignal;
      timeoutMs: number;
      validatorKey: string;
      server: string;
      onExit: () => Promise<void>;
      /** Answers the server's input requests during the call (its deadline is then the caller's alone). */
      relay?: InputRelay;
    },
  ): Promise<ToolResult> {
    const { name, tool, args, signal, timeoutMs } = c;
    const info = conn.tools.find((t) => t.name === tool);
    if (!info) throw new AppError('not_found', `${c.server} has no tool ${tool}`);
    this.validate(c.validatorKey, info.inputSchema, args, name);
    let result;
    const sampled: SamplingNote[] = [];
    try {
      result = await conn.callTool(
        { name: tool, arguments: args },
        { signal, timeout: c.relay ? WAITING_CALL_TIMEOUT_MS : timeoutMs },
        c.relay,
        sampled,
      );
    } catch (err) {
      if (signal.aborted) throw err;
      // Ours (a grant the provider refused: Reconnect) keeps its code and sentence.
      if (err instanceof AppError) throw new AppError(err.code, `${name} failed: ${err.message}`);
      const reason = conn.closed() ? `the ${c.server} exited during the call` : (err as Error).message;
      if (conn.closed()) await c.onExit();
      throw new AppError('tool_failed', `${name} failed: ${reason}`);
    }
    const content: ToolContent[] = ((result.content as Array<Record<string, unknown>> | undefined) ?? []).map(
      (c) =>
        c['type'] === 'text' && typeof c['text'] === 'string'
          ? { type: 'text', text: c['text'] }
          : { type: 'json', json: c },
    );
    if (result.structuredContent !== undefined) {
      // Servers repeat structured content as JSON text for older clients, so content alone would read
      // as text; the value is the structured content, which is what the tool's outputSchema describes.
      const structured = result.structuredContent;
      return {
        content: [...content, { type: 'json', json: structured }],
        isError: result.isError === true,
        truncated: false,
        value: structured,
        ...(sampled.length ? { sampling: sampled } : {}),
      };
    }
    return {
      content,
      isError: result.isError === true,
      truncated: false,
      ...(sampled.length ? { sampling: sampled } : {}),
    };
  }

  private validate(
    key: string,
    schema: Record<string, unknown>,
    args: Record<string, unknown>,
    name: string,
  ): void {
    let validate = this.validators.get(key);
    if (!validate) {
      const { $schema: _ignored, ...rest } = schema;
      validate = this.ajv.compile(rest);
      this.validators.set(key, validate);
    }
    if (validate(args)) return;
    const issues = (validate.errors ?? []).map((e) => ({
      path: [
        'arguments',
        ...e.instancePath.split('/').filter(Boolean),
        ...(e.keyword === 'required' ? [String(e.params['missingProperty'])] : []),
      ].join('.'),
      message: e.message ?? 'invalid',
    }));
    throw new AppError(
      'validation_failed',
      `invalid arguments for ${name}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      { issues },
    );
  }
}
