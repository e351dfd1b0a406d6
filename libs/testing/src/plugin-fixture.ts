import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

// libs/testing/src from sources (jest), dist/libs/testing/src when compiled (benchmarks).
const ROOT = __dirname.includes(`${sep}dist${sep}`)
  ? (__dirname.split(`${sep}dist${sep}`)[0] as string)
  : join(__dirname, '..', '..', '..');

const SERVER_SOURCE = join(ROOT, 'libs', 'testing', 'fixtures', 'plugin', 'server.ts');
const bundled = new Map<string, Promise<string>>();

/**
 * The fixture server as one self-contained CommonJS file (the MCP SDK and zod inside), bundled once
 * per process by tools/bundle-cjs.js (rolldown): a sandboxed server sees only its bundle.
 */
function fixtureServerCode(cacheDir: string): Promise<string> {
  const known = bundled.get(cacheDir);
  if (known) return known;
  const made = (async () => {
    await mkdir(cacheDir, { recursive: true });
    const out = join(cacheDir, 'fixture-server.cjs');
    await run(process.execPath, [join(ROOT, 'tools', 'bundle-cjs.js'), SERVER_SOURCE, out], {
      cwd: ROOT,
      maxBuffer: 10 * 1024 * 1024,
    });
    return out;
  })();
  bundled.set(cacheDir, made);
  made.catch(() => bundled.delete(cacheDir));
  return made;
}

/** The fixture manifest: three tools, a flow node with nested outputs and examples, a setting. */
export function fixtureManifest(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'fixture-plugin',
    version: '1.0.0',
    name: 'Fixture plugin',
    description: 'Probes the sandbox from the inside',
    server: { command: 'node', args: ['${root}/server.cjs'] },
    tools: {
      fixture_echo: { effect: 'read', idempotent: true },
      fixture_read_file: { effect: 'read', idempotent: true },
      fixture_write_data: { effect: 'write' },
      fixture_connect: { effect: 'external', requiresApproval: true },
      fixture_missing: { effect: 'read' },
    },
    flowNodes: [
      {
        tool: 'fixture_echo',
        label: 'Echo',
        help: 'Gives its text back.',
        outputs: {
          type: 'object',
          properties: {
            text: { type: 'string' },
            meta: { type: 'object', properties: { n: { type: 'number' } } },
          },
        },
        examples: [{ text: 'hi', meta: { n: 1 } }],
      },
    ],
    settings: [
      { key: 'region', label: 'Region' },
      { key: 'apiKey', label: 'API key', secret: true },
    ],
    permissions: { network: true },
    ...over,
  };
}

/** Writes a fixture bundle folder at `dir` (server + manifest, `manifest` overriding fields). */
export async function buildFixturePlugin(
  dir: string,
  cacheDir: string,
  manifest: Record<string, unknown> = fixtureManifest(),
): Promise<string> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'server.cjs'), await readFile(await fixtureServerCode(cacheDir)));
  await writeFile(join(dir, 'switchyard-plugin.json'), JSON.stringify(manifest, null, 2));
  return dir;
}
