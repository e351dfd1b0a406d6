import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, normalize, relative, resolve } from 'node:path';
import { parse as parseDotEnv } from 'dotenv';
import { z } from 'zod';
import { PluginId, ServiceName } from '@switchyard/contracts';

/**
 * Where the gateway serves Prometheus metrics: its HTTP port is the public API, so /metrics lives on
 * a port of its own that no Service or published port exposes. (9464: OpenTelemetry's Prometheus
 * exporter default.) The other services serve /metrics on their HTTP port, which is internal.
 */
const GATEWAY_METRICS_PORT = 9464;

const DEFAULT_PORTS: Record<ServiceName, number> = {
  gateway: 3000,
  planner: 3001,
  executor: 3002,
  'tool-registry': 3003,
  scheduler: 3004,
};

const url = (protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    `must be a ${protocols.map((p) => p + '//').join(' or ')} URL`,
  );

/**
 * A host folder an admin mounts into chosen owners' workspaces, at `<WORKSPACE_DIR>/shared/<name>`.
 * `owners` holds owner ids, or "*" for every owner.
 */
const SharedFolderSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'a folder name: letters, digits, . _ -'),
    path: z
      .string()
      .refine((v) => isAbsolute(v) && normalize(v) !== '/', 'must be an absolute path other than /'),
    mode: z.enum(['ro', 'rw']).default('ro'),
    owners: z.array(z.string().regex(/^(\*|[0-9a-f-]{36})$/, 'an owner id (uuid) or "*"')).min(1),
  })
  .strict();
export type SharedFolder = z.infer<typeof SharedFolderSchema>;

/** The seed's command allowlist for execute_command. */
const DEFAULT_COMMANDS = [
  'npm',
  'pnpm',
  'yarn',
  'git',
  'mvn',
  'gradle',
  'java',
  'javac',
  'python',
  'python3',
  'pip',
  'node',
  'tsc',
  'eslint',
  'prettier',
  'cat',
  'ls',
  'dir',
  'echo',
];

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** A file the process reads at connect time (a mounted Secret): checked at boot so a typo stops it early. */
const absoluteFile = z
  .string()
  .refine((v) => isAbsolute(v), 'must be an absolute path')
  .refine((v) => existsSync(v), 'no such file');

/**
 * libpq's sslmode values that node-postgres can honour. `prefer` and `allow` (try one way, fall back
 * to the other) have no equivalent in the Node driver: refused rather than silently changed.
 */
const SSL_MODES = ['disable', 'require', 'verify-ca', 'verify-full', 'no-verify'] as const;
const SslMode = z.enum(SSL_MODES, {
  error: `must be one of ${SSL_MODES.join(', ')} (prefer and allow cannot be honoured by the Node driver)`,
});
type SslMode = z.infer<typeof SslMode>;

