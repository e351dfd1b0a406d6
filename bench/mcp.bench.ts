import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createScratchDatabase } from '@switchyard/server-db';
import { api, openStream, Stack } from '@switchyard/testing';

/*
 * npm run bench -- mcp
 * The same one-step published workflow (`wait` ms=0), called the two ways a client can, each to its
 * result:
 *   rest: POST /api/workflows/{id}/run (the published version, no plan gate) → runId, then the run's
 *         SSE stream until `complete` (what a REST client does to get the result);
 *   mcp:  tools/call run_workflow_<id> through /mcp with the SDK's Streamable HTTP client, in one
 *         session (the answer is the result).
 * Gateway, planner, executor and tool-registry as separate processes. Sequential calls, alternating
 * rounds; p50/p99, the p50 ratio and the added milliseconds. Goal: ≤ 1 ms added p50.
 */

const ROUNDS = 6;
const PER_ROUND = 100;
const WARMUP = 60;

function stats(xs: number[]): { p50Ms: number; p99Ms: number } {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) =>
    Math.round((s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN) * 1000) / 1000;
  return { p50Ms: at(0.5), p99Ms: at(0.99) };
}

async function sample(call: () => Promise<unknown>, n: number, into: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await call();
    into.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

export async function runMcpBench(outDir: string): Promise<Record<string, unknown>> {
  const db = await createScratchDatabase('postgresql://postgres@127.0.0.1:5432/postgres', { label: 'bench' });
  const admin = `bench_${randomBytes(24).toString('base64url')}`;
  const stack = await Stack.start(
    {
      DATABASE_URL: db.url,
      NATS_SUBJECT_PREFIX: `bmcp${randomBytes(3).toString('hex')}.`,
      SWITCHYARD_ADMIN_TOKEN: admin,
      LOG_LEVEL: 'warn',
    },
    ['gateway', 'planner', 'executor', 'tool-registry'],
  );
  let client: Client | undefined;
  try {
    const base = stack.gatewayUrl;
    const token = (
      await api(base, 'POST', '/api/tokens', { token: admin, body: { owner: 'bench', role: 'user' } })
    ).json['token'] as string;
    const wf = await api(base, 'POST', '/api/workflows', {
      token,
      body: {
        name: 'bench',
        inputSchema: { type: 'object', properties: { tag: { type: 'string' } } },
        plan: { steps: [{ id: 'w', tool: 'wait', arguments: { ms: 0, value: '{{inputs.tag}}' } }] },
      },
    });
    const id = wf.json['id'] as string;
    await api(base, 'POST', `/api/workflows/${id}/publish`, { token, body: { revision: 1 } });

    const viaRest = async () => {
      const started = await api(base, 'POST', `/api/workflows/${id}/run`, {
        token,
        body: { inputs: { tag: 'bench' }, planApproval: false, version: 1 },
      });
      if (started.status !== 200) throw new Error(`run answered ${started.status}: ${started.text}`);
      const s = await openStream(`${base}/api/agent/stream?runId=${started.json['runId'] as string}`, {
        'x-switchyard-token': token,
      });
      if (s.res.status !== 200) throw new Error(`the run stream answered ${s.res.status}`);
      await s.next('complete', 60_000).catch((err: Error) => {
        throw new Error(`${err.message} (frames: ${s.frames.map((f) => f.data.type).join(', ')})`);
      });
      s.close();
    };
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', base), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    client = new Client({ name: 'bench', version: '1' });
    await client.connect(transport);
    const mcp = client;
    const viaMcp = async () => {
      const r = await mcp.callTool({ name: `run_workflow_${id}`, arguments: { tag: 'bench' } });
      if (r.isError) throw new Error(`tool call failed: ${JSON.stringify(r.content)}`);
    };

    await sample(viaRest, WARMUP, []);
    await sample(viaMcp, WARMUP, []);
    const rest: number[] = [];
    const mcpMs: number[] = [];
    const rounds: Array<{ mcpP50Ms: number; restP50Ms: number; addedMs: number }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const m: number[] = [];
      const r: number[] = [];
      if (round % 2 === 0) {
        await sample(viaMcp, PER_ROUND, m);
        await sample(viaRest, PER_ROUND, r);
      } else {
        await sample(viaRest, PER_ROUND, r);
        await sample(viaMcp, PER_ROUND, m);
      }
      mcpMs.push(...m);
      rest.push(...r);
      const [mp, rp] = [stats(m).p50Ms, stats(r).p50Ms];
      rounds.push({ mcpP50Ms: mp, restP50Ms: rp, addedMs: r3(mp - rp) });
    }
    const a = stats(mcpMs);
    const b = stats(rest);
    const added = r3(a.p50Ms - b.p50Ms);
    const perRound = rounds.map((x) => x.addedMs).sort((x, y) => x - y);
    const mid = perRound.length / 2;
    const medianRound =
      perRound.length % 2
        ? perRound[Math.floor(mid)]
        : ((perRound[mid - 1] ?? NaN) + (perRound[mid] ?? NaN)) / 2;
    const result = {
      machine: { cpus: cpus().length, model: cpus()[0]?.model, loadavg: loadavg().map(r3) },
      method:
        `one-step published workflow (wait ms=0); ${ROUNDS} alternating rounds of ${PER_ROUND} sequential calls after ${WARMUP} warm-up calls each; ` +
        'rest = POST /api/workflows/{id}/run + the run SSE stream to `complete`; mcp = tools/call run_workflow_<id> over /mcp (SDK client, one session)',
      mcp: a,
      rest: b,
      p50Ratio: r3(a.p50Ms / b.p50Ms),
      p50AddedMs: added,
      // The spread a loaded machine gives: each round's two p50s, taken back to back.
      rounds,
      medianRoundAddedMs: r3(medianRound ?? NaN),
      goal: '≤ 1 ms added p50 through /mcp',
      goalMet: added <= 1,
    };
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'mcp.json'), JSON.stringify(result, null, 2) + '\n');
    return result;
  } finally {
    await client?.close().catch(() => undefined);
    await stack.stop();
    await db.drop();
  }
}
