import {
  type ArgumentsHost,
  Catch,
  Controller,
  type ExceptionFilter,
  Inject,
  Req,
  Res,
  UseFilters,
} from '@nestjs/common';
import type { Response } from 'express';
import {
  MCP_OAUTH_MESSAGE,
  Routes,
  Rpc,
  type DeletedMcpTools,
  type McpOAuthCallbackResult,
  type McpToolConnectResult,
  type McpToolList,
  type McpToolOptions,
  type McpToolPage,
  type McpToolRecord,
  type McpToolTestResult,
} from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import type { AppConfig } from '@switchyard/server-config';
import { IdentityRepository } from '@switchyard/server-db-identity';
import type { Logger } from '@switchyard/server-observability';
import { APP_CONFIG, BUS, LOGGER } from '@switchyard/server-runtime';
import { authenticate, presentedToken } from '../auth/auth.guard';
import { TokenVerifier } from '../auth/token-verifier';
import { asCaller, callContext, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';
import { sendProblem } from '../http/problem.filter';
import { toProblem } from '../http/problem';
import { callbackPageHeaders, pageLanguage, renderCallbackPage, wantsHtml } from './oauth-callback-page';

/** Where OAuth providers send the browser back after Connect. */
export const OAUTH_CALLBACK_PATH = Routes.mcpOAuthCallback.path;

/** Discovery, registration and a token request, each to a remote server that may be slow. */
const OAUTH_RPC_TIMEOUT_MS = 45_000;

const CSV_COLUMNS = [
  'id',
  'name',
  'description',
  'type',
  'status',
  'effect',
  'idempotent',
  'hasConfig',
  'createdAt',
  'updatedAt',
] as const;

/** RFC 4180 field; a leading =, +, - or @ is prefixed with ' so spreadsheets do not run it as a formula. */
function csvField(value: unknown): string {
  let s = value === null || value === undefined ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function recordsCsv(items: McpToolRecord[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of items) lines.push(CSV_COLUMNS.map((c) => csvField(r[c])).join(','));
  return lines.join('\r\n') + '\r\n';
}

/**
 * The callback's refusals: a browser gets the page (with the problem's status, code and sentence),
 * anything else problem+json as from every route. Validation refusals of the query land here too.
 */
@Catch()
export class OAuthCallbackFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const req = host.switchToHttp().getRequest<GatewayRequest>();
    const res = host.switchToHttp().getResponse<Response>();
    if (!wantsHtml(req) || res.headersSent) return sendProblem(exception, req, res, this.logger);
    const { problem, bug } = toProblem(exception, req.correlationId ?? 'unknown');
    if (bug) this.logger.error({ err: exception, correlationId: req.correlationId }, 'oauth callback failed');
    callbackPageHeaders(res.status(problem.status)).send(
      renderCallbackPage(
        { type: MCP_OAUTH_MESSAGE, ok: false, code: problem.code, detail: problem.detail },
        pageLanguage(req),
      ),
    );
  }
}

/**
 * Tool record management at the seed's paths. Static paths (list, all, options, export) are declared
 * before `/mcp/tool/{id}` so they are matched first.
 */
