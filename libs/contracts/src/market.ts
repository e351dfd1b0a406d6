import { z } from 'zod';
import { FieldIssue } from './errors';
import { McpToolRecord } from './mcp-tools';

/**
 * The MCP market (seed 000 §4.3): sources an admin configures, in the official MCP Registry's
 * `server.json` format (https://github.com/modelcontextprotocol/registry, docs/server-json). A source
 * is a URL or a file under MARKET_DIR holding either a registry listing
 * (`{"servers":[{"server":{…}}]}`, as `GET /v0/servers` answers) or one server.json. Entries are
 * imported as LOCAL records (from a stdio package) or REMOTE records (from a Streamable HTTP
 * remote), untested like any new record.
 */

/** A source's document beyond this is refused. */
export const MARKET_SOURCE_MAX_BYTES = 4 * 1024 * 1024;

const SourceName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,99}$/, 'lower-case letters, digits, ".", "_" or "-" (1 to 100)');

export const MarketSourceBody = z
  .object({
    name: SourceName,
    url: z
      .string()
      .max(2_000)
      .optional()
      .describe('http(s) URL of a registry listing or a server.json (the address checks of web_fetch apply)'),
    path: z.string().max(1_000).optional().describe('a file under MARKET_DIR on the tool registry host'),
  })
  .strict()
  .superRefine((b, ctx) => {
    if ((b.url === undefined) === (b.path === undefined))
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'give exactly one of url or path' });
  });
export type MarketSourceBody = z.infer<typeof MarketSourceBody>;

export const MarketSource = z.object({
  id: z.string().uuid(),
  name: z.string(),
  url: z.string().nullable(),
  path: z.string().nullable(),
  createdAt: z.string(),
});
export type MarketSource = z.infer<typeof MarketSource>;

export const MarketSourceList = z.object({ items: z.array(MarketSource) });
export type MarketSourceList = z.infer<typeof MarketSourceList>;
export const MarketSourceParam = z.object({ source: SourceName });

// ── server.json (the parts Switchyard uses; other fields are kept as they are) ─────────────────

const Input = z.object({
  description: z.string().max(2_000).optional(),
  isRequired: z.boolean().optional(),
  isSecret: z.boolean().optional(),
  format: z.string().max(50).optional(),
  value: z.string().max(4_096).optional(),
  default: z.string().max(4_096).optional(),
  choices: z.array(z.string().max(1_000)).max(100).optional(),
});

export const ServerArgument = Input.extend({
  type: z.enum(['positional', 'named']),
  name: z.string().max(200).optional(),
  valueHint: z.string().max(200).optional(),
  isRepeated: z.boolean().optional(),
});
export type ServerArgument = z.infer<typeof ServerArgument>;

export const ServerKeyValue = Input.extend({
  name: z.string().min(1).max(200),
});
export type ServerKeyValue = z.infer<typeof ServerKeyValue>;

export const ServerPackage = z.object({
  registryType: z.string().min(1).max(50).describe('npm, pypi, oci, nuget, mcpb'),
  registryBaseUrl: z.string().max(2_000).optional(),
  identifier: z.string().min(1).max(500),
  version: z.string().max(200).optional(),
  runtimeHint: z.string().max(100).optional(),
  transport: z.object({ type: z.string().max(50), url: z.string().max(2_000).optional() }).passthrough(),
  runtimeArguments: z.array(ServerArgument).max(100).optional(),
  packageArguments: z.array(ServerArgument).max(100).optional(),
  environmentVariables: z.array(ServerKeyValue).max(100).optional(),
});
export type ServerPackage = z.infer<typeof ServerPackage>;

export const ServerRemote = z.object({
  type: z.string().max(50).describe('streamable-http or sse'),
  url: z.string().min(1).max(2_000),
  headers: z.array(ServerKeyValue).max(50).optional(),
});
export type ServerRemote = z.infer<typeof ServerRemote>;

export const ServerJson = z
  .object({
    $schema: z.string().max(500).optional(),
    name: z
      .string()
      .min(3)
      .max(200)
      .regex(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/, 'reverse-DNS namespace and a name: io.github.user/server'),
    title: z.string().max(200).optional(),
    description: z.string().max(4_000).default(''),
    version: z.string().min(1).max(200),
    websiteUrl: z.string().max(2_000).optional(),
    repository: z
      .object({ url: z.string().max(2_000), source: z.string().max(100).optional() })
      .passthrough()
      .optional(),
    packages: z.array(ServerPackage).max(50).default([]),
    remotes: z.array(ServerRemote).max(50).default([]),
  })
  .passthrough();
export type ServerJson = z.infer<typeof ServerJson>;

export const MarketEntry = z.object({
  source: z.string(),
  name: z.string(),
  title: z.string().nullable(),
  description: z.string(),
  version: z.string(),
  /** What it can be imported as. */
  kinds: z.array(z.enum(['LOCAL', 'REMOTE'])),
});
export type MarketEntry = z.infer<typeof MarketEntry>;

export const MarketEntriesQuery = z.object({
  q: z.string().max(200).optional().describe('part of the name, title or description, case-insensitive'),
  source: SourceName.optional().describe('one source only (default: every source)'),
});
export type MarketEntriesQuery = z.infer<typeof MarketEntriesQuery>;

export const MarketEntryList = z.object({
  items: z.array(MarketEntry),
  /** Entries left out as malformed, and sources that could not be read, each by path. */
  problems: z.array(FieldIssue.extend({ source: z.string() })),
});
export type MarketEntryList = z.infer<typeof MarketEntryList>;

export const MarketEntryParam = z.object({ source: SourceName, name: z.string().min(3).max(200) });

export const MarketEntryDetail = MarketEntry.extend({ server: z.record(z.string(), z.unknown()) });
export type MarketEntryDetail = z.infer<typeof MarketEntryDetail>;

export const MarketImportBody = z
  .object({
    source: SourceName,
    name: z.string().min(3).max(200).describe('the entry: its server.json name'),
    as: z
      .object({
        name: z
          .string()
          .trim()
          .min(1)
          .max(200)
          .optional()
          .describe('the record name (default: the last part of the entry name)'),
        kind: z
          .enum(['LOCAL', 'REMOTE'])
          .optional()
          .describe('default: LOCAL from a stdio package if there is one'),
        env: z
          .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string().max(16_384))
          .optional()
          .describe('values of the environment variables the package declares (required ones must be given)'),
        headers: z
          .record(z.string().regex(/^[A-Za-z0-9-]{1,100}$/), z.string().max(8_192))
          .optional()
          .describe('values of the headers the remote declares'),
      })
      .strict()
      .default({}),
  })
  .strict();
export type MarketImportBody = z.infer<typeof MarketImportBody>;

export const MarketImported = z.object({
  record: McpToolRecord,
  kind: z.enum(['LOCAL', 'REMOTE']),
  /** The connection settings written (secret values shown as "***"). */
  config: z.record(z.string(), z.unknown()),
});
export type MarketImported = z.infer<typeof MarketImported>;
