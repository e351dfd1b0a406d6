import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  extractWWWAuthenticateParams,
  type OAuthClientProvider,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  type CreateMessageRequest,
  type CreateMessageResult,
  type CallToolResult,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import {
  AppError,
  type LocalServerConfig,
  type RemoteServerConfig,
  type SamplingNote,
} from '@switchyard/contracts';
import type { Logger } from '@switchyard/server-observability';
import { vettedFetchLike, type AddressPolicy, type FetchLike } from '@switchyard/server-runtime';

export const VERSION_CHECK_MS = 5_000;

/** Stable JSON: object keys sorted, so the hash does not depend on the server's key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What a server says about its tools; a change after a Test could be a rewritten description. */
export function toolsHash(
  tools: Array<{ name: string; description?: string; inputSchema?: unknown; annotations?: unknown }>,
): string {
  const defs = tools
    .map((t) => ({
      name: t.name,
      description: t.description ?? '',
      inputSchema: t.inputSchema ?? null,
      annotations: t.annotations ?? null,
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return createHash('sha256').update(canonical(defs)).digest('hex');
}

export interface McpToolInfo {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  /** The server's JSON Schema of the tool's structured content, when it declares one. */
  readonly outputSchema?: Record<string, unknown>;
}

/**
 * Answers a server's input request (`elicitation/create`) made during one call: the registry relays
 * it to the run or chat the call is for. `signal`: the server withdrew the request.
 */
export type InputRelay = (request: ElicitRequest['params'], signal: AbortSignal) => Promise<ElicitResult>;

/**
 * Answers a server's `sampling/createMessage` (a record with sampling on): the result, and the note
 * the call it is attributed to records.
 */
export type Sampler = (
  params: CreateMessageRequest['params'],
  signal: AbortSignal,
) => Promise<{ readonly result: CreateMessageResult; readonly note: SamplingNote }>;

/** One live MCP client for one record. */
export interface McpConnection {
  readonly client: Client;
  /**
   * tools/call. A server's input request during it goes to `relay` when this is the only call in
   * flight on the connection (see `connectMcp`); without a relay it is declined.
   */
  callTool(
    params: { name: string; arguments: Record<string, unknown> },
    options: RequestOptions,
    relay?: InputRelay,
    /** Filled with a note per sampling request attributed to this call. */
    sampled?: SamplingNote[],
  ): Promise<CallToolResult>;
  readonly tools: McpToolInfo[];
  /** SHA-256 of the tool definitions (names, descriptions, schemas, annotations), order-independent. */
  readonly hash: string;
  /** Set when the transport closed (the child died, the server went away). */
  readonly closed: () => boolean;
  close(): Promise<void>;
}

/**
 * A stdio server launched exactly as given (a plugin server, often through bwrap): no --version
 * check. The SDK adds its default variables (HOME, PATH, USER…) under `env`; a sandbox unsets them.
 */
export interface ProcessLaunch {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  readonly cwd?: string;
}

/** `command --version` must exit within 5 s: a cheap check that the command exists and runs. */
export function checkVersion(command: string, env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, ['--version'], { env, stdio: ['ignore', 'ignore', 'ignore'] });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new AppError('tool_failed', `${command} --version did not exit within ${VERSION_CHECK_MS / 1000} s`),
      );
    }, VERSION_CHECK_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new AppError('tool_failed', `cannot run ${command}: ${err.message}`));
    });
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Connects to a LOCAL (stdio child) or REMOTE (Streamable HTTP) MCP server and lists its tools.
 * A LOCAL child sees only the SDK's default variables (HOME, PATH, SHELL, TERM…) plus the record's
 * own `env`, never the service's secrets; its stderr goes to our logs.
 */
