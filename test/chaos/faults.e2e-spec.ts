import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDatabase, type ScratchDatabase } from '@switchyard/server-db';
import {
  api,
  chaosScale,
  checkInvariants,
  openStream,
  OwnPostgres,
  OwnServer,
  replicaByInstance,
  Stack,
  uniquePrefix,
  waitFor,
  type ApiResponse,
  type SseStream,
} from '@switchyard/testing';
import { Client } from 'pg';

type Step = Record<string, unknown>;
const wait = (id: string, ms: number, value: unknown, dependsOn: string[] = []): Step => ({
  id,
  tool: 'wait',
  arguments: { ms, value },
  dependsOn,
});
const noReview = { planApproval: false, permissionMode: 'full-access' };
const TERMINAL = ['completed', 'failed', 'cancelled', 'interrupted'];
/** Longer than any bound here: a step of it ends only by a fault, a cancel or a timeout. */
const FOREVER = 3_000_000;

/**
 * Faults under load, each followed by the invariants checked from Postgres. The platform runs on a
 * NATS, a Redis and (when the server binaries are installed) a PostgreSQL of this suite's own, on
 * ports of their own, so they can be killed and restarted without touching the machine's daemons.
 * `npm test` runs the short form; `npm run chaos` (CHAOS=full) the same faults under more load.
 */