/** Every environment variable Switchyard reads. `.env.example` documents the same list. */
export const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).optional(),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  HOST: z.string().default('0.0.0.0'),
  PUBLIC_URL: url(['http:', 'https:']).optional(),
  NATS_URL: z
    .string()
    .default('nats://127.0.0.1:4222')
    .refine(
      (v) => v.split(',').every((s) => /^(nats|tls|ws|wss):\/\/[^\s]+$/.test(s.trim())),
      'must be nats:// URLs, comma separated',
    ),
  NATS_USER: z.string().min(1).max(1024).optional(),
  NATS_PASSWORD: z.string().min(1).max(4096).optional(),
  NATS_TOKEN: z.string().min(1).max(4096).optional(),
  NATS_NKEY_SEED_FILE: absoluteFile.optional(),
  NATS_CREDS_FILE: absoluteFile.optional(),
  NATS_TLS: bool.optional(),
  NATS_TLS_CA_FILE: absoluteFile.optional(),
  NATS_TLS_CERT_FILE: absoluteFile.optional(),
  NATS_TLS_KEY_FILE: absoluteFile.optional(),
  NATS_SUBJECT_PREFIX: z
    .string()
    .regex(/^([A-Za-z0-9_-]+\.)*$/, 'must be empty or dot-terminated tokens such as "staging."')
    .default(''),
  DATABASE_URL: url(['postgres:', 'postgresql:']).default('postgresql://postgres@127.0.0.1:5432/switchyard'),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  DATABASE_SSL_MODE: SslMode.optional(),
  DATABASE_SSL_ROOT_CERT: absoluteFile.optional(),
  DATABASE_SSL_CERT: absoluteFile.optional(),
  DATABASE_SSL_KEY: absoluteFile.optional(),
  REDIS_URL: url(['redis:', 'rediss:']).default('redis://127.0.0.1:6379'),
  REDIS_USERNAME: z.string().min(1).max(1024).optional(),
  REDIS_PASSWORD: z.string().min(1).max(4096).optional(),
  REDIS_TLS: bool.optional(),
  REDIS_TLS_CA_FILE: absoluteFile.optional(),
  REDIS_TLS_CERT_FILE: absoluteFile.optional(),
  REDIS_TLS_KEY_FILE: absoluteFile.optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_PRETTY: bool.default(false),
  RPC_TIMEOUT_MS: z.coerce.number().int().min(50).max(600_000).default(10_000),
  HEALTH_TIMEOUT_MS: z.coerce.number().int().min(50).max(30_000).default(1_000),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  SWITCHYARD_ADMIN_TOKEN: z
    .string()
    .min(24, 'must be at least 24 characters')
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
    .optional(),
  SWITCHYARD_ADMIN_OWNER: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]*$/)
    .max(64)
    .default('admin'),
  TOKEN_CACHE_TTL_MS: z.coerce.number().int().min(0).max(600_000).default(30_000),
  WORKSPACE_DIR: z
    .string()
    .refine((v) => isAbsolute(v), 'must be an absolute path')
    .optional(),
  FILES_DIR: z
    .string()
    .refine((v) => isAbsolute(v), 'must be an absolute path')
    .optional(),
  FILE_UPLOAD_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(10 * 1024 * 1024 * 1024)
    .default(25 * 1024 * 1024),
  FILE_QUOTA_BYTES: z.coerce.number().int().min(0).default(0),
  COMMAND_ALLOWLIST: z
    .string()
    .regex(
      /^[A-Za-z0-9._+-]+(,[A-Za-z0-9._+-]+)*$/,
      'must be comma-separated program names without paths or spaces',
    )
    .default(DEFAULT_COMMANDS.join(',')),
  PATH: z.string().default('/usr/local/bin:/usr/bin:/bin'),
  WORKSPACE_SHARED_FOLDERS: z
    .string()
    .transform((v, ctx) => {
      try {
        return JSON.parse(v) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON array of shared folders' });
        return z.NEVER;
      }
    })
    .pipe(z.array(SharedFolderSchema).max(64))
    .optional(),
  COMMAND_SANDBOX: z.enum(['bwrap', 'none']).default('bwrap'),
  COMMAND_SANDBOX_BIN: z
    .string()
    .refine((v) => isAbsolute(v), 'must be an absolute path to the bwrap program')
    .optional(),
  COMMAND_SANDBOX_NETWORK: bool.default(false),
  PLUGINS_DIR: z
    .string()
    .refine((v) => isAbsolute(v), 'must be an absolute path')
    .optional(),
  PLUGIN_SANDBOX: z.enum(['bwrap', 'none']).default('bwrap'),
  MARKET_DIR: z
    .string()
    .refine((v) => isAbsolute(v), 'must be an absolute path')
    .optional(),
  LLM_PROVIDER: z.enum(['openai', 'anthropic', 'ollama']).optional(),
  LLM_BASE_URL: url(['http:', 'https:']).optional(),
  LLM_MODEL: z.string().min(1).max(200).optional(),
  LLM_API_KEY: z.string().min(1).max(4096).optional(),
  LLM_TEMPERATURE: z.coerce.number().min(0).max(2).optional(),
  LLM_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(600_000).default(120_000),
  TOOL_CONFIG_KEY: z
    .string()
    .refine(
      (v) => Buffer.from(v, 'base64').length === 32,
      'must be 32 random bytes in base64 (openssl rand -base64 32)',
    )
    .optional(),
  AGENT_DATABASE_URL: url(['postgres:', 'postgresql:']).optional(),
  AGENT_ALLOWED_TABLES: z
    .string()
    .regex(
      /^([A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)?)(,[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)?)*$/,
      'must be comma-separated table names (schema.table or table for public.table), no spaces, no *',
    )
    .optional(),
  WEB_FETCH_ALLOW_PRIVATE: bool.default(false),
  WEB_FETCH_PRIVATE_HOSTS: z
    .string()
    .regex(/^[A-Za-z0-9.:[\]-]+(,[A-Za-z0-9.:[\]-]+)*$/, 'must be comma-separated host or host:port entries')
    .optional(),
  WEB_FETCH_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  WEB_FETCH_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
  MCP_HANDSHAKE_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(8_000),
  TOOL_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  ELICITATION_TIMEOUT_MS: z.coerce.number().int().min(100).max(86_400_000).default(600_000),
  TOOL_OUTPUT_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(16 * 1024 * 1024)
    .default(256 * 1024),
  RUN_LEASE_MS: z.coerce.number().int().min(500).max(600_000).default(15_000),
  RUN_SWEEP_MS: z.coerce.number().int().min(100).max(600_000).default(1_000),
  RUN_RESULT_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(16 * 1024 * 1024)
    .default(64 * 1024),
  RUN_LOCAL_TOOLS: bool.default(true),
  RUN_EVENT_WINDOW_MS: z.coerce.number().int().min(0).max(1_000).default(10),
  RUN_OWNER_ACTIVE_LIMIT: z.coerce.number().int().min(0).max(1_000_000).default(32),
  RUN_DEPLOYMENT_ACTIVE_LIMIT: z.coerce.number().int().min(0).max(1_000_000).default(512),
  PLAN_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(420_000),
  CHAT_MAX_TOOL_CALLS: z.coerce.number().int().min(1).max(10_000).default(25),
  CHAT_MAX_TOKENS: z.coerce.number().int().min(1).max(100_000_000).default(200_000),
  CHAT_TURN_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(600_000),
  PERMISSION_DANGEROUS_COMMANDS: z
    .string()
    .regex(/^[^,]+(,[^,]+)*$/, 'must be comma-separated command prefixes such as "rm,git push,sudo"')
    .optional(),
  TASK_RUNNING_LIMIT: z.coerce.number().int().min(1).max(10_000).default(16),
  TASK_GLOBAL_QUEUE_LIMIT: z.coerce.number().int().min(0).max(1_000_000).default(128),
  TASK_OWNER_QUEUE_LIMIT: z.coerce.number().int().min(0).max(1_000_000).default(32),
  TASK_BATCH_OWNER_LIMIT: z.coerce.number().int().min(0).max(1_000_000).default(16),
  TASK_BATCH_GLOBAL_LIMIT: z.coerce.number().int().min(0).max(1_000_000).default(64),
  TASK_NON_INTERACTIVE_OWNER_LIMIT: z.coerce.number().int().min(0).max(1_000_000).default(24),
  TASK_NON_INTERACTIVE_GLOBAL_LIMIT: z.coerce.number().int().min(0).max(1_000_000).default(96),
  OTEL_EXPORTER_OTLP_ENDPOINT: url(['http:', 'https:']).optional(),
  OTEL_METRIC_EXPORT_INTERVAL: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  SSE_HEARTBEAT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
  WEB_DIR: z
    .string()
    .refine((v) => isAbsolute(v), 'must be an absolute path')
    .optional(),
  WEBHOOK_ALLOWED_SOURCES: z
    .string()
    .regex(
      /^[0-9A-Fa-f.:]+\/\d{1,3}(,[0-9A-Fa-f.:]+\/\d{1,3})*$/,
      'must be comma-separated CIDR ranges such as 127.0.0.0/8,::1/128',
    )
    .default('127.0.0.0/8,::1/128'),
  HTTP_BODY_LIMIT: z
    .string()
    .regex(/^\d+(kb|mb)$/i, 'must look like 1mb or 512kb')
    .default('1mb'),
});
export type Env = z.infer<typeof EnvSchema>;