export async function connectMcp(
  opts:
    | { readonly type: 'LOCAL'; readonly config: LocalServerConfig }
    | {
        readonly type: 'REMOTE';
        readonly config: RemoteServerConfig;
        /** Signs requests with the record's OAuth grant (refreshing it as needed). */
        readonly authProvider?: OAuthClientProvider & {
          insufficientScope?(scope: string | undefined): Promise<void>;
        };
      }
    | { readonly type: 'PROCESS'; readonly launch: ProcessLaunch },
  deps: {
    readonly logger: Logger;
    readonly addresses: AddressPolicy;
    readonly timeoutMs: number;
    readonly label: string;
    /** Set when the record allows sampling: the client then declares the capability. */
    readonly sample?: Sampler;
  },
): Promise<McpConnection> {
  let transport: Transport;
  if (opts.type === 'LOCAL' || opts.type === 'PROCESS') {
    let stdio: StdioClientTransport;
    if (opts.type === 'LOCAL') {
      const env = { ...getDefaultEnvironment(), ...(opts.config.env ?? {}) };
      await checkVersion(opts.config.command, env);
      stdio = new StdioClientTransport({
        command: opts.config.command,
        args: opts.config.args,
        env,
        stderr: 'pipe',
      });
    } else {
      stdio = new StdioClientTransport({ ...opts.launch, args: [...opts.launch.args], stderr: 'pipe' });
    }
    let pending = '';
    stdio.stderr?.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      let i;
      while ((i = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, i).trimEnd();
        pending = pending.slice(i + 1);
        if (line) deps.logger.info({ mcp: deps.label, stderr: line.slice(0, 2000) }, 'mcp server stderr');
      }
    });
    transport = stdio;
  } else {
    const target = await deps.addresses.vet(opts.config.baseUrl);
    // Every request (OAuth discovery and token requests included) is vetted and goes to the vetted address.
    const vetted = vettedFetchLike(deps.addresses);
    const provider = opts.authProvider;
    // A 403 insufficient_scope is the provider's to handle (step-up needs a person), before the SDK
    // retries with the same grant.
    const fetch: FetchLike = provider?.insufficientScope
      ? async (url, init) => {
          const res = await vetted(url, init);
          if (res.status !== 403) return res;
          const { error, scope } = extractWWWAuthenticateParams(res);
          if (error !== 'insufficient_scope') return res;
          await res.body?.cancel().catch(() => undefined);
          await provider.insufficientScope?.(scope);
          return res;
        }
      : vetted;
    transport = new StreamableHTTPClientTransport(target.url, {
      requestInit: { headers: opts.config.headers ?? {} },
      fetch,
      ...(provider ? { authProvider: provider } : {}),
    });
  }
  // Form and URL elicitation: a request reaches the person behind the call (a run step or a chat
  // call), who answers in the web client or over the API; a URL is shown to them, never fetched here.
  const client = new Client(
    { name: 'switchyard-tool-registry', version: '0.1.0' },
    {
      capabilities: {
        elicitation: { form: {}, url: {} },
        ...(deps.sample ? { sampling: {} } : {}),
      },
    },
  );
  let closed = false;
  client.onclose = () => {
    closed = true;
  };
  // A server's request carries no link to the tools/call it belongs to (stdio has no per-request
  // stream at all), so it is attributed by what is in flight on this connection: the calls not
  // already waiting for a person's answer (a server asks once at a time per call). With exactly one
  // such call, that call asked; with none or several it is declined (guessing could show one owner's
  // request to another) and the reason is logged. See docs/elicitation.md.
  const inflight = new Set<{
    readonly relay: InputRelay | undefined;
    readonly tool: string;
    readonly sampled: SamplingNote[] | undefined;
    asking: number;
  }>();
  // Sampling needs no person: it is answered whoever asked (the record's budget bounds it); the note
  // goes to the call it is attributed to the same way as input requests (exactly one in flight).
  const sample = deps.sample;
  if (sample)
    client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
      const { result, note } = await sample(request.params, extra.signal);
      const calls = [...inflight];
      if (calls.length === 1) calls[0]?.sampled?.push(note);
      else
        deps.logger.info({ mcp: deps.label, calls: calls.length, ...note }, 'mcp server sampled the model');
      return result;
    });
  client.setRequestHandler(ElicitRequestSchema, async (request, extra): Promise<ElicitResult> => {
    const calls = [...inflight].filter((c) => c.asking === 0);
    const only = calls.length === 1 ? calls[0] : undefined;
    if (!only?.relay) {
      deps.logger.warn(
        {
          mcp: deps.label,
          calls: calls.length,
          ...(only ? { tool: only.tool } : {}),
        },
        !calls.length
          ? 'mcp server asked for input with no tool call free to ask (none in flight, or each waiting for an answer already); declined'
          : calls.length > 1
            ? `mcp server asked for input while ${calls.length} calls to it were in flight; declined (it cannot be told which call asked)`
            : 'mcp server asked for input during a call nobody can answer (a direct call); declined',
      );
      return { action: 'decline' };
    }
    only.asking++;
    try {
      return await only.relay(request.params, extra.signal);
    } finally {
      only.asking--;
    }
  });
  try {
    await client.connect(transport, { timeout: deps.timeoutMs });
    const { tools } = await client.listTools(undefined, { timeout: deps.timeoutMs });
    return {
      client,
      callTool: async (params, options, relay, sampled) => {
        const call = { relay, tool: params.name, sampled, asking: 0 };
        inflight.add(call);
        try {
          return (await client.callTool(params, undefined, options)) as CallToolResult;
        } finally {
          inflight.delete(call);
        }
      },
      hash: toolsHash(tools),
      tools: tools.map((t) => ({
        name: t.name,
        description: t.description ?? '',
        inputSchema: t.inputSchema as Record<string, unknown>,
        ...(t.outputSchema ? { outputSchema: t.outputSchema as Record<string, unknown> } : {}),
      })),
      closed: () => closed,
      close: () => client.close().catch(() => undefined),
    };
  } catch (err) {
    await client.close().catch(() => undefined);
    if (err instanceof AppError) throw err;
    const message = (err as Error).message ?? String(err);
    if (/timed out|timeout/i.test(message)) {
      throw new AppError(
        'timeout',
        `${deps.label} did not complete the MCP handshake within ${deps.timeoutMs} ms`,
      );
    }
    throw new AppError('tool_failed', `cannot connect to ${deps.label}: ${message}`);
  }
}
