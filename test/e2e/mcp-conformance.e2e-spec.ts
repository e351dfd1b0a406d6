import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { conformanceSuite, Platform, type ConformanceSuite } from '@switchyard/testing';

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, server mode) against
 * the running /mcp. Each scenario applicable to a tools-and-resources server must pass: no check
 * failed and at least one succeeded. The others, and why, are in SKIPPED below (and in
 * docs/mcp-server.md).
 */
const APPLICABLE = [
  'server-initialize',
  'ping',
  'tools-list',
  'resources-list',
  'server-sse-multiple-streams',
] as const;

const FIXTURE = "calls a fixture of the suite's reference server";
/** Every other scenario of the suite, and why it does not apply to Switchyard's /mcp. */
const SKIPPED: Record<string, string> = {
  'logging-set-level': 'the server sends no log messages, so it does not declare the logging capability',
  'completion-complete': 'no prompts or completable arguments, so no completions capability',
  'tools-call-simple-text': `${FIXTURE} (tool test_simple_text); calling our tools is covered by mcp-server.e2e-spec`,
  'tools-call-image': `${FIXTURE} (tool test_image_content)`,
  'tools-call-audio': `${FIXTURE} (tool test_audio_content)`,
  'tools-call-embedded-resource': `${FIXTURE} (tool test_embedded_resource)`,
  'tools-call-mixed-content': `${FIXTURE} (tool test_multiple_content_types)`,
  'tools-call-with-logging': `${FIXTURE} (tool test_tool_with_logging); no logging capability`,
  'tools-call-error': `${FIXTURE} (tool test_error_handling); our error results are covered by mcp-server.e2e-spec`,
  'tools-call-with-progress': `${FIXTURE} (tool test_tool_with_progress); our progress is covered by mcp-server.e2e-spec`,
  'tools-call-sampling': `${FIXTURE} (tool test_sampling); the server never asks the client for sampling`,
  'tools-call-elicitation': `${FIXTURE} (tool test_elicitation); runs are unattended, the server never elicits`,
  'json-schema-2020-12': `${FIXTURE} (tool json_schema_2020_12_tool)`,
  'elicitation-sep1034-defaults': 'the server never elicits (runs are unattended)',
  'elicitation-sep1330-enums': 'the server never elicits (runs are unattended)',
  'server-sse-polling': `${FIXTURE} (tool test_reconnection, which closes its stream mid-call)`,
  'resources-read-text': `${FIXTURE} (resource test://static-text); reading runs is covered by mcp-server.e2e-spec`,
  'resources-read-binary': `${FIXTURE} (resource test://static-binary)`,
  'resources-templates-read': `${FIXTURE} (template test://template/{id}/data)`,
  'resources-subscribe': 'no resource subscriptions (resources/list_changed is sent instead)',
  'resources-unsubscribe': 'no resource subscriptions',
  'prompts-list': 'no prompts capability',
  'prompts-get-simple': 'no prompts capability',
  'prompts-get-with-args': 'no prompts capability',
  'prompts-get-embedded-resource': 'no prompts capability',
  'prompts-get-with-image': 'no prompts capability',
  'dns-rebinding-protection':
    'for unauthenticated localhost servers: /mcp needs an API token on every request, which a rebinding page does not have',
};

function run(file: string, args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 180_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

function checksUnder(dir: string): Check[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return checksUnder(path);
    return name === 'checks.json' ? (JSON.parse(readFileSync(path, 'utf8')) as Check[]) : [];
  });
}

describe('the official MCP conformance suite against /mcp', () => {
  let p: Platform;
  let proxy: Server;
  let url: string;
  /** The suite needs Node 22 (fs.globSync); the project runs on Node 20, so npm's Node 22 binary runs it. */
  let suite: ConformanceSuite;
  const out = mkdtempSync(join(tmpdir(), 'sy-mcp-conformance-'));

  beforeAll(async () => {
    suite = await conformanceSuite();
    p = await Platform.start('mcpconf');
    const alice = await p.token('alice');
    const wf = await p.call('POST', '/api/workflows', alice, {
      name: 'echo',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      plan: { steps: [{ id: 'e', tool: 'wait', arguments: { ms: 0, value: '{{inputs.text}}' } }] },
    });
    expect(
      (await p.call('POST', `/api/workflows/${wf.json['id']}/publish`, alice, { revision: 1 })).status,
    ).toBe(200);
    // The suite's client sends no credentials: this proxy adds the bearer token, nothing else.
    const gateway = new URL(p.url);
    proxy = createServer((req, res) => {
      const up = request(
        {
          host: gateway.hostname,
          port: gateway.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, authorization: `Bearer ${alice}` },
        },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      res.on('close', () => up.destroy());
      req.pipe(up);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const addr = proxy.address();
    url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/mcp`;
  }, 300_000);

  afterAll(async () => {
    await new Promise((resolve) => proxy?.close(resolve));
    await p?.stop();
    rmSync(out, { recursive: true, force: true });
  });

  it("names every server scenario of the suite as applicable or skipped (a new suite's scenarios are noticed)", async () => {
    const r = await run(suite.node, [suite.cli, 'list', '--server']);
    const listed = [...r.out.matchAll(/^\s+- ([a-z0-9-]+) \[/gm)].map((m) => m[1] as string);
    expect(listed.length).toBeGreaterThan(10);
    expect([...listed].sort()).toEqual([...APPLICABLE, ...Object.keys(SKIPPED)].sort());
  });

  it.each(APPLICABLE)(
    'passes %s',
    async (scenario) => {
      const dir = join(out, scenario);
      const r = await run(suite.node, [suite.cli, 'server', '--url', url, '--scenario', scenario, '-o', dir]);
      const checks = checksUnder(dir);
      const failed = checks.filter((c) => c.status === 'FAILURE');
      expect({ scenario, failed, output: failed.length ? r.out.slice(-3000) : '' }).toEqual({
        scenario,
        failed: [],
        output: '',
      });
      expect(checks.filter((c) => c.status === 'SUCCESS').length).toBeGreaterThan(0);
    },
    240_000,
  );
});