export interface AppConfig {
  readonly service: ServiceName;
  readonly version: string;
  readonly env: Env['NODE_ENV'];
  readonly http: {
    readonly host: string;
    readonly port: number;
    /** Set: /metrics is served on this port only (the gateway's). Unset: on `port`. */
    readonly metricsPort: number | undefined;
    readonly bodyLimit: string;
    readonly sseHeartbeatMs: number;
    /** The built admin web client the gateway serves at `/` (index.html + assets/). */
    readonly webDir: string;
    /**
     * The gateway as browsers reach it (no trailing slash): OAuth providers send people back to
     * `<publicUrl>/api/mcp/oauth/callback`. Unset: http://<HOST, or localhost>:<PORT>.
     */
    readonly publicUrl: string;
  };
  readonly nats: NatsSettings;
  readonly database: DatabaseSettings;
  readonly redis: RedisSettings;
  readonly log: { readonly level: Env['LOG_LEVEL']; readonly pretty: boolean };
  readonly rpc: { readonly timeoutMs: number; readonly healthTimeoutMs: number };
  readonly shutdownGraceMs: number;
  /** The chat model of the planner and chat; `undefined` fields mean "not configured". */
  readonly llm: {
    readonly provider: 'openai' | 'anthropic' | 'ollama' | undefined;
    readonly baseUrl: string | undefined;
    readonly model: string | undefined;
    readonly apiKey: string | undefined;
    readonly temperature: number | undefined;
    readonly timeoutMs: number;
  };
  readonly tools: {
    /**
     * Root of the file tools and execute_command. Each owner sees only their own area
     * (`<workspaceDir>/owners/<ownerId>`) at this path, plus the shared folders mounted for them.
     */
    readonly workspaceDir: string;
    readonly sharedFolders: readonly SharedFolder[];
    readonly commandAllowlist: readonly string[];
    /** PATH searched for allowlisted programs, and the only PATH their processes see. */
    readonly commandPath: string;
    /** How execute_command is confined: bubblewrap, or nothing (then only admins may run commands). */
    readonly sandbox: {
      readonly kind: 'bwrap' | 'none';
      /** The bwrap program; undefined: looked up on PATH. */
      readonly bin: string | undefined;
      /** Commands keep the host's network (otherwise they get an empty network namespace). */
      readonly network: boolean;
    };
    readonly timeoutMs: number;
    readonly outputLimitBytes: number;
    /** How long an MCP server may take to start and answer initialize + tools/list. Below RPC_TIMEOUT_MS. */
    readonly mcpHandshakeTimeoutMs: number;
    /** Key that encrypts MCP connection settings at rest (AES-256-GCM); base64 of 32 bytes. */
    readonly configKey: string | undefined;
    /** SQL tools: their own read-only connection; no fallback to DATABASE_URL. */
    readonly sql: { readonly url: string | undefined; readonly allowedTables: readonly string[] };
    readonly webFetch: {
      /** Every private, loopback and link-local address allowed (trusted networks only). */
      readonly allowPrivate: boolean;
      /** Exceptions by `host` or `host:port` as written in the URL (e.g. an intranet service). */
      readonly privateHosts: readonly string[];
      readonly maxBytes: number;
      readonly timeoutMs: number;
    };
  };
  /** Plugin bundles (tool registry; the gateway stages uploads here too). */
  readonly plugins: {
    /**
     * `bundles/<id>@<version>` (read-only to the server), `data/<id>` (its private data, removed on
     * uninstall) and `incoming/` (uploads and unpacking). Shared by every tool-registry replica.
     */
    readonly dir: string;
    /** bwrap: servers run inside bubblewrap when the host can; none: as plain children (unsandboxed). */
    readonly sandbox: 'bwrap' | 'none';
  };
  /** The MCP market (tool registry): file sources must lie under this directory. */
  readonly market: { readonly dir: string };
  /** Uploaded files (`/api/files`): staged by the gateway, owned by the tool registry. */
  readonly files: {
    /** Root of the bytes: `blobs/<ownerId>/<fileId>` and `incoming/` (shared by gateway and registry). */
    readonly dir: string;
    /** One upload beyond this is 413. */
    readonly uploadLimitBytes: number;
    /** All of one owner's files together; 0: no quota. */
    readonly quotaBytes: number;
  };
  /** Agent runs (executor). */
  readonly runs: {
    /** How long a replica holds a run without renewing; renewed every third of it. */
    readonly leaseMs: number;
    /** How often each replica looks for runs whose owner stopped renewing (and marks them interrupted). */
    readonly sweepMs: number;
    /** A step result kept in the history beyond this many bytes is cut and flagged truncated. */
    readonly resultLimitBytes: number;
    /** Longest a plan may take to draft, retries included. */
    readonly planTimeoutMs: number;
    /**
     * Steps calling a local built-in (pure work such as `wait`, see `localTool`) run in the executor's
     * process instead of a round trip to the tool registry. False: every call goes to the registry.
     */
    readonly localTools: boolean;
    /**
     * While a replica's runs are busy, the run events it stores are published for live streams at
     * most once per this many ms (an event after a quiet spell and a run's end leave at once). 0:
     * every stored batch is published as it is stored.
     */
    readonly eventWindowMs: number;
    /**
     * Foreground runs (started by a person or a client, not a background task) and chat turns active
     * at once, per owner and for the deployment; beyond: 429 capacity_exceeded. 0: no limit.
     */
    readonly foreground: { readonly owner: number; readonly deployment: number };
  };
  /**
   * MCP servers' input requests (elicitation): how long a tool call waits for the person's answer
   * before it answers `cancel` (the wait does not count against the tool's timeout).
   */
  readonly elicitation: { readonly timeoutMs: number };
  /** AI chat (executor): the platform's ceilings on one turn; a session's budget may only tighten them. */
  readonly chat: {
    readonly maxToolCalls: number;
    readonly maxTokens: number;
    readonly turnTimeoutMs: number;
  };
  /** Background-task capacity (the seed's numbers by default). */
  readonly tasks: {
    readonly running: number;
    readonly globalQueue: number;
    readonly ownerQueue: number;
    readonly batchOwner: number;
    readonly batchGlobal: number;
    readonly nonInteractiveOwner: number;
    readonly nonInteractiveGlobal: number;
  };
  /** Webhook deliveries (gateway): the source ranges accepted, loopback only by default (the seed's posture). */
  readonly webhooks: { readonly allowedSources: readonly string[] };
  /** OTLP/HTTP metrics push (JSON to `<endpoint>/v1/metrics`) when an endpoint is set. */
  readonly otlp: { readonly endpoint: string | undefined; readonly intervalMs: number };
  readonly permissions: {
    /** Command prefixes that void allow rules (always ask); undefined: the built-in floor. */
    readonly dangerousCommands: readonly string[] | undefined;
  };
  readonly identity: {
    readonly adminToken: string | undefined;
    readonly adminOwner: string;
    readonly tokenCacheTtlMs: number;
  };
}

