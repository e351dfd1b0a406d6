import { z } from 'zod';
import { ToolEffect } from './tools';
import { NumberedPageQuery, numberedPageOf } from './identity';

export const McpToolType = z.enum(['BUILTIN', 'LOCAL', 'REMOTE']);
export type McpToolType = z.infer<typeof McpToolType>;
export const McpToolStatus = z.enum(['ENABLED', 'DISABLED']);
export type McpToolStatus = z.infer<typeof McpToolStatus>;

/**
 * Where a REMOTE record's OAuth grant stands: `not_connected` until someone completes Connect,
 * `connected` while tokens work (refreshed as needed), `reconnect` when the provider refused them
 * (expired or revoked grant): its tools are out of the catalog until Connect is done again.
 */
export const McpOAuthState = z.enum(['not_connected', 'connected', 'reconnect']);
export type McpOAuthState = z.infer<typeof McpOAuthState>;

export const McpToolOAuthStatus = z.object({
  grant: z.enum(['authorization_code', 'client_credentials']),
  state: McpOAuthState,
  reason: z.string().nullable().describe('why the record needs Connect or Reconnect'),
  connectedAt: z.string().nullable(),
  connectedBy: z.string().nullable().describe('the owner (id) who completed the last Connect'),
  connectedByName: z
    .string()
    .nullable()
    .optional()
    .describe("that owner's name (the gateway's answers carry it; null when the owner is gone)"),
});
export type McpToolOAuthStatus = z.infer<typeof McpToolOAuthStatus>;

/**
 * Sampling (`sampling/createMessage`) from a record's server: off unless an admin turns it on. When
 * on, the client declares the capability and the server's requests go to the deployment's configured
 * model, each capped at `maxTokens`, all of them together at `dailyTokens` per UTC day (every replica
 * counts against the same budget). See docs/mcp-sampling.md.
 */
export const McpSamplingSettings = z
  .object({
    enabled: z.boolean().default(false),
    maxTokens: z
      .number()
      .int()
      .min(1)
      .max(32_000)
      .default(1_024)
      .describe('the most one request may generate; a request asking more is capped'),
    dailyTokens: z
      .number()
      .int()
      .min(1)
      .max(100_000_000)
      .default(100_000)
      .describe('the tokens (prompt and answer) all requests of the record may use per UTC day'),
  })
  .strict();
export type McpSamplingSettings = z.infer<typeof McpSamplingSettings>;
export const SAMPLING_OFF: McpSamplingSettings = { enabled: false, maxTokens: 1_024, dailyTokens: 100_000 };

/** A tool record as the API shows it. Connection settings (configJson) are write-only. */
export const McpToolRecord = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  type: McpToolType,
  status: McpToolStatus,
  effect: ToolEffect.nullable().describe('admin override for the tools of an MCP record'),
  idempotent: z.boolean().nullable(),
  hasConfig: z.boolean().describe('connection settings are stored (never shown)'),
  tested: z.boolean().describe('a Test succeeded: only tested MCP records contribute tools to the catalog'),
  changed: z
    .boolean()
    .describe(
      'the server changed its tool definitions since the last Test; its tools are out of the catalog until tested again',
    ),
  disabledUntil: z
    .string()
    .nullable()
    .describe(
      'set for five minutes after three failed connections, on every replica; a successful Test clears it',
    ),
  oauth: McpToolOAuthStatus.nullable().describe(
    'REMOTE records that sign in with OAuth: the grant (tokens and client secrets are never shown)',
  ),
  sampling: McpSamplingSettings.describe('whether the server may ask the configured model (off by default)'),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type McpToolRecord = z.infer<typeof McpToolRecord>;

const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'environment variable names are letters, digits and _');

