import { mkdtemp, lstat, open, readdir, readFile, realpath, rm, stat } from 'node:fs/promises';
import { isAbsolute, join, posix, relative, resolve, sep } from 'node:path';
import * as tar from 'tar';
import {
  AppError,
  describeIssues,
  PLUGIN_MANIFEST_FILE,
  PLUGIN_MAX_ENTRIES,
  PLUGIN_UNPACKED_LIMIT_BYTES,
  PLUGIN_UPLOAD_LIMIT_BYTES,
  PluginManifest,
  RESERVED_TOOL_PREFIXES,
  toFieldIssues,
  type FieldIssue,
} from '@switchyard/contracts';

/** A bundle read and validated, not installed yet. */
export interface LoadedBundle {
  /** The bundle's root: the given folder, or where the .tgz was unpacked. */
  readonly root: string;
  /** The root is a scratch copy of ours (an unpacked .tgz) that may be moved into place. */
  readonly scratch: boolean;
  readonly manifest: PluginManifest;
  /** Removes the scratch copy, if any. Safe to call twice. */
  cleanup(): Promise<void>;
}

export interface BundleLimits {
  readonly archiveBytes: number;
  readonly unpackedBytes: number;
  readonly entries: number;
}

export const DEFAULT_LIMITS: BundleLimits = {
  archiveBytes: PLUGIN_UPLOAD_LIMIT_BYTES,
  unpackedBytes: PLUGIN_UNPACKED_LIMIT_BYTES,
  entries: PLUGIN_MAX_ENTRIES,
};

function refuse(what: string, issues: FieldIssue[]): never {
  throw new AppError('validation_failed', `${what}: ${describeIssues(issues)}`, { issues });
}

function tooLarge(message: string): never {
  throw new AppError('payload_too_large', message);
}

async function isGzip(path: string): Promise<boolean> {
  const fh = await open(path, 'r');
  try {
    const head = Buffer.alloc(2);
    await fh.read(head, 0, 2, 0);
    return head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    await fh.close();
  }
}

/** `path` lies inside `root` (or is it). */
function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * Checks a .tgz before a byte is written: every entry a plain file, folder or link whose path (and
 * a link's target) stays inside the bundle, within the size and entry limits.
 */
async function vetArchive(file: string, limits: BundleLimits): Promise<void> {
  const issues: FieldIssue[] = [];
  let bytes = 0;
  let entries = 0;
  const base = '/bundle';
  try {
    await tar.t({
      file,
      strict: true,
      onReadEntry: (entry) => {
        entries += 1;
        bytes += entry.size ?? 0;
        const path = entry.path;
        const at = posix.resolve(base, path);
        if (posix.isAbsolute(path) || path.split('/').includes('..') || !inside(base, at)) {
          issues.push({ path, message: 'leaves the bundle (absolute path or "..")' });
        } else if (entry.type === 'SymbolicLink' || entry.type === 'Link') {
          const target =
            entry.type === 'SymbolicLink'
              ? posix.resolve(posix.dirname(at), entry.linkpath ?? '')
              : posix.resolve(base, entry.linkpath ?? '');
          if (!inside(base, target) || target === base)
            issues.push({ path, message: `links outside the bundle (${entry.linkpath ?? ''})` });
        } else if (!['File', 'OldFile', 'ContiguousFile', 'Directory'].includes(entry.type)) {
          issues.push({ path, message: `${entry.type} entries are not allowed in a bundle` });
        }
        entry.resume();
      },
    });
  } catch (err) {
    refuse('not a readable .tgz bundle', [{ path: '', message: (err as Error).message }]);
  }
  if (entries > limits.entries)
    tooLarge(`the bundle has ${entries} entries; at most ${limits.entries} are accepted`);
  if (bytes > limits.unpackedBytes)
    tooLarge(`the bundle unpacks to ${bytes} bytes; at most ${limits.unpackedBytes} are accepted`);
  if (issues.length) refuse('unsafe bundle archive', issues.slice(0, 20));
}

/**
 * Walks an unpacked or given bundle folder: links must resolve to files inside it (no linked
 * folders: a copy could loop), no special files, within the limits.
 */
async function vetFolder(root: string, limits: BundleLimits): Promise<void> {
  const issues: FieldIssue[] = [];
  let bytes = 0;
  let entries = 0;
  const walk = async (dir: string): Promise<void> => {
    for (const name of await readdir(dir)) {
      const path = join(dir, name);
      const rel = relative(root, path);
      entries += 1;
      if (entries > limits.entries)
        tooLarge(
          `the bundle has more than ${limits.entries} entries; at most ${limits.entries} are accepted`,
        );
      const st = await lstat(path);
      if (st.isSymbolicLink()) {
        const target = await realpath(path).catch(() => undefined);
        if (!target || !inside(root, target)) {
          issues.push({ path: rel, message: 'links outside the bundle' });
          continue;
        }
        if (!(await stat(target)).isFile()) issues.push({ path: rel, message: 'links to a folder' });
      } else if (st.isDirectory()) {
        await walk(path);
      } else if (st.isFile()) {
        bytes += st.size;
        if (bytes > limits.unpackedBytes) tooLarge(`the bundle is larger than ${limits.unpackedBytes} bytes`);
      } else {
        issues.push({ path: rel, message: 'special files are not allowed in a bundle' });
      }
    }
  };
  await walk(root);
  if (issues.length) refuse('unsafe bundle', issues.slice(0, 20));
}

/** Checks beyond the schema: flow nodes name the manifest's tools, names stay out of other namespaces. */
export function manifestIssues(m: PluginManifest): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const name of Object.keys(m.tools)) {
    const reserved = RESERVED_TOOL_PREFIXES.find((p) => name.startsWith(p));
    if (reserved)
      issues.push({ path: `tools.${name}`, message: `names starting with ${reserved} are reserved` });
  }
  const seen = new Set<string>();
  m.flowNodes.forEach((node, i) => {
    if (!(node.tool in m.tools))
      issues.push({
        path: `flowNodes.${i}.tool`,
        message: `${node.tool} is not one of the manifest's tools`,
      });
    else if (seen.has(node.tool))
      issues.push({ path: `flowNodes.${i}.tool`, message: `${node.tool} already has a flow node` });
    seen.add(node.tool);
  });
  const keys = new Set<string>();
  m.settings.forEach((s, i) => {
    if (keys.has(s.key)) issues.push({ path: `settings.${i}.key`, message: `${s.key} is declared twice` });
    keys.add(s.key);
  });
  const command = m.server.command;
  if (command.startsWith('${root}/')) {
    const rest = command.slice('${root}/'.length);
    if (rest.split('/').includes('..') || posix.isAbsolute(rest))
      issues.push({ path: 'server.command', message: 'must stay inside the bundle' });
  }
  return issues;
}