/** PEM files for a TLS client: the CA that signs the server, and a client certificate for mutual TLS. */
export interface TlsFiles {
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
}

/** One way to prove who we are to NATS (the server's `authorization` / operator mode decides which). */
export type NatsAuth =
  | { readonly kind: 'none' }
  | { readonly kind: 'user'; readonly user: string; readonly pass: string }
  | { readonly kind: 'token'; readonly token: string }
  /** A user NKey: the seed file signs the server's nonce; re-read at every (re)connect. */
  | { readonly kind: 'nkey'; readonly seedFile: string }
  /** A `.creds` file (user JWT + seed, decentralized auth); re-read at every (re)connect. */
  | { readonly kind: 'creds'; readonly file: string };

export interface NatsSettings {
  /** Without user info: credentials are in `auth`, so a URL can be logged. */
  readonly servers: string[];
  readonly subjectPrefix: string;
  readonly auth: NatsAuth;
  /** Set: TLS is required (a tls:// URL, NATS_TLS=true or a NATS_TLS_* file), verified against `caFile` or Node's store. */
  readonly tls: TlsFiles | undefined;
}

export interface DatabaseSettings {
  /** The connection URL without its ssl* parameters (those are in `ssl`: node-postgres lets the URL override options). */
  readonly url: string;
  readonly poolSize: number;
  /**
   * Undefined: no TLS. `verify` full: certificate chain and host name; ca: the chain only (libpq's
   * verify-ca); none: encrypted, unverified (libpq's require without a root certificate).
   */
  readonly ssl: (TlsFiles & { readonly verify: 'full' | 'ca' | 'none' }) | undefined;
}

