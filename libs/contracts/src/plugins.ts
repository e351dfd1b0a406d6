import { z } from 'zod';
import { ToolEffect } from './tools';

/**
 * Plugins: bundles (a folder or a .tgz) that ship one stdio MCP server, the metadata of its tools,
 * typed flow nodes and optional hooks. The manifest is `switchyard-plugin.json` at the bundle's root.
 * Its tools join the catalog under their own names (`source: "plugin"`); its server runs in the
 * plugin sandbox (bubblewrap) with the bundle read-only and a private data directory.
 */

export const PLUGIN_MANIFEST_FILE = 'switchyard-plugin.json';
/** Optional hooks of a bundle, relative to its root. */
export const PLUGIN_HOOKS_FILE = 'hooks/hooks.json';
/** An uploaded bundle (.tgz) beyond this is refused with 413. */
export const PLUGIN_UPLOAD_LIMIT_BYTES = 50 * 1024 * 1024;

/** Environment of a plugin's server and of its trusted hooks. */
export const PluginEnv = {
  /** The bundle's directory (read-only inside the sandbox). */
  root: 'SWITCHYARD_PLUGIN_ROOT',
  /** The plugin's private, writable data directory (kept across restarts and upgrades). */
  data: 'SWITCHYARD_PLUGIN_DATA',
  /** The admin's settings for the plugin as JSON (secrets decrypted only here). */
  config: 'SWITCHYARD_PLUGIN_CONFIG',
} as const;

export const PluginId = z
  .string()
  .regex(/^[a-z][a-z0-9-]{1,62}[a-z0-9]$/, 'lower-case letters, digits and "-", 3 to 64 characters');

/** Tool names as the catalog shows them; a plugin's tool may not shadow a built-in or another plugin's. */
const ToolName = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,62}$/, 'lower-case letters, digits and "_", starting with a letter');

const JsonSchemaObject = z.record(z.string(), z.unknown());

export const PluginToolMeta = z
  .object({
    effect: ToolEffect.describe('read, write or external: decides approval defaults'),
    idempotent: z.boolean().default(false).describe('safe to retry and to re-run on resume'),
    requiresApproval: z
      .boolean()
      .default(false)
      .describe('ask before every call in every permission mode but full access'),
  })
  .strict();
export type PluginToolMeta = z.infer<typeof PluginToolMeta>;

/** A typed node of the flow builder's palette, for one of the plugin's tools. */
export const PluginFlowNode = z
  .object({
    tool: ToolName,
    label: z.string().min(1).max(100),
    help: z.string().max(4_000).default(''),
    /** JSON Schema of the outputs (nested `properties` become nested reference fields). */
    outputs: JsonSchemaObject,
    /** Example outputs (shown in the palette and used for data preview). */
    examples: z.array(z.unknown()).max(5).default([]),
  })
  .strict();
export type PluginFlowNode = z.infer<typeof PluginFlowNode>;

/** One setting an admin gives the plugin; `secret` ones are write-only and encrypted at rest. */
export const PluginSetting = z
  .object({
    key: z.string().regex(/^[a-zA-Z][a-zA-Z0-9_]{0,62}$/),
    label: z.string().min(1).max(200),
    secret: z.boolean().default(false),
    required: z.boolean().default(false),
  })
  .strict();

export const PluginManifest = z
  .object({
    id: PluginId,
    version: z.string().regex(/^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/, 'a semantic version such as 1.2.0'),
    name: z.string().min(1).max(200).optional(),
    description: z.string().max(4_000).default(''),
    /** The stdio MCP server: `command` runs with `args`; `${root}` in either is the bundle's directory. */
    server: z
      .object({
        command: z
          .string()
          .min(1)
          .max(1024)
          .regex(
            /^[^\s;&|`$<>]+$|^\$\{root\}\/[^\s;&|`<>]+$/,
            'an executable, without spaces or shell syntax',
          ),
        args: z.array(z.string().max(4_096)).max(100).default([]),
      })
      .strict(),
    /** Per tool of the server. A tool the server lists but the manifest does not name is left out. */
    tools: z.record(ToolName, PluginToolMeta),
    flowNodes: z.array(PluginFlowNode).max(200).default([]),
    settings: z.array(PluginSetting).max(50).default([]),
    /** What the sandbox lets the server do beyond the defaults; an admin grants each one. */
    permissions: z
      .object({
        network: z.boolean().default(false).describe('open sockets (granted by an admin)'),
        files: z.boolean().default(false).describe('see the files granted to runs that call its tools'),
      })
      .strict()
      .default({ network: false, files: false }),
  })
  .strict();
export type PluginManifest = z.infer<typeof PluginManifest>;

/** How a host runs plugin servers: inside bubblewrap, or (documented fallback) as plain children. */
export const SandboxPosture = z.enum(['sandboxed', 'unsandboxed']);
export type SandboxPosture = z.infer<typeof SandboxPosture>;