describe('faults under load', () => {
  let nats: OwnServer;
  let redis: OwnServer;
  let postgres: OwnPostgres | undefined;
  let db: ScratchDatabase;
  let stack: Stack;
  let workspace: string;
  let alice: string;
  const admin = `e2e_${randomBytes(24).toString('base64url')}`;
  const streams: SseStream[] = [];
  const started: string[] = [];
  const accepted: string[] = [];

  const call = (method: string, path: string, body?: unknown, g = 0): Promise<ApiResponse> =>
    api(stack.gatewayUrls[g] ?? stack.gatewayUrl, method, path, {
      token: alice,
      ...(body !== undefined ? { body } : {}),
    });
  const start = async (body: Record<string, unknown>, g = 0): Promise<string> => {
    const res = await call('POST', '/api/agent/run', body, g);
    if (res.status !== 200) throw new Error(`start answered ${res.status}: ${res.text}`);
    started.push(res.json['runId'] as string);
    return res.json['runId'] as string;
  };
  const stream = async (runId: string, g = 0, lastEventId?: number): Promise<SseStream> => {
    const s = await openStream(
      `${stack.gatewayUrls[g] ?? stack.gatewayUrl}/api/agent/stream?runId=${runId}`,
      {
        'x-switchyard-token': alice,
        ...(lastEventId !== undefined ? { 'last-event-id': String(lastEventId) } : {}),
      },
    );
    streams.push(s);
    return s;
  };
  const status = async (runId: string) =>
    String((await call('GET', `/api/agent/runs/${runId}`)).json['status']);
  const settled = (runId: string) =>
    waitFor(async () => {
      const s = await status(runId);
      return TERMINAL.includes(s) ? s : undefined;
    }, 120_000);
  const sql = async <R extends Record<string, unknown>>(text: string, params: unknown[] = []) => {
    const pg = new Client({ connectionString: db.url });
    await pg.connect();
    try {
      return (await pg.query(text, params)).rows as R[];
    } finally {
      await pg.end();
    }
  };
  const invariantsHold = async () =>
    expect(await checkInvariants(db.url, { startedRuns: started, acceptedTasks: accepted })).toEqual([]);

  /**
   * Keeps starting short runs until stopped; every 2xx is recorded (the invariants check it has its
   * row), every refusal must carry a code. Answers what it saw.
   */
  const load = (gateway = 0) => {
    let on = true;
    const refusals: Array<{ status: number; code: unknown }> = [];
    const ok: string[] = [];
    const done = (async () => {
      for (let i = 0; on; i++) {
        const res = await call(
          'POST',
          '/api/agent/run',
          { config: noReview, workflow: { steps: [wait('l', 0, i)] } },
          gateway,
        ).catch(() => undefined);
        if (res?.status === 200) {
          ok.push(res.json['runId'] as string);
          started.push(res.json['runId'] as string);
        } else if (res) refusals.push({ status: res.status, code: res.json['code'] });
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    return {
      /** Resolves once `n` starts were answered 2xx since now: load went on through the fault. */
      async answered(n: number) {
        const from = ok.length;
        await waitFor(() => ok.length >= from + n);
      },
      async stop() {
        on = false;
        await done;
        // A refusal says why with a code; a failure is never a 2xx.
        for (const r of refusals) expect(typeof r.code).toBe('string');
        return { ok, refusals };
      },
    };
  };

  beforeAll(async () => {
    [nats, redis, postgres] = await Promise.all([OwnServer.nats(), OwnServer.redis(), OwnPostgres.start()]);
    db = await createScratchDatabase(postgres?.url ?? 'postgresql://postgres@127.0.0.1:5432/postgres', {
      label: 'chaos',
    });
    workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sy-chaos-')));
    stack = await Stack.start(
      {
        DATABASE_URL: db.url,
        NATS_URL: nats.url,
        REDIS_URL: redis.url,
        NATS_SUBJECT_PREFIX: uniquePrefix('chaos'),
        SWITCHYARD_ADMIN_TOKEN: admin,
        LOG_LEVEL: 'warn',
        SHUTDOWN_GRACE_MS: '3000',
        WORKSPACE_DIR: workspace,
        RUN_LEASE_MS: '5000',
        RUN_SWEEP_MS: '300',
        COMMAND_ALLOWLIST: 'sleep',
        // Steps that must outlast a fault wait an hour; a test that wants a timeout sets its own.
        TOOL_TIMEOUT_MS: '3600000',
      },
      ['gateway', 'planner', 'executor', 'tool-registry', 'scheduler'],
      { gateway: 2, executor: 2, 'tool-registry': 2, scheduler: 2 },
    );
    const res = await api(stack.gatewayUrl, 'POST', '/api/tokens', {
      token: admin,
      body: { owner: 'alice', role: 'user' },
    });
    alice = res.json['token'] as string;
    // Eight service processes and three servers of its own: minutes on a busy machine.
  }, 360_000);

  afterEach(() => streams.splice(0).forEach((s) => s.close()));

  afterAll(async () => {
    await stack?.stop();
    await db?.drop().catch(() => undefined);
    await Promise.all([nats?.stop(), redis?.stop(), postgres?.destroy()]);
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('SIGKILL of an executor replica mid-step: its runs become interrupted and resume on the other replica without re-running completed steps', async () => {
    const held = await Promise.all(
      Array.from({ length: chaosScale(4, 20) }, () =>
        start({
          config: noReview,
          workflow: {
            steps: [
              wait('done', 0, 'kept'),
              wait('slow', FOREVER, 'x', ['done']),
              wait('tail', 0, '{{node.done.result}}', ['slow']),
            ],
          },
        }),
      ),
    );
    // Every run is inside its slow step, each held by a replica.
    const owners = await waitFor(async () => {
      const rows = await sql<{ id: string; owner_replica: string | null; slow: boolean }>(
        `SELECT r.id, r.owner_replica, EXISTS (SELECT 1 FROM run_event e WHERE e.run_id = r.id
            AND e.type = 'step_start' AND e.data->>'stepId' = 'slow') AS slow
           FROM run r WHERE r.id = ANY($1::uuid[])`,
        [held],
      );
      return rows.length === held.length && rows.every((r) => r.slow && r.owner_replica) ? rows : undefined;
    });
    const byReplica = new Map<string, string[]>();
    for (const r of owners)
      byReplica.set(r.owner_replica as string, [...(byReplica.get(r.owner_replica as string) ?? []), r.id]);
    const [victimId, victimRuns] = [...byReplica.entries()].sort((a, b) => b[1].length - a[1].length)[0] as [
      string,
      string[],
    ];
    const victim = replicaByInstance(stack, victimId);
    expect(victim?.name).toBe('executor');
    const survivors = held.filter((id) => !victimRuns.includes(id));

    const driver = load();
    await stack.stopService(victim?.id as 'executor', 'SIGKILL');
    // Within the lease (5 s) and a sweep on a quiet machine; the bound only guards a hang, and says
    // what the rows still hold if one comes (a CI run beside two CPU burners missed 60 s here).
    await waitFor(
      async () => {
        const rows = await sql<{
          status: string;
          owner_replica: string | null;
          lease_left_ms: number | null;
        }>(
          `SELECT status, owner_replica,
                  (EXTRACT(EPOCH FROM lease_until - now()) * 1000)::int AS lease_left_ms
             FROM run WHERE id = ANY($1::uuid[])`,
          [victimRuns],
        );
        if (rows.length === victimRuns.length && rows.every((r) => r.status === 'interrupted')) return true;
        throw new Error(`not all interrupted yet: ${JSON.stringify(rows)}`);
      },
      150_000,
      200,
    );
    await driver.answered(3);
    const seen = await driver.stop();
    // Runs on the other replica were not touched; the load's runs all ended.
    for (const id of survivors) expect(await status(id)).toBe('running');
    for (const id of seen.ok) expect(TERMINAL).toContain(await settled(id));

    // Resume each on the surviving replica; the slow step is shortened at the review gate.
    for (const id of victimRuns) {
      const s = await stream(id);
      const interrupted = await s.next('interrupted');
      expect(String(interrupted.data.data.message)).toContain('lease');
      expect((await call('POST', `/api/agent/runs/${id}/resume`)).status).toBe(200);
      const after = await stream(id, 0, interrupted.id);
      expect((await after.next('plan_approval_requested')).data.data.reusedSteps).toEqual(['done']);
      const edited = await call('POST', `/api/agent/${id}/approve`, {
        steps: [
          wait('done', 0, 'kept'),
          wait('slow', 0, 'x', ['done']),
          wait('tail', 0, '{{node.done.result}}', ['slow']),
        ],
      });
      expect(edited.status).toBe(200);
      expect((await after.next('complete')).data.data.result).toBe('kept');
    }
    const doneStarts = await sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM run_event WHERE run_id = ANY($1::uuid[]) AND type = 'step_start' AND data->>'stepId' = 'done'`,
      [victimRuns],
    );
    expect(doneStarts[0]?.n).toBe(victimRuns.length); // once per run: never re-run
    for (const id of survivors) expect((await call('POST', `/api/agent/${id}/cancel`)).status).toBe(200);
    for (const id of survivors) expect(await settled(id)).toBe('cancelled');
    await stack.startService('executor');
    await invariantsHold();
  });

  it('SIGKILL of a tool-registry replica mid-call: its calls fail with a clear code, the others go on, nothing hangs', async () => {
    // `sleep 3000 0.<seed><i>`: GNU sleep adds its arguments, and the second one names the call in ps.
    const seed = String(100_000 + Math.floor(Math.random() * 899_999));
    const tokenOf = (i: number) => `0.${seed}${String(i).padStart(3, '0')}`;
    const runs = await Promise.all(
      Array.from({ length: chaosScale(6, 16) }, (_, i) =>
        start({
          // The step's own timeout ends the calls that are not lost: a bound that only guards a hang.
          config: { ...noReview, limits: { stepTimeoutMs: 20_000 } },
          workflow: {
            steps: [
              {
                id: 'cmd',
                tool: 'execute_command',
                arguments: { command: `sleep 3000 ${tokenOf(i)}` },
              },
            ],
          },
        }),
      ),
    );
    // Which replica runs which call: the command's process descends from it.
    const registries = stack.replicas('tool-registry');
    const holders = await waitFor(() => {
      const ps = execFileSync('ps', ['-eo', 'pid=,ppid=,args=']).toString().trim().split('\n');
      const parent = new Map(
        ps.map((l) => l.trim().split(/\s+/, 3)).map(([p, pp]) => [Number(p), Number(pp)]),
      );
      const holder = (i: number) => {
        const line = ps.find((l) => l.trimEnd().endsWith(` ${tokenOf(i)}`));
        let pid = line ? Number(line.trim().split(/\s+/)[0]) : 1;
        while (pid > 1 && !registries.some((r) => r.child.pid === pid)) pid = parent.get(pid) ?? 1;
        return registries.find((r) => r.child.pid === pid)?.id;
      };
      const found = runs.map((_, i) => holder(i));
      return found.every((h) => h !== undefined) ? found : undefined;
    });
    const victim = holders.find((h) => h !== undefined) as 'tool-registry';
    await stack.stopService(victim, 'SIGKILL');
    const ends = await Promise.all(runs.map((id) => settled(id)));
    expect(ends).toEqual(runs.map(() => 'failed'));
    const codes = await sql<{ code: string }>(
      `SELECT data->>'code' AS code FROM run_event WHERE run_id = ANY($1::uuid[]) AND type = 'step_failed'`,
      [runs],
    );
    expect(codes).toHaveLength(runs.length);
    const codeOf = async (runId: string) =>
      (
        await sql<{ code: string }>(
          `SELECT data->>'code' AS code FROM run_event WHERE run_id = $1::uuid AND type = 'step_failed'`,
          [runId],
        )
      )[0]?.code;
    // A lost call is `unavailable` (nobody answered); a call on the live replica ended at its timeout.
    for (const [i, id] of runs.entries())
      if (holders[i] === victim) expect(await codeOf(id)).toBe('unavailable');
      else expect(await codeOf(id)).not.toBe('unavailable');
    // Every command is gone: the victim's with their sandboxes (--die-with-parent), the others' at
    // their timeout. The bound guards a hang; a failure names what is still running.
    await waitFor(() => {
      const ps = execFileSync('ps', ['-eo', 'pid=,ppid=,stat=,args=']).toString().split('\n');
      const left = ps.filter((l) => l.includes(` 0.${seed}`));
      if (left.length) throw new Error(`still running: ${left.map((l) => l.trim()).join(' | ')}`);
      return true;
    }, 150_000);
    await stack.startService('tool-registry');
    await invariantsHold();
  });

  it('SIGKILL of a gateway replica with SSE clients attached: each resumes on the other gateway with Last-Event-ID, no gap, no duplicate', async () => {
    const steps = Array.from({ length: 8 }, (_, i) => wait(`s${i}`, 250, i, i ? [`s${i - 1}`] : []));
    const runs = await Promise.all(
      Array.from({ length: chaosScale(4, 30) }, () => start({ config: noReview, workflow: { steps } }, 1)),
    );
    const first = await Promise.all(runs.map((id) => stream(id, 1)));
    await Promise.all(first.map((s) => s.next('step_complete')));
    const doomed = stack.replicas('gateway')[1];
    await stack.stopService(doomed?.id as 'gateway', 'SIGKILL');
    for (const [i, id] of runs.entries()) {
      const before = first[i] as SseStream;
      const last = before.frames.at(-1)?.id ?? 0;
      const after = await stream(id, 0, last);
      await after.next('complete');
      const ids = [...before.frames, ...after.frames].map((f) => f.id);
      expect(ids).toEqual(Array.from({ length: ids.length }, (_, k) => k + 1));
    }
    await stack.startService('gateway');
    await invariantsHold();
  });

  it('restarting NATS mid-load: services reconnect, no accepted run is lost, open streams end complete', async () => {
    const runs = await Promise.all(
      Array.from({ length: chaosScale(3, 20) }, () =>
        start({
          // A reply lost with the connection fails its step at the step timeout: a bound on a hang.
          config: { ...noReview, limits: { stepTimeoutMs: 10_000 } },
          workflow: { steps: [wait('a', 500, 1), wait('b', 1_500, 2, ['a']), wait('c', 0, 3, ['b'])] },
        }),
      ),
    );
    const open = await Promise.all(runs.map((id) => stream(id)));
    const driver = load();
    await nats.restart();
    // Services answer again through the gateway (requests fail with a code while NATS is away).
    await waitFor(async () => (await call('GET', '/api/health')).status === 200);
    const seen = await driver.stop();
    for (const id of [...runs, ...seen.ok]) expect(TERMINAL).toContain(await settled(id));
    // A run may lose a tool's reply with the connection (its step then fails with a code), but none
    // is left without an end, and every end is in its history, readable from either gateway.
    for (const [i, id] of runs.entries()) {
      const s = open[i] as SseStream;
      // The stream open across the restart reaches the run's end, with no gap.
      await s.reading;
      expect(s.ended()).toBe(true);
      expect(s.frames.map((f) => f.id)).toEqual(Array.from({ length: s.frames.length }, (_, k) => k + 1));
      expect(TERMINAL.map((t) => (t === 'completed' ? 'complete' : t === 'failed' ? 'error' : t))).toContain(
        s.frames.at(-1)?.event,
      );
      expect(await status(id)).not.toBe('running');
    }
    await invariantsHold();
  });

  it('two schedulers and a Redis flush under task load: every accepted task ends once', async () => {
    const wf = await call('POST', '/api/workflows', {
      name: 'chaos task',
      inputSchema: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
      plan: { steps: [wait('w', 200, { tag: '{{inputs.tag}}' })] },
    });
    const workflowId = wf.json['id'] as string;
    expect((await call('POST', `/api/workflows/${workflowId}/publish`, { revision: 1 })).status).toBe(200);
    const ids: string[] = [];
    const submit = async (i: number) => {
      const res = await call('POST', '/api/agent/tasks', { workflowId, inputs: { tag: `t${i}` } }, i % 2);
      if (res.status === 202) {
        ids.push(res.json['id'] as string);
        accepted.push(res.json['id'] as string);
      } else expect(res.status).toBe(429);
    };
    const n = chaosScale(20, 60);
    for (let i = 0; i < n / 2; i++) await submit(i);
    await redis.restart(); // nothing on disk: the same as a flush, and every connection drops
    for (let i = n / 2; i < n; i++) await submit(i);
    const ends = await Promise.all(
      ids.map((id) =>
        waitFor(async () => {
          const t = (await call('GET', `/api/agent/tasks/${id}`)).json;
          return TERMINAL.includes(String(t['state'])) ? t : undefined;
        }, 120_000),
      ),
    );
    expect(ends.map((t) => t['state'])).toEqual(ids.map(() => 'completed'));
    // Once each: one run per task.
    expect(new Set(ends.map((t) => t['runId'])).size).toBe(ids.length);
    await invariantsHold();
  });

  // A slow SSE consumer: loopback sockets buffer megabytes in the kernel, so a process-level
  // figure could not tell a bounded gateway from an unbounded one here; the relay's back-pressure
  // (stop at a full socket, go on from Postgres after 'drain') is proven in stream-relay.spec.ts.

  it('restarting Postgres mid-load: requests fail with unavailable while it is down, nothing half-written, all continues after', async () => {
    if (!postgres) {
      // The server binaries (initdb, pg_ctl) are not installed: no own instance to restart.
      console.warn('skipped: no PostgreSQL server binaries for an own instance');
      return;
    }
    const runs = await Promise.all(
      Array.from({ length: chaosScale(2, 10) }, () =>
        start({ config: noReview, workflow: { steps: [wait('a', 300, 1), wait('b', 300, 2, ['a'])] } }),
      ),
    );
    await postgres.down();
    const refused = await call('POST', '/api/agent/run', {
      config: noReview,
      workflow: { steps: [wait('x', 0, 1)] },
    });
    expect(refused.status).toBe(503);
    expect(refused.json['code']).toBe('unavailable');
    await postgres.up();
    await waitFor(async () => (await call('GET', '/api/health')).status === 200);
    for (const id of runs) expect(TERMINAL).toContain(await settled(id));
    const after = await start({ config: noReview, workflow: { steps: [wait('x', 0, 1)] } });
    expect(await settled(after)).toBe('completed');
    await invariantsHold();
  });
});