export interface RedisSettings {
  /** Host, port and database number; no user info (credentials are in username/password). */
  readonly url: string;
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** Set: TLS (a rediss:// URL, REDIS_TLS=true or a REDIS_TLS_* file), verified against `caFile` or Node's store. */
  readonly tls: TlsFiles | undefined;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Reads and validates the environment once. Throws a ConfigError whose message is one line per bad
 * variable, naming it; `loadConfigOrExit` prints that and stops the process.
 */
export function loadConfig(
  service: ServiceName,
  env: Record<string, string | undefined> = process.env,
  version = '0.1.0',
): AppConfig {
  // Empty strings mean "unset" so that `FOO=` in an .env file falls back to the default.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration: ${lines.join('; ')}`);
  }
  const e = parsed.data;
  const workspaceDir = resolve(e.WORKSPACE_DIR ?? join(process.cwd(), 'workspace'));
  const sharedFolders = e.WORKSPACE_SHARED_FOLDERS ?? [];
  const owners = join(workspaceDir, 'owners');
  const clash = sharedFolders.find((f) => within(owners, f.path) || within(f.path, owners));
  if (clash)
    throw new ConfigError(
      `invalid configuration: WORKSPACE_SHARED_FOLDERS: "${clash.name}" (${clash.path}) overlaps the owners' areas under ${owners}`,
    );
  if (e.PLUGINS_DIR && (within(owners, e.PLUGINS_DIR) || within(e.PLUGINS_DIR, owners)))
    throw new ConfigError(
      `invalid configuration: PLUGINS_DIR: ${e.PLUGINS_DIR} overlaps the owners' areas under ${owners}`,
    );
  if (new Set(sharedFolders.map((f) => f.name)).size !== sharedFolders.length)
    throw new ConfigError('invalid configuration: WORKSPACE_SHARED_FOLDERS: folder names must be unique');
  if (e.AGENT_DATABASE_URL && sameDatabase(e.AGENT_DATABASE_URL, e.DATABASE_URL))
    throw new ConfigError(
      "invalid configuration: AGENT_DATABASE_URL: must not be Switchyard's own database (its tables hold every owner's runs and secrets); give the SQL tools a database of their own",
    );
  const port = e.PORT ?? DEFAULT_PORTS[service];
  const metricsPort = service === 'gateway' ? (e.METRICS_PORT ?? GATEWAY_METRICS_PORT) : undefined;
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === port)
    throw new ConfigError(
      `invalid configuration: METRICS_PORT: must differ from PORT (${port}); the gateway's port is public`,
    );
  return {
    service,
    version,
    env: e.NODE_ENV,
    http: {
      host: e.HOST,
      port,
      metricsPort,
      bodyLimit: e.HTTP_BODY_LIMIT,
      sseHeartbeatMs: e.SSE_HEARTBEAT_MS,
      // Services run from the repository root (npm start) or /app (the image): dist/web is the Vite build.
      webDir: resolve(e.WEB_DIR ?? join(process.cwd(), 'dist', 'web')),
      publicUrl: (
        e.PUBLIC_URL ?? `http://${e.HOST === '0.0.0.0' || e.HOST === '::' ? 'localhost' : e.HOST}:${port}`
      ).replace(/\/+$/, ''),
    },
    nats: natsSettings(e),
    database: databaseSettings(e),
    redis: redisSettings(e),
    log: { level: e.LOG_LEVEL, pretty: e.LOG_PRETTY },
    rpc: { timeoutMs: e.RPC_TIMEOUT_MS, healthTimeoutMs: e.HEALTH_TIMEOUT_MS },
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    llm: {
      provider: e.LLM_PROVIDER,
      baseUrl: e.LLM_BASE_URL,
      model: e.LLM_MODEL,
      apiKey: e.LLM_API_KEY,
      temperature: e.LLM_TEMPERATURE,
      timeoutMs: e.LLM_TIMEOUT_MS,
    },
    tools: {
      workspaceDir,
      sharedFolders,
      commandAllowlist: e.COMMAND_ALLOWLIST.split(','),
      commandPath: e.PATH,
      sandbox: { kind: e.COMMAND_SANDBOX, bin: e.COMMAND_SANDBOX_BIN, network: e.COMMAND_SANDBOX_NETWORK },
      configKey: e.TOOL_CONFIG_KEY,
      mcpHandshakeTimeoutMs: e.MCP_HANDSHAKE_TIMEOUT_MS,
      timeoutMs: e.TOOL_TIMEOUT_MS,
      outputLimitBytes: e.TOOL_OUTPUT_LIMIT_BYTES,
      sql: {
        url: e.AGENT_DATABASE_URL,
        // Bare names mean the public schema; matching is exact on schema + table.
        allowedTables: (e.AGENT_ALLOWED_TABLES ?? '')
          .split(',')
          .filter(Boolean)
          .map((t) => (t.includes('.') ? t : `public.${t}`)),
      },
      webFetch: {
        allowPrivate: e.WEB_FETCH_ALLOW_PRIVATE,
        privateHosts: (e.WEB_FETCH_PRIVATE_HOSTS ?? '')
          .split(',')
          .filter(Boolean)
          .map((h) => h.toLowerCase()),
        maxBytes: e.WEB_FETCH_MAX_BYTES,
        timeoutMs: e.WEB_FETCH_TIMEOUT_MS,
      },
    },
    plugins: {
      // Beside the owners' areas, never inside one: no owner's file tools can reach it.
      dir: resolve(e.PLUGINS_DIR ?? join(workspaceDir, 'plugins')),
      sandbox: e.PLUGIN_SANDBOX,
    },
    market: { dir: resolve(e.MARKET_DIR ?? join(process.cwd(), 'market')) },
    files: {
      dir: resolve(e.FILES_DIR ?? join(process.cwd(), 'files')),
      uploadLimitBytes: e.FILE_UPLOAD_LIMIT_BYTES,
      quotaBytes: e.FILE_QUOTA_BYTES,
    },
    runs: {
      leaseMs: e.RUN_LEASE_MS,
      sweepMs: e.RUN_SWEEP_MS,
      resultLimitBytes: e.RUN_RESULT_LIMIT_BYTES,
      planTimeoutMs: e.PLAN_TIMEOUT_MS,
      localTools: e.RUN_LOCAL_TOOLS,
      eventWindowMs: e.RUN_EVENT_WINDOW_MS,
      foreground: { owner: e.RUN_OWNER_ACTIVE_LIMIT, deployment: e.RUN_DEPLOYMENT_ACTIVE_LIMIT },
    },
    elicitation: { timeoutMs: e.ELICITATION_TIMEOUT_MS },
    chat: {
      maxToolCalls: e.CHAT_MAX_TOOL_CALLS,
      maxTokens: e.CHAT_MAX_TOKENS,
      turnTimeoutMs: e.CHAT_TURN_TIMEOUT_MS,
    },
    tasks: {
      running: e.TASK_RUNNING_LIMIT,
      globalQueue: e.TASK_GLOBAL_QUEUE_LIMIT,
      ownerQueue: e.TASK_OWNER_QUEUE_LIMIT,
      batchOwner: e.TASK_BATCH_OWNER_LIMIT,
      batchGlobal: e.TASK_BATCH_GLOBAL_LIMIT,
      nonInteractiveOwner: e.TASK_NON_INTERACTIVE_OWNER_LIMIT,
      nonInteractiveGlobal: e.TASK_NON_INTERACTIVE_GLOBAL_LIMIT,
    },
    webhooks: { allowedSources: e.WEBHOOK_ALLOWED_SOURCES.split(',') },
    otlp: { endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT, intervalMs: e.OTEL_METRIC_EXPORT_INTERVAL },
    permissions: {
      dangerousCommands: e.PERMISSION_DANGEROUS_COMMANDS?.split(',').map((c) =>
        c.trim().replace(/\s+/g, ' '),
      ),
    },
    identity: {
      adminToken: e.SWITCHYARD_ADMIN_TOKEN,
      adminOwner: e.SWITCHYARD_ADMIN_OWNER,
      tokenCacheTtlMs: e.TOKEN_CACHE_TTL_MS,
    },
  };
}

