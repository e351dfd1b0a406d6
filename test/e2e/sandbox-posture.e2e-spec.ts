import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import {
  api,
  createTestDatabase,
  openStream,
  Stack,
  uniquePrefix,
  waitFor,
  type ApiResponse,
  type SseStream,
  type TestDatabase,
} from '@switchyard/testing';

/**
 * The plugin sandbox posture on runs, schedules and webhook triggers, end to end: the tool registry
 * really restarts with PLUGIN_SANDBOX=none (isolation weakened) and again with bwrap (restored).
 */
describe('sandbox posture on runs, schedules and triggers end to end', () => {
  let db: TestDatabase;
  let pg: Client;
  let stack: Stack;
  let base: string;
  let alice: string;
  const admin = `e2e_${randomBytes(24).toString('base64url')}`;
  const streams: SseStream[] = [];

  const call = (method: string, path: string, token: string, body?: unknown): Promise<ApiResponse> =>
    api(stack.gatewayUrl, method, path, { token, ...(body !== undefined ? { body } : {}) });
  const steps = [{ id: 'w', tool: 'wait', arguments: { ms: 0, value: 'x' } }];

  /** The registry restarted with another PLUGIN_SANDBOX. */
  const registryWith = async (sandbox: 'bwrap' | 'none') => {
    await stack.stopService('tool-registry');
    (stack.env as Record<string, string>)['PLUGIN_SANDBOX'] = sandbox;
    await stack.startService('tool-registry');
  };

  /** A run stopped at its plan review, then cancelled: resumable, forkable, rewindable. */
  const cancelledRun = async (): Promise<string> => {
    const res = await call('POST', '/api/agent/run', alice, {
      config: { planApproval: true, permissionMode: 'full-access' },
      workflow: { steps },
    });
    expect(res.status).toBe(200);
    const runId = res.json['runId'] as string;
    const s = await openStream(`${stack.gatewayUrl}/api/agent/stream?runId=${runId}`, {
      'x-switchyard-token': alice,
    });
    streams.push(s);
    await s.next('plan_approval_requested');
    expect((await call('POST', `/api/agent/${runId}/cancel`, alice)).status).toBe(200);
    await waitFor(
      async () => (await call('GET', `/api/agent/runs/${runId}`, alice)).json['status'] === 'cancelled',
      60_000,
    );
    return runId;
  };

  const publish = async (): Promise<string> => {
    const wf = await call('POST', '/api/workflows', alice, {
      name: 'posture',
      inputSchema: { type: 'object', properties: {} },
      plan: { steps },
    });
    expect(wf.status).toBe(201);
    const id = wf.json['id'] as string;
    expect((await call('POST', `/api/workflows/${id}/publish`, alice, { revision: 1 })).status).toBe(200);
    return id;
  };

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'sy-posture-'));
    db = await createTestDatabase();
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    stack = await Stack.start(
      {
        DATABASE_URL: db.url,
        NATS_SUBJECT_PREFIX: uniquePrefix('posture'),
        SWITCHYARD_ADMIN_TOKEN: admin,
        LOG_LEVEL: 'warn',
        SHUTDOWN_GRACE_MS: '3000',
        REDIS_URL: 'redis://127.0.0.1:6379/12',
        WORKSPACE_DIR: join(base, 'workspace'),
        PLUGINS_DIR: join(base, 'plugins'),
        PLUGIN_SANDBOX: 'bwrap',
      },
      ['gateway', 'planner', 'executor', 'tool-registry', 'scheduler'],
    );
    alice = (await call('POST', '/api/tokens', admin, { owner: 'alice', role: 'user' })).json[
      'token'
    ] as string;
  });

  afterEach(() => streams.splice(0).forEach((s) => s.close()));

  afterAll(async () => {
    await stack?.stop();
    await pg?.end();
    await db?.drop();
    rmSync(base, { recursive: true, force: true });
  });

  it('refuses to resume, fork or rewind a sandboxed run while plugins run unsandboxed, and allows it once restored', async () => {
    const runId = await cancelledRun();
    expect((await call('GET', `/api/agent/runs/${runId}`, alice)).json['sandboxPosture']).toBe('sandboxed');

    const wf = await publish();
    const schedule = await call('POST', '/api/agent/schedules', alice, {
      workflowId: wf,
      permissionMode: 'full-access',
      timeZone: 'UTC',
      recurrence: { type: 'daily', time: '09:00' },
    });
    expect(schedule.status).toBe(201);
    expect(schedule.json).toMatchObject({ sandboxPosture: 'sandboxed', heldReason: null });
    const scheduleId = schedule.json['id'] as string;
    const trigger = await call('POST', '/api/workflow-triggers', alice, {
      workflowId: wf,
      permissionMode: 'full-access',
    });
    expect(trigger.status).toBe(201);
    expect(trigger.json).toMatchObject({ sandboxPosture: 'sandboxed', heldReason: null });
    const deliver = () =>
      api(stack.gatewayUrl, 'POST', `/api/workflow-hooks/${String(trigger.json['id'])}`, {
        body: {},
        headers: { 'x-switchyard-webhook-secret': trigger.json['secret'] as string },
      });

    // ── isolation weakened ──
    await registryWith('none');
    for (const [path, body] of [
      [`/api/agent/runs/${runId}/resume`, {}],
      [`/api/agent/runs/${runId}/fork`, undefined],
      [`/api/agent/runs/${runId}/rewind`, { keepSteps: 1 }],
    ] as const) {
      const refused = await call('POST', path, alice, body);
      expect(refused.status).toBe(409);
      expect(refused.json['code']).toBe('sandbox_weakened');
      expect(refused.json['detail']).toContain('PLUGIN_SANDBOX=none');
      expect(refused.json['detail']).toContain('restore');
    }
    // A run created now records the weaker posture, and nothing holds it.
    const weak = await cancelledRun();
    expect((await call('GET', `/api/agent/runs/${weak}`, alice)).json['sandboxPosture']).toBe('unsandboxed');
    expect((await call('POST', `/api/agent/runs/${weak}/fork`, alice)).status).toBe(200);

    // The schedule is held: listed with the reason, and a due occurrence does not fire.
    const held = await waitFor(async () => {
      const s = (await call('GET', `/api/agent/schedules/${scheduleId}`, alice)).json;
      // (While the registry restarted, it was held as "cannot confirm"; now with the registry's reason.)
      return String(s['heldReason']).includes('PLUGIN_SANDBOX=none') ? s : undefined;
    }, 60_000);
    expect(held['heldReason']).toContain('PLUGIN_SANDBOX=none');
    await pg.query(`UPDATE workflow_schedule SET next_fire_at = now() - interval '1 second' WHERE id = $1`, [
      scheduleId,
    ]);
    // Ten ticks of the scheduler (200 ms each) with the occurrence due.
    await new Promise((r) => setTimeout(r, 2_000));
    expect((await call('GET', `/api/agent/schedules/${scheduleId}`, alice)).json['triggerCount']).toBe(0);
    const listed = (await call('GET', '/api/workflow-triggers', alice)).json['items'] as Array<
      Record<string, unknown>
    >;
    expect(listed[0]?.['heldReason']).toContain('PLUGIN_SANDBOX=none');
    const refusedDelivery = await deliver();
    expect(refusedDelivery.status).toBe(409);
    expect(refusedDelivery.json['code']).toBe('sandbox_weakened');

    // ── restored ──
    await registryWith('bwrap');
    const resumed = await call('POST', `/api/agent/runs/${runId}/resume`, alice, {});
    expect(resumed.status).toBe(200);
    const fired = await waitFor(async () => {
      const s = (await call('GET', `/api/agent/schedules/${scheduleId}`, alice)).json;
      return (s['triggerCount'] as number) > 0 ? s : undefined;
    }, 60_000);
    expect(fired).toMatchObject({ triggerCount: 1, heldReason: null });
    expect((await deliver()).status).toBe(202);
  });
});
