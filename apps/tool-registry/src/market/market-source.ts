import { open, realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import {
  AppError,
  isRecord,
  MARKET_SOURCE_MAX_BYTES,
  ServerJson,
  type FieldIssue,
  type MarketEntry,
  type ServerJson as ServerJsonT,
} from '@switchyard/contracts';
import { fetchVetted, type AddressPolicy } from '@switchyard/server-runtime';

/** An entry of a source: its server.json as validated. */
export interface SourceEntry {
  readonly server: ServerJsonT;
  readonly raw: Record<string, unknown>;
}

export interface ReadSource {
  readonly entries: SourceEntry[];
  readonly problems: FieldIssue[];
}

function within(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || !(rel.startsWith('..') || isAbsolute(rel));
}

/** A file source's real path, which must lie under MARKET_DIR (symlinks resolved). */
export async function marketFile(dir: string, path: string): Promise<string> {
  const refuse = (why: string) =>
    new AppError('forbidden', `path ${path}: ${why}; file sources must lie under MARKET_DIR (${dir})`, {
      issues: [{ path: 'path', message: why }],
    });
  if (path.includes('\0')) throw refuse('contains a NUL character');
  const root = await realpath(dir).catch(() => undefined);
  if (!root) throw new AppError('conflict', `MARKET_DIR (${dir}) does not exist on the tool registry host`);
  const wanted = resolve(root, path);
  if (!within(root, wanted)) throw refuse('leads outside MARKET_DIR');
  const real = await realpath(wanted).catch(() => undefined);
  if (!real)
    throw new AppError('validation_failed', `path ${path}: no such file under MARKET_DIR`, {
      issues: [{ path: 'path', message: 'no such file' }],
    });
  if (!within(root, real)) throw refuse('leads outside MARKET_DIR through a symlink');
  return real;
}

async function readFileCapped(path: string): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new AppError('tool_failed', 'the source is not a regular file');
    if (st.size > MARKET_SOURCE_MAX_BYTES)
      throw new AppError(
        'tool_failed',
        `the source has ${st.size} bytes; at most ${MARKET_SOURCE_MAX_BYTES} are read`,
      );
    const buf = Buffer.alloc(st.size);
    await handle.read(buf, 0, st.size, 0);
    return buf.toString('utf8');
  } finally {
    await handle.close();
  }
}

/** GETs a source URL: every hop vetted by the address policy (web_fetch's), 2xx only, capped in size. */
export async function fetchSource(url: string, policy: AddressPolicy, timeoutMs: number): Promise<string> {
  const res = await fetchVetted(policy, url, {
    headers: { accept: 'application/json' },
    maxBytes: MARKET_SOURCE_MAX_BYTES,
    overflow: 'refuse',
    timeoutMs,
    userAgent: 'switchyard-market/0.1',
  });
  if (res.status < 200 || res.status >= 300)
    throw new AppError('tool_failed', `${res.url.href} answered HTTP ${res.status}`);
  return res.body.toString('utf8');
}

export { readFileCapped };

/** The official registry marks superseded versions `isLatest: false` in its `_meta`. */
function superseded(item: Record<string, unknown>): boolean {
  const meta = item['_meta'];
  if (!isRecord(meta)) return false;
  const official = meta['io.modelcontextprotocol.registry/official'];
  return isRecord(official) && official['isLatest'] === false;
}

/**
 * The entries of a source document: a registry listing (`{"servers":[{"server":{…}}]}`, or items
 * that are server.json objects themselves) or one server.json. A malformed entry is reported by
 * path and left out; the others are kept.
 */
export function entriesOf(text: string): ReadSource {
  const problems: FieldIssue[] = [];
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { entries: [], problems: [{ path: '', message: 'the source is not valid JSON' }] };
  }
  const items: Array<{ path: string; value: unknown }> = [];
  if (isRecord(doc) && Array.isArray(doc['servers'])) {
    (doc['servers'] as unknown[]).forEach((item, i) => {
      if (isRecord(item) && superseded(item)) return;
      const server = isRecord(item) && isRecord(item['server']) ? item['server'] : item;
      items.push({
        path: isRecord(item) && isRecord(item['server']) ? `servers[${i}].server` : `servers[${i}]`,
        value: server,
      });
    });
  } else if (isRecord(doc) && typeof doc['name'] === 'string') items.push({ path: '', value: doc });
  else
    return {
      entries: [],
      problems: [{ path: '', message: 'neither a registry listing ({"servers": [...]}) nor a server.json' }],
    };
  const entries: SourceEntry[] = [];
  const seen = new Set<string>();
  for (const { path, value } of items) {
    const parsed = ServerJson.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues.slice(0, 5))
        problems.push({
          path: [path, ...issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))]
            .filter(Boolean)
            .join('.')
            .replace(/\.\[/g, '['),
          message: issue.message,
        });
      continue;
    }
    if (seen.has(parsed.data.name)) continue;
    seen.add(parsed.data.name);
    entries.push({ server: parsed.data, raw: value as Record<string, unknown> });
  }
  return { entries, problems };
}

/** npm, pypi and oci packages over stdio become LOCAL records. */
export const IMPORTABLE_PACKAGES = new Set(['npm', 'pypi', 'oci']);

export function kindsOf(server: ServerJsonT): MarketEntry['kinds'] {
  const kinds: MarketEntry['kinds'] = [];
  if (server.packages.some((p) => IMPORTABLE_PACKAGES.has(p.registryType) && p.transport.type === 'stdio'))
    kinds.push('LOCAL');
  if (server.remotes.some((r) => r.type === 'streamable-http')) kinds.push('REMOTE');
  return kinds;
}