/**
 * A plugin's private, writable data directory (SWITCHYARD_PLUGIN_DATA of its server and its hooks):
 * `<PLUGINS_DIR>/data/<id>`, outside every bundle directory so it survives upgrades; removed on
 * uninstall. The id is checked here, so no caller can turn it into a path out of the data area.
 */
export function pluginDataDir(config: Pick<AppConfig, 'plugins'>, id: string): string {
  if (!PluginId.safeParse(id).success) throw new Error(`not a plugin id: ${id}`);
  return join(config.plugins.dir, 'data', id);
}

/** Where uploaded bundles are staged and unpacked: the gateway writes there, the registry reads. */
export function pluginIncomingDir(config: Pick<AppConfig, 'plugins'>): string {
  return join(config.plugins.dir, 'incoming');
}

const tlsFiles = (caFile?: string, certFile?: string, keyFile?: string): TlsFiles => ({
  ...(caFile ? { caFile } : {}),
  ...(certFile ? { certFile } : {}),
  ...(keyFile ? { keyFile } : {}),
});

function clientCertPair(cert: string | undefined, key: string | undefined, names: string): void {
  if (!cert !== !key)
    throw new ConfigError(
      `invalid configuration: ${names}: give both or neither (a client certificate needs its key)`,
    );
}