@Controller()
export class RecordsController {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly verifier: TokenVerifier,
    private readonly identity: IdentityRepository,
  ) {}

  /** Who connected each record, by name as well as id: the registry knows owners only by id. */
  private async named<T extends { items: McpToolRecord[] }>(page: T): Promise<T> {
    const ids = [...new Set(page.items.flatMap((r) => (r.oauth?.connectedBy ? [r.oauth.connectedBy] : [])))];
    if (!ids.length) return page;
    const names = await this.identity.ownerNames(ids);
    return {
      ...page,
      items: page.items.map((r) =>
        r.oauth
          ? {
              ...r,
              oauth: {
                ...r.oauth,
                connectedByName: r.oauth.connectedBy ? (names.get(r.oauth.connectedBy) ?? null) : null,
              },
            }
          : r,
      ),
    };
  }

  private async namedOne(record: McpToolRecord): Promise<McpToolRecord> {
    return (await this.named({ items: [record] })).items[0] as McpToolRecord;
  }

  @Endpoint(Routes.mcpToolList)
  async list(
    @In() input: Input<typeof Routes.mcpToolList>,
    @Req() req: GatewayRequest,
  ): Promise<McpToolPage> {
    return this.named(await this.bus.call(Rpc.registry.list, input.query, asCaller(req)));
  }

  @Endpoint(Routes.mcpToolAll)
  async all(@In() input: Input<typeof Routes.mcpToolAll>, @Req() req: GatewayRequest): Promise<McpToolList> {
    return this.named(await this.bus.call(Rpc.registry.all, input.query, asCaller(req)));
  }

  @Endpoint(Routes.mcpToolOptions)
  options(@Req() req: GatewayRequest): Promise<McpToolOptions> {
    return this.bus.call(Rpc.registry.options, {}, asCaller(req));
  }

  @Endpoint(Routes.mcpToolExport)
  async export(
    @In() input: Input<typeof Routes.mcpToolExport>,
    @Req() req: GatewayRequest,
    @Res() res: Response,
  ): Promise<void> {
    const { items } = await this.bus.call(Rpc.registry.all, input.query, asCaller(req));
    res
      .status(200)
      .type('text/csv; charset=utf-8')
      .setHeader('Content-Disposition', 'attachment; filename="mcp-tools.csv"')
      .send(recordsCsv(items));
  }

  @Endpoint(Routes.mcpToolGet)
  async get(
    @In() input: Input<typeof Routes.mcpToolGet>,
    @Req() req: GatewayRequest,
  ): Promise<McpToolRecord> {
    return this.namedOne(await this.bus.call(Rpc.registry.get, { id: input.params.id }, asCaller(req)));
  }

  @Endpoint(Routes.mcpToolCreate)
  create(
    @In() input: Input<typeof Routes.mcpToolCreate>,
    @Req() req: GatewayRequest,
  ): Promise<McpToolRecord> {
    return this.bus.call(Rpc.registry.create, input.body, asCaller(req));
  }

  @Endpoint(Routes.mcpToolUpdate)
  async update(
    @In() input: Input<typeof Routes.mcpToolUpdate>,
    @Req() req: GatewayRequest,
  ): Promise<McpToolRecord> {
    return this.namedOne(await this.bus.call(Rpc.registry.update, input.body, asCaller(req)));
  }

  @Endpoint(Routes.mcpToolStatus)
  async status(
    @In() input: Input<typeof Routes.mcpToolStatus>,
    @Req() req: GatewayRequest,
  ): Promise<McpToolRecord> {
    return this.namedOne(
      await this.bus.call(
        Rpc.registry.setStatus,
        { id: input.params.id, status: input.query.status },
        asCaller(req),
      ),
    );
  }

  @Endpoint(Routes.mcpToolTest)
  test(
    @In() input: Input<typeof Routes.mcpToolTest>,
    @Req() req: GatewayRequest,
  ): Promise<McpToolTestResult> {
    // A test may take the --version check (5 s) plus the MCP handshake: wait for its real answer.
    const timeoutMs = 5_000 + this.config.tools.mcpHandshakeTimeoutMs + 2_000;
    return this.bus.call(Rpc.registry.test, { id: input.params.id }, { ...asCaller(req), timeoutMs });
  }

  @Endpoint(Routes.mcpToolConnect)
  connect(
    @In() input: Input<typeof Routes.mcpToolConnect>,
    @Req() req: GatewayRequest,
  ): Promise<McpToolConnectResult> {
    return this.bus.call(
      Rpc.registry.connect,
      { id: input.params.id, redirectUri: `${this.config.http.publicUrl}${OAUTH_CALLBACK_PATH}` },
      { ...asCaller(req), timeoutMs: OAUTH_RPC_TIMEOUT_MS },
    );
  }

  /**
   * Public: a browser coming back from the provider carries no token, and the state alone says
   * who started. A caller that does send a token must be that person. A browser (Accept: text/html)
   * gets the page that tells the web client and closes itself; scripts get JSON.
   */
  @Endpoint(Routes.mcpOAuthCallback)
  @UseFilters(OAuthCallbackFilter)
  async oauthCallback(
    @In() input: Input<typeof Routes.mcpOAuthCallback>,
    @Req() req: GatewayRequest,
    @Res({ passthrough: true }) res: Response,
  ): Promise<McpOAuthCallbackResult | string> {
    const principal = presentedToken(req.headers, undefined, false)
      ? await authenticate(
          { ...Routes.mcpOAuthCallback, auth: 'authenticated' },
          this.verifier,
          req.headers,
          undefined,
        )
      : undefined;
    const done = await this.bus.call(Rpc.registry.oauthCallback, input.query, {
      ctx: callContext(principal, req.correlationId),
      timeoutMs: OAUTH_RPC_TIMEOUT_MS,
    });
    if (!wantsHtml(req)) return done;
    callbackPageHeaders(res);
    return renderCallbackPage(
      { type: MCP_OAUTH_MESSAGE, ok: true, id: done.id, name: done.name },
      pageLanguage(req),
    );
  }

  @Endpoint(Routes.mcpToolDelete)
  delete(
    @In() input: Input<typeof Routes.mcpToolDelete>,
    @Req() req: GatewayRequest,
  ): Promise<DeletedMcpTools> {
    return this.bus.call(Rpc.registry.delete, { ids: input.params.ids }, asCaller(req));
  }
}
