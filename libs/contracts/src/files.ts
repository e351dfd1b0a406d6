import { z } from 'zod';
import { PageQuery, pageOf } from './identity';

/**
 * Files: an owner's uploads (`/api/files`) and the file grants of runs. A grant names a file, a set
 * of uploaded files, a workspace path or a fresh shared directory; a step argument carries it as the
 * placeholder `@file:<name>`, bound at dispatch to the path the called tool sees (docs/files.md).
 */

/** Longest stored file name, in UTF-8 bytes (what most file systems allow for one segment). */
export const FILE_NAME_MAX_BYTES = 255;
/** The default upload limit (`FILE_UPLOAD_LIMIT_BYTES`). */
export const DEFAULT_FILE_UPLOAD_LIMIT_BYTES = 25 * 1024 * 1024;
/** Where a plugin's sandbox shows the grants of the run that calls it: `<root>/<grant name>`. */
export const SANDBOX_FILES_ROOT = '/run/switchyard/files';
/** The workspace folder (in the owner's area) that holds each run's grants: `<dir>/<runId>/<grant>`. */
export const RUN_FILES_DIR = '.switchyard/runs';
/** Grants per run, files per `refs` grant. */
export const MAX_FILE_GRANTS = 20;
export const MAX_GRANT_REFS = 20;

/** Grant names are input-like identifiers: `@file:<name>` must end where the name ends. */
export const GrantName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/, 'a letter or "_", then letters, digits, "_" or "-" (at most 64)');

/**
 * A file name as stored: path separators, NUL and control characters become "_", leading dots are
 * dropped (no hidden or `..` names), and it is cut to FILE_NAME_MAX_BYTES on a character boundary.
 * Empty after that: `file`.
 */
export function sanitizeFileName(raw: string): string {
  let name = raw
    .normalize('NFC')
    .replace(/[/\\]/g, '_')
    .replace(/[\u0000-\u001f\u007f]/g, '_')
    .trim()
    .replace(/^\.+/, '');
  const bytes = new TextEncoder();
  while (bytes.encode(name).length > FILE_NAME_MAX_BYTES) name = Array.from(name).slice(0, -1).join('');
  return name === '' ? 'file' : name;
}

export const StoredFile = z.object({
  id: z.string().uuid(),
  name: z.string(),
  contentType: z.string(),
  size: z.number().int().min(0),
  sha256: z.string(),
  createdAt: z.string(),
});
export type StoredFile = z.infer<typeof StoredFile>;

export const FilePage = pageOf(StoredFile);
export type FilePage = z.infer<typeof FilePage>;

export const FileListQuery = PageQuery;
export type FileListQuery = z.infer<typeof FileListQuery>;

export const FileIdParam = z.object({ id: z.string().uuid() });
export type FileIdParam = z.infer<typeof FileIdParam>;

export const UploadQuery = z.object({
  name: z
    .string()
    .min(1)
    .max(1_000)
    .describe('the file name (sanitised: no path separators, no NUL, at most 255 bytes)'),
});
export type UploadQuery = z.infer<typeof UploadQuery>;

/** The gateway hands a staged upload to the registry, which owns the files. */
export const AdoptUpload = z.object({
  stagedId: z.string().uuid(),
  name: z.string().min(1).max(1_000),
  contentType: z.string().max(255),
  size: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type AdoptUpload = z.infer<typeof AdoptUpload>;

// ---- run file grants --------------------------------------------------------------------------

const Refs = z.object({
  name: GrantName,
  refs: z.array(z.string().uuid()).min(1).max(MAX_GRANT_REFS).describe('ids of your uploaded files'),
});
const NativePath = z.object({
  name: GrantName,
  nativePath: z.string().min(1).max(4_096).describe('a file or folder in your workspace'),
  writable: z.boolean().default(false).describe('eligible plugins may write there (default: read-only)'),
});
const SharedDirectory = z.object({
  name: GrantName,
  createSharedDirectory: z.literal(true).describe('a fresh empty directory for this run, writable'),
});

/** One grant as a start body gives it. */
export const FileGrantRequest = z.union([Refs.strict(), NativePath.strict(), SharedDirectory.strict()]);
export type FileGrantRequest = z.infer<typeof FileGrantRequest>;

export const FileGrantKind = z.enum(['refs', 'native', 'shared']);
export type FileGrantKind = z.infer<typeof FileGrantKind>;

export function grantKindOf(g: FileGrantRequest): FileGrantKind {
  return 'refs' in g ? 'refs' : 'nativePath' in g ? 'native' : 'shared';
}

/** Legacy workspace-relative paths (shown to the planner, bound as `inputs.files`). */
export const LegacyRunFiles = z.array(z.string().min(1).max(1_000)).max(50);

/**
 * `files` of a start body: the old list of workspace paths, or grants. Grant names are unique.
 * An empty list is the old form (nothing granted).
 */
export const RunFilesInput = z.union([
  LegacyRunFiles,
  z
    .array(FileGrantRequest)
    .min(1)
    .max(MAX_FILE_GRANTS)
    .superRefine((grants, ctx) => {
      const seen = new Set<string>();
      grants.forEach((g, i) => {
        if (seen.has(g.name))
          ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `grant "${g.name}" is named twice` });
        seen.add(g.name);
      });
    }),
]);
export type RunFilesInput = z.infer<typeof RunFilesInput>;