/**
 * nats.js ignores user info in server URLs, so credentials written as `nats://user:pass@host` or
 * `nats://token@host` are taken out of the URLs here and passed as options; they may also come from
 * NATS_USER/NATS_PASSWORD, NATS_TOKEN, NATS_NKEY_SEED_FILE or NATS_CREDS_FILE — exactly one form.
 */
function natsSettings(e: Env): NatsSettings {
  const bad = (msg: string) => new ConfigError(`invalid configuration: ${msg}`);
  const urls = e.NATS_URL.split(',').map((s) => new URL(s.trim()));
  const fromUrls = new Set(urls.map((u) => (u.username || u.password ? `${u.username}\n${u.password}` : '')));
  if (fromUrls.size > 1) throw bad('NATS_URL: every server URL must carry the same credentials (or none)');
  const [inUrl] = [...fromUrls];
  const forms: NatsAuth[] = [];
  if (inUrl) {
    const [user, pass] = inUrl.split('\n').map(decodeURIComponent) as [string, string];
    forms.push(pass ? { kind: 'user', user, pass } : { kind: 'token', token: user });
  }
  if (e.NATS_USER || e.NATS_PASSWORD) {
    if (!e.NATS_USER || !e.NATS_PASSWORD) throw bad('NATS_USER and NATS_PASSWORD: give both or neither');
    forms.push({ kind: 'user', user: e.NATS_USER, pass: e.NATS_PASSWORD });
  }
  if (e.NATS_TOKEN) forms.push({ kind: 'token', token: e.NATS_TOKEN });
  if (e.NATS_NKEY_SEED_FILE) forms.push({ kind: 'nkey', seedFile: e.NATS_NKEY_SEED_FILE });
  if (e.NATS_CREDS_FILE) forms.push({ kind: 'creds', file: e.NATS_CREDS_FILE });
  if (forms.length > 1)
    throw bad(
      'NATS credentials: give one form only (user info in NATS_URL, NATS_USER/NATS_PASSWORD, NATS_TOKEN, NATS_NKEY_SEED_FILE or NATS_CREDS_FILE)',
    );
  clientCertPair(e.NATS_TLS_CERT_FILE, e.NATS_TLS_KEY_FILE, 'NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE');
  const files = tlsFiles(e.NATS_TLS_CA_FILE, e.NATS_TLS_CERT_FILE, e.NATS_TLS_KEY_FILE);
  const wantsTls = e.NATS_TLS ?? (urls.some((u) => u.protocol === 'tls:') || Object.keys(files).length > 0);
  if (e.NATS_TLS === false && Object.keys(files).length > 0)
    throw bad('NATS_TLS: false contradicts the NATS_TLS_* files given');
  return {
    servers: urls.map((u) => {
      u.username = '';
      u.password = '';
      // URL keeps a trailing slash after the host; nats.js wants host:port.
      return u.toString().replace(/\/$/, '');
    }),
    subjectPrefix: e.NATS_SUBJECT_PREFIX,
    auth: forms[0] ?? { kind: 'none' },
    tls: wantsTls ? files : undefined,
  };
}

const PG_SSL_PARAMS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'ssl', 'uselibpqcompat'];

/**
 * TLS to Postgres from DATABASE_SSL_* or, as libpq users write it, the URL's sslmode/sslrootcert/
 * sslcert/sslkey (a variable wins over the URL). Taken out of the URL because node-postgres lets a
 * connection string override the `ssl` option, and since pg 8.x treats `require` as `verify-full`.
 * libpq's meanings are kept: `require` with a root certificate verifies the chain, like `verify-ca`.
 */
