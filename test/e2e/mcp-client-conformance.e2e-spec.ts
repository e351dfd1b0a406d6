import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { conformanceSuite, Platform, type ConformanceSuite } from '@switchyard/testing';

const ROOT = join(__dirname, '..', '..');
const DRIVER = join(ROOT, 'tools', 'conformance', 'client-driver.mjs');
const EXPECTED = join(ROOT, 'tools', 'conformance', 'expected-failures.yml');

/**
 * The official MCP conformance suite's client scenarios (`@modelcontextprotocol/conformance`,
 * `client` mode) with Switchyard as the client: each scenario's server becomes a REMOTE record that
 * connects (OAuth through the gateway's callback), is tested and has its tools called through the
 * platform (tools/conformance/client-driver.mjs). A scenario passes, or is listed with its reason in
 * tools/conformance/expected-failures.yml; the suite fails a listed scenario that passes (stale).
 */
describe('the official MCP conformance suite, client scenarios, against Switchyard’s MCP client', () => {
  let p: Platform;
  let suite: ConformanceSuite;
  let scenarios: string[] = [];
  const out = mkdtempSync(join(tmpdir(), 'sy-mcp-client-conformance-'));

  const run = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ code: number; output: string }>((resolve) => {
      execFile(
        suite.node,
        [suite.cli, ...args],
        { env: { ...process.env, ...env }, maxBuffer: 20 * 1024 * 1024, timeout: 180_000 },
        (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
      );
    });

  beforeAll(async () => {
    suite = await conformanceSuite();
    // The scenario servers listen on loopback, which the address policy refuses by default.
    p = await Platform.start('mcpclientconf', { WEB_FETCH_ALLOW_PRIVATE: 'true' });
    const listed = await run(['list', '--client']);
    scenarios = [...listed.output.matchAll(/^ {2}- (\S+)/gm)].map((m) => m[1] as string);
  }, 300_000);

  afterAll(async () => {
    await p?.stop();
    rmSync(out, { recursive: true, force: true });
  });

  it('lists the scenarios of the pinned suite, OAuth ones among them', () => {
    expect(scenarios).toEqual(expect.arrayContaining(['initialize', 'tools_call', 'auth/metadata-default']));
  });

  it('passes every client scenario, or names it with its reason as an expected failure', async () => {
    const failed: Array<{ scenario: string; output: string }> = [];
    for (const scenario of scenarios) {
      const r = await run(
        [
          'client',
          '--command',
          `${process.execPath} ${DRIVER}`,
          '--scenario',
          scenario,
          '--expected-failures',
          EXPECTED,
          '-o',
          join(out, scenario.replace(/\//g, '_')),
        ],
        { SY_GATEWAY: p.url, SY_TOKEN: p.admin },
      );
      if (r.code !== 0) failed.push({ scenario, output: r.output.slice(-3000) });
    }
    expect(failed).toEqual([]);
  }, 900_000);
});