/** LOCAL: an MCP server the registry launches over stdio. `command` is an executable, never a shell line. */
export const LocalServerConfig = z
  .object({
    command: z
      .string()
      .min(1)
      .max(1024)
      .regex(/^[^\s;&|`$<>]+$/, 'an executable name or path, without spaces or shell syntax'),
    args: z.array(z.string().max(4096)).max(100).default([]),
    env: z.record(envName, z.string().max(16_384)).optional(),
  })
  .strict();
export type LocalServerConfig = z.infer<typeof LocalServerConfig>;

/**
 * OAuth 2.1 sign-in of a REMOTE record (see docs/mcp-oauth.md). Without `clientId` the client
 * registers itself (a Client ID Metadata Document when `clientMetadataUrl` is given and the server
 * supports it, else dynamic registration). `client_credentials` is for machine-to-machine servers and
 * needs a pre-registered client. `scope` is used when neither the server's WWW-Authenticate nor its
 * metadata names scopes.
 */
export const RemoteOAuthConfig = z
  .object({
    grant: z.enum(['authorization_code', 'client_credentials']).default('authorization_code'),
    clientId: z.string().min(1).max(2048).optional(),
    clientSecret: z.string().min(1).max(4096).optional(),
    tokenEndpointAuthMethod: z.enum(['client_secret_basic', 'client_secret_post', 'none']).optional(),
    scope: z
      .string()
      .max(2048)
      .regex(/^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/, 'space-separated scope tokens')
      .optional(),
    clientMetadataUrl: z
      .url({ protocol: /^https$/ })
      .max(2048)
      .optional(),
  })
  .strict()
  .superRefine((o, ctx) => {
    if (o.grant === 'client_credentials' && (!o.clientId || !o.clientSecret))
      ctx.addIssue({
        code: 'custom',
        path: ['clientId'],
        message: 'client_credentials needs a pre-registered clientId and clientSecret',
      });
    if (o.clientSecret && !o.clientId)
      ctx.addIssue({ code: 'custom', path: ['clientId'], message: 'a clientSecret needs its clientId' });
    if (o.tokenEndpointAuthMethod && o.tokenEndpointAuthMethod !== 'none' && !o.clientSecret)
      ctx.addIssue({
        code: 'custom',
        path: ['clientSecret'],
        message: `${o.tokenEndpointAuthMethod} needs a clientSecret`,
      });
  });
export type RemoteOAuthConfig = z.infer<typeof RemoteOAuthConfig>;

/** REMOTE: an MCP server reached over Streamable HTTP; headers (e.g. Authorization) are write-only too. */
export const RemoteServerConfig = z
  .object({
    baseUrl: z.url({ protocol: /^https?$/ }).max(4096),
    headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,100}$/), z.string().max(8192)).optional(),
    oauth: RemoteOAuthConfig.optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.oauth && Object.keys(c.headers ?? {}).some((h) => h.toLowerCase() === 'authorization'))
      ctx.addIssue({
        code: 'custom',
        path: ['headers', 'Authorization'],
        message: 'a record that signs in with OAuth sends its own Authorization header',
      });
  });
export type RemoteServerConfig = z.infer<typeof RemoteServerConfig>;

const name = z.string().trim().min(1, 'name is required').max(200);

export const CreateMcpToolBody = z
  .object({
    name,
    description: z.string().max(10_000).default(''),
    type: McpToolType,
    status: McpToolStatus.default('ENABLED'),
    /** A JSON string, as the seed's API takes it: LocalServerConfig or RemoteServerConfig. */
    configJson: z.string().min(2).max(65_536),
    effect: ToolEffect.nullable().optional(),
    idempotent: z.boolean().nullable().optional(),
    sampling: McpSamplingSettings.optional(),
  })
  .strict();
export type CreateMcpToolBody = z.infer<typeof CreateMcpToolBody>;

export const UpdateMcpToolBody = z
  .object({
    id: z.number().int().positive(),
    name: name.optional(),
    description: z.string().max(10_000).optional(),
    type: McpToolType.optional(),
    status: McpToolStatus.optional(),
    /** Empty or absent keeps the stored settings; a value replaces them whole. */
    configJson: z.string().max(65_536).optional(),
    effect: ToolEffect.nullable().optional(),
    idempotent: z.boolean().nullable().optional(),
    /** A value replaces the sampling settings whole. */
    sampling: McpSamplingSettings.optional(),
  })
  .strict();
export type UpdateMcpToolBody = z.infer<typeof UpdateMcpToolBody>;

export const McpToolListQuery = NumberedPageQuery.extend({
  name: z.string().max(200).optional().describe('part of the name, case-insensitive'),
  type: McpToolType.optional(),
  status: McpToolStatus.optional(),
});
export type McpToolListQuery = z.infer<typeof McpToolListQuery>;

export const McpToolPage = numberedPageOf(McpToolRecord);
export type McpToolPage = z.infer<typeof McpToolPage>;

export const McpToolAllQuery = z.object({
  keyword: z.string().max(200).optional().describe('part of the name or description'),
  type: McpToolType.optional(),
  status: McpToolStatus.optional(),
});
export type McpToolAllQuery = z.infer<typeof McpToolAllQuery>;

export const McpToolList = z.object({ items: z.array(McpToolRecord) });
export type McpToolList = z.infer<typeof McpToolList>;

export const McpToolOption = McpToolRecord.pick({ id: true, name: true, description: true, type: true });
export const McpToolOptions = z.object({ items: z.array(McpToolOption) });
export type McpToolOptions = z.infer<typeof McpToolOptions>;

export const McpToolIdParam = z.object({ id: z.coerce.number().int().positive() });
export const McpToolIdsParam = z.object({
  ids: z
    .string()
    .regex(/^\d+(,\d+)*$/, 'comma-separated record ids')
    .transform((s) => [...new Set(s.split(',').map(Number))]),
});
export const McpToolStatusQuery = z.object({ status: McpToolStatus });

export const SetMcpToolStatus = z.object({ id: z.number().int().positive(), status: McpToolStatus });
export const DeleteMcpTools = z.object({ ids: z.array(z.number().int().positive()).min(1).max(1000) });
export const DeletedMcpTools = z.object({ deleted: z.array(z.number().int()) });
export type DeletedMcpTools = z.infer<typeof DeletedMcpTools>;
export const McpToolId = z.object({ id: z.number().int().positive() });

/** Test: a real connection and the server's real tools; a failure is `success: false` with the reason. */
export const McpToolTestResult = z.object({
  success: z.boolean(),
  message: z.string(),
  toolCount: z.number().int(),
  tools: z.array(z.string()),
});
export type McpToolTestResult = z.infer<typeof McpToolTestResult>;

/** Published (to every replica, no queue group) when a record changes: drop its client and cache. */
export const RecordChangedEvent = z.object({
  id: z.number().int(),
  reason: z.enum(['updated', 'status', 'deleted', 'created']),
});
export type RecordChangedEvent = z.infer<typeof RecordChangedEvent>;
export const RECORD_CHANGED_SUBJECT = 'events.registry.record.changed';

/** Connect: the gateway names its callback, which is where the provider sends the browser back. */
export const ConnectMcpTool = z.object({
  id: z.number().int().positive(),
  redirectUri: z.url({ protocol: /^https?$/ }).max(2048),
});
export const McpToolConnectResult = z.union([
  z.object({ connected: z.literal(true) }).strict(),
  z
    .object({
      authorizationUrl: z
        .string()
        .describe("the provider's sign-in page; following it back to the callback completes Connect"),
    })
    .strict(),
]);
export type McpToolConnectResult = z.infer<typeof McpToolConnectResult>;

/** What the provider sends back to `/api/mcp/oauth/callback` (RFC 6749 §4.1.2). */
export const McpOAuthCallbackQuery = z.object({
  state: z.string().min(1).max(512),
  code: z.string().min(1).max(4096).optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(2000).optional(),
  iss: z.string().max(2048).optional(),
});
export type McpOAuthCallbackQuery = z.infer<typeof McpOAuthCallbackQuery>;
/** The callback as the registry gets it: the caller, when the browser sent a token, must be the one who started. */
export const McpOAuthCallback = McpOAuthCallbackQuery;
export const McpOAuthCallbackResult = z.object({
  connected: z.literal(true),
  id: z.number().int(),
  name: z.string(),
});
export type McpOAuthCallbackResult = z.infer<typeof McpOAuthCallbackResult>;

/**
 * What the callback's HTML page (a browser asking for text/html) tells the web client: posted to
 * `window.opener` for the gateway's own origin only and on the BroadcastChannel of that name (also
 * same-origin only). Never a token, a code or the state: the record, or the refusal's code and sentence.
 */
export const MCP_OAUTH_MESSAGE = 'switchyard:mcp-oauth';
export const McpOAuthPopupMessage = z.discriminatedUnion('ok', [
  z.object({
    type: z.literal(MCP_OAUTH_MESSAGE),
    ok: z.literal(true),
    id: z.number().int(),
    name: z.string(),
  }),
  z.object({
    type: z.literal(MCP_OAUTH_MESSAGE),
    ok: z.literal(false),
    code: z.string(),
    detail: z.string(),
  }),
]);
export type McpOAuthPopupMessage = z.infer<typeof McpOAuthPopupMessage>;