/** Reads and validates the manifest of the bundle at `root`; every problem reported by its path. */
export async function readManifest(root: string): Promise<PluginManifest> {
  let text: string;
  try {
    text = await readFile(join(root, PLUGIN_MANIFEST_FILE), 'utf8');
  } catch {
    refuse(`invalid plugin bundle`, [
      { path: PLUGIN_MANIFEST_FILE, message: "missing at the bundle's root" },
    ]);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    refuse(`invalid ${PLUGIN_MANIFEST_FILE}`, [{ path: '', message: `not JSON: ${(err as Error).message}` }]);
  }
  const parsed = PluginManifest.safeParse(raw);
  if (!parsed.success) refuse(`invalid ${PLUGIN_MANIFEST_FILE}`, toFieldIssues(parsed.error));
  const more = manifestIssues(parsed.data);
  if (more.length) refuse(`invalid ${PLUGIN_MANIFEST_FILE}`, more);
  return parsed.data;
}

/**
 * Loads a bundle from a folder or a .tgz (unpacked into a fresh folder under `scratchDir` after the
 * archive passed vetArchive). Whatever fails, nothing is left behind.
 */
export async function loadBundle(
  source: string,
  scratchDir: string,
  limits: BundleLimits = DEFAULT_LIMITS,
): Promise<LoadedBundle> {
  const st = await stat(source).catch(() => undefined);
  if (!st) throw new AppError('not_found', `no bundle at ${source}`);
  if (st.isDirectory()) {
    const root = await realpath(source);
    await vetFolder(root, limits);
    const manifest = await readManifest(root);
    return { root, scratch: false, manifest, cleanup: async () => undefined };
  }
  if (!st.isFile()) refuse('invalid plugin bundle', [{ path: '', message: 'neither a folder nor a .tgz' }]);
  if (st.size > limits.archiveBytes)
    tooLarge(`the bundle is ${st.size} bytes; at most ${limits.archiveBytes} are accepted`);
  if (!(await isGzip(source)))
    refuse('invalid plugin bundle', [{ path: '', message: 'not a gzip-compressed tar archive (.tgz)' }]);
  await vetArchive(source, limits);
  const dest = await mkdtemp(join(scratchDir, 'unpack-'));
  const cleanup = () => rm(dest, { recursive: true, force: true });
  try {
    await tar.x({ file: source, cwd: dest, strict: true, preservePaths: false, preserveOwner: false });
    await vetFolder(dest, limits);
    // `npm pack` and `tar czf x.tgz folder/` put everything under one folder: accept that too.
    let root = dest;
    const top = await readdir(dest);
    if (
      top.length === 1 &&
      !(await stat(join(dest, PLUGIN_MANIFEST_FILE)).catch(() => undefined)) &&
      (await stat(join(dest, top[0] as string))).isDirectory()
    )
      root = join(dest, top[0] as string);
    const manifest = await readManifest(root);
    return { root: resolve(root), scratch: true, manifest, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