/** The sandbox of plugin servers on this host, and why it is what it is. */
export const PluginSandboxStatus = z.object({
  posture: SandboxPosture,
  reason: z
    .string()
    .optional()
    .describe('why plugin servers run unsandboxed (bubblewrap missing, failed probe, PLUGIN_SANDBOX=none)'),
});
export type PluginSandboxStatus = z.infer<typeof PluginSandboxStatus>;

/** Admin grants beyond the sandbox's defaults; only what the manifest asks for can be granted. */
export const PluginGrants = z.object({
  network: z.boolean().describe('the server may open sockets (its own network namespace otherwise)'),
  files: z.boolean().describe('the server may see the files granted to runs that call its tools'),
});
export type PluginGrants = z.infer<typeof PluginGrants>;

export const PluginGrantsBody = z
  .object({ network: z.boolean().optional(), files: z.boolean().optional() })
  .strict();
export type PluginGrantsBody = z.infer<typeof PluginGrantsBody>;

/** A setting as the API shows it: secrets never carry their value, only whether one is set. */
export const PluginSettingView = z.object({
  key: z.string(),
  label: z.string(),
  secret: z.boolean(),
  required: z.boolean(),
  set: z.boolean(),
  value: z.string().optional().describe('present for non-secret settings that are set'),
});
export type PluginSettingView = z.infer<typeof PluginSettingView>;

/** Set settings by key (a string), clear them (null); keys not given keep their value. */
export const PluginSettingsBody = z
  .object({
    values: z.record(z.string().max(64), z.string().max(16_384).nullable()),
  })
  .strict();
export type PluginSettingsBody = z.infer<typeof PluginSettingsBody>;

export const PluginToolView = z.object({
  name: z.string(),
  effect: ToolEffect,
  idempotent: z.boolean(),
  requiresApproval: z.boolean(),
  flowNode: z.boolean().describe('a typed palette node is declared for it'),
});

/** What this replica knows of the plugin's server (it is launched on first use or at enable). */
export const PluginServerStatus = z.object({
  state: z.enum(['disabled', 'stopped', 'running', 'failed']),
  error: z.string().optional(),
  missingTools: z
    .array(z.string())
    .describe('tools the manifest names that the running server does not list (left out of the catalog)'),
});
export type PluginServerStatus = z.infer<typeof PluginServerStatus>;

export const Plugin = z.object({
  id: PluginId,
  version: z.string(),
  name: z.string(),
  description: z.string(),
  enabled: z.boolean(),
  /** What the manifest asks for, and what an admin granted (effective only when both). */
  permissions: PluginGrants,
  grants: PluginGrants,
  tools: z.array(PluginToolView),
  flowNodes: z.array(PluginFlowNode),
  settings: z.array(PluginSettingView),
  hooks: z.boolean().describe('the bundle ships hooks/hooks.json (never run until trusted)'),
  server: PluginServerStatus,
  sandbox: PluginSandboxStatus,
  installedAt: z.string(),
  updatedAt: z.string(),
});
export type Plugin = z.infer<typeof Plugin>;

export const PluginList = z.object({ items: z.array(Plugin), sandbox: PluginSandboxStatus });
export type PluginList = z.infer<typeof PluginList>;

export const PluginIdParam = z.object({ id: PluginId });
export type PluginIdParam = z.infer<typeof PluginIdParam>;

export const InstallPluginBody = z
  .object({
    path: z
      .string()
      .min(1)
      .max(4_096)
      .refine((p) => p.startsWith('/'), 'an absolute path on the tool registry host')
      .describe('a bundle folder or a .tgz on the server'),
  })
  .strict();
export type InstallPluginBody = z.infer<typeof InstallPluginBody>;

/** The registry's side of install: an upload is a staged file the registry removes when done. */
export const InstallPluginRequest = InstallPluginBody.extend({ upload: z.boolean().default(false) });

export const DeletedPlugin = z.object({ id: PluginId, version: z.string() });
export type DeletedPlugin = z.infer<typeof DeletedPlugin>;

/** Published (every replica) when a plugin is installed, upgraded, toggled, granted or removed. */
export const PluginChangedEvent = z.object({
  id: PluginId,
  reason: z.enum(['installed', 'enabled', 'disabled', 'grants', 'settings', 'deleted']),
  /** The replica that made the change (it has acted already and ignores its own echo). */
  origin: z.string().max(100),
});
export type PluginChangedEvent = z.infer<typeof PluginChangedEvent>;
export const PLUGIN_CHANGED_SUBJECT = 'events.registry.plugin.changed';

/** An unpacked bundle beyond this (or with more entries) is refused: a small .tgz can unpack huge. */
export const PLUGIN_UNPACKED_LIMIT_BYTES = 200 * 1024 * 1024;
export const PLUGIN_MAX_ENTRIES = 20_000;
/** Tool names no plugin may take: other sources' namespaces. */
export const RESERVED_TOOL_PREFIXES = ['mcp__', 'run_workflow_'] as const;