export function isGrantList(files: RunFilesInput | undefined): files is FileGrantRequest[] {
  return Array.isArray(files) && files.length > 0 && typeof files[0] === 'object';
}

/** A grant once materialised for a run (registry → executor; kept on the run row). */
export const ResolvedGrant = z.object({
  name: GrantName,
  kind: FileGrantKind,
  /** The request it came from (fork and rewind materialise it again). */
  request: FileGrantRequest,
  /** On the registry's host: `<area>/.switchyard/runs/<runId>/<name>`, or the native path's real path. */
  hostPath: z.string(),
  /** The same place as built-in tools see it (under WORKSPACE_DIR). */
  viewPath: z.string(),
  /** Files in a `refs` grant (sanitised names), in order; a single one is what `@file:<name>` means. */
  files: z.array(z.string()),
  /** A directory (shared, several refs, a native folder) or one file. */
  directory: z.boolean(),
  writable: z.boolean(),
});
export type ResolvedGrant = z.infer<typeof ResolvedGrant>;

export const GrantFilesRequest = z.object({
  runId: z.string().uuid(),
  grants: z.array(FileGrantRequest).max(MAX_FILE_GRANTS),
  /** Fork and rewind: copy what the source run's grants hold (a shared directory's files too). */
  copyFrom: z.string().uuid().optional(),
});
export type GrantFilesRequest = z.infer<typeof GrantFilesRequest>;

export const GrantFilesResult = z.object({ grants: z.array(ResolvedGrant) });
export type GrantFilesResult = z.infer<typeof GrantFilesResult>;

/** What a run's detail shows of a grant; `hostPath` to admins only. */
export const RunFileGrantView = z.object({
  name: z.string(),
  kind: FileGrantKind,
  files: z.array(z.string()),
  directory: z.boolean(),
  writable: z.boolean(),
  hostPath: z.string().optional().describe('admins only'),
});
export type RunFileGrantView = z.infer<typeof RunFileGrantView>;

export function grantView(g: ResolvedGrant, admin: boolean): RunFileGrantView {
  return {
    name: g.name,
    kind: g.kind,
    files: g.files,
    directory: g.directory,
    writable: g.writable,
    ...(admin ? { hostPath: g.hostPath } : {}),
  };
}

/**
 * A grant as a plugin invocation carries it (set by the executor only): where it is on the host,
 * where the plugin's sandbox shows it. The registry re-checks `hostPath` against the run's grants.
 */
export const InvocationFile = z.object({
  name: GrantName,
  hostPath: z.string().min(1).max(4_096),
  sandboxPath: z.string().min(1).max(4_096),
  writable: z.boolean(),
});
export type InvocationFile = z.infer<typeof InvocationFile>;

/** How a tool sees a run's grants: built-ins in the workspace, plugins in their sandbox or (fallback) on the host. */
export type FileAccess = 'workspace' | 'sandbox' | 'host';

/** Where an eligible plugin's sandbox mounts a grant: `<SANDBOX_FILES_ROOT>/<name>`. */
export function sandboxMountOf(g: Pick<ResolvedGrant, 'name'>): string {
  return `${SANDBOX_FILES_ROOT}/${g.name}`;
}

/**
 * What `@file:<name>` becomes for a tool with this access: the grant's directory (or native file),
 * or, for a grant of one uploaded file, that file inside it.
 */
export function boundPathOf(g: ResolvedGrant, access: FileAccess): string {
  const base = access === 'workspace' ? g.viewPath : access === 'host' ? g.hostPath : sandboxMountOf(g);
  return g.kind === 'refs' && g.files.length === 1 ? `${base}/${g.files[0]}` : base;
}

/** `x-switchyard-enum` of an input: a list tool feeding a dropdown. */
export const InputEnumSource = z.object({
  tool: z.string().min(1).max(300),
  valueField: z.string().max(100).optional(),
  labelField: z.string().max(100).optional(),
  arguments: z.record(z.string(), z.unknown()).optional(),
});
export type InputEnumSource = z.infer<typeof InputEnumSource>;

export const InputOptionsParam = z.object({
  id: z.string().uuid(),
  input: z.string().regex(/^[A-Za-z_][A-Za-z0-9_-]*$/),
});
export type InputOptionsParam = z.infer<typeof InputOptionsParam>;

export const InputOptionsQuery = z
  .object({
    version: z.coerce
      .number()
      .int()
      .min(1)
      .optional()
      .describe('the published version whose input schema names the list tool; default: the draft'),
  })
  .strict();
export type InputOptionsQuery = z.infer<typeof InputOptionsQuery>;

/** What the executor is asked for a dropdown's choices: the input, and which version's schema. */
export const InputOptionsRequest = InputOptionsParam.extend(InputOptionsQuery.shape);
export type InputOptionsRequest = z.infer<typeof InputOptionsRequest>;

export const InputOptions = z.object({
  items: z.array(z.object({ value: z.unknown(), label: z.string() })),
});
export type InputOptions = z.infer<typeof InputOptions>;