function databaseSettings(e: Env): DatabaseSettings {
  const u = new URL(e.DATABASE_URL);
  const q = (k: string) => u.searchParams.get(k) ?? undefined;
  const urlMode = q('sslmode');
  if (urlMode !== undefined && !SslMode.safeParse(urlMode).success)
    throw new ConfigError(
      `invalid configuration: DATABASE_URL: sslmode=${urlMode} is not supported; use ${SSL_MODES.join(', ')}`,
    );
  const fileParam = (k: string, v: string | undefined) => {
    if (v === undefined) return undefined;
    if (!isAbsolute(v) || !existsSync(v))
      throw new ConfigError(`invalid configuration: DATABASE_URL: ${k} must be an absolute path to a file`);
    return v;
  };
  const mode: SslMode = e.DATABASE_SSL_MODE ?? (urlMode as SslMode | undefined) ?? 'disable';
  const ca = e.DATABASE_SSL_ROOT_CERT ?? fileParam('sslrootcert', q('sslrootcert'));
  const cert = e.DATABASE_SSL_CERT ?? fileParam('sslcert', q('sslcert'));
  const key = e.DATABASE_SSL_KEY ?? fileParam('sslkey', q('sslkey'));
  clientCertPair(cert, key, 'DATABASE_SSL_CERT and DATABASE_SSL_KEY (or sslcert and sslkey)');
  for (const k of PG_SSL_PARAMS) u.searchParams.delete(k);
  const verify =
    mode === 'verify-full' ? 'full' : mode === 'verify-ca' || (mode === 'require' && ca) ? 'ca' : 'none';
  if (mode === 'disable' && (ca || cert))
    throw new ConfigError(
      'invalid configuration: DATABASE_SSL_MODE: certificate files are given but TLS is disabled; set require, verify-ca or verify-full',
    );
  return {
    url: u.toString(),
    poolSize: e.DATABASE_POOL_SIZE,
    ssl: mode === 'disable' ? undefined : { ...tlsFiles(ca, cert, key), verify },
  };
}

/** ioredis lets the URL's user info and scheme win over options: both are taken out and passed explicitly. */
function redisSettings(e: Env): RedisSettings {
  const u = new URL(e.REDIS_URL);
  const username = e.REDIS_USERNAME ?? (u.username ? decodeURIComponent(u.username) : undefined);
  const password = e.REDIS_PASSWORD ?? (u.password ? decodeURIComponent(u.password) : undefined);
  clientCertPair(e.REDIS_TLS_CERT_FILE, e.REDIS_TLS_KEY_FILE, 'REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE');
  const files = tlsFiles(e.REDIS_TLS_CA_FILE, e.REDIS_TLS_CERT_FILE, e.REDIS_TLS_KEY_FILE);
  if (e.REDIS_TLS === false && Object.keys(files).length > 0)
    throw new ConfigError('invalid configuration: REDIS_TLS: false contradicts the REDIS_TLS_* files given');
  const tls = e.REDIS_TLS ?? (u.protocol === 'rediss:' || Object.keys(files).length > 0);
  u.username = '';
  u.password = '';
  u.protocol = 'redis:';
  return {
    url: u.toString().replace(/\/$/, ''),
    username: username || undefined,
    password,
    tls: tls ? files : undefined,
  };
}

/** `path` is `dir` or lies under it. */
function within(dir: string, path: string): boolean {
  const rel = relative(resolve(dir), resolve(path));
  return rel === '' || !(rel.startsWith('..') || isAbsolute(rel));
}

/** Same server and database name: the SQL tools would read the platform's own tables. */
function sameDatabase(a: string, b: string): boolean {
  const key = (u: string) => {
    const p = new URL(u);
    const host = p.hostname === 'localhost' ? '127.0.0.1' : p.hostname;
    return `${host}:${p.port || '5432'}/${decodeURIComponent(p.pathname.slice(1)) || 'postgres'}`;
  };
  return key(a) === key(b);
}

/** The process environment over the values of `./.env` (if there is one): real variables win. */
export function environment(cwd = process.cwd()): Record<string, string | undefined> {
  const file = join(cwd, '.env');
  const fromFile = existsSync(file) ? parseDotEnv(readFileSync(file)) : {};
  return { ...fromFile, ...process.env };
}

export function loadConfigOrExit(
  service: ServiceName,
  env: Record<string, string | undefined> = environment(),
): AppConfig {
  try {
    return loadConfig(service, env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${service}: ${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
}

export const DEFAULT_SERVICE_PORTS = DEFAULT_PORTS;

/** Nest injection token for AppConfig. */
export const APP_CONFIG = Symbol('APP_CONFIG');

/** Where an upload's bytes live: `<FILES_DIR>/blobs/<ownerId>/<fileId>` (ids are uuids, checked by the callers). */
export function fileBlobPath(filesDir: string, ownerId: string, fileId: string): string {
  return join(filesDir, 'blobs', ownerId, fileId);
}

/** Where the gateway stages an upload before the registry adopts it. */
export function stagedUploadPath(filesDir: string, stagedId: string): string {
  return join(filesDir, 'incoming', stagedId);
}
