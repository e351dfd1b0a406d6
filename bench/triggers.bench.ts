import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createScratchDatabase } from '@switchyard/server-db';
import { api, Stack, waitFor, type ApiResponse } from '@switchyard/testing';

/*
 * npm run bench -- triggers
 * Webhooks and schedules as a client sees them (all five services as processes, a scratch database,
 * a Redis logical DB of its own; queue limits raised so that capacity, not the trigger path, is never
 * what refuses; the executor is stopped before measuring, so no task body competes for the 2 cores).
 *   webhooks:  N deliveries (16 concurrent) through POST /api/workflow-hooks/{id} to 202, without and
 *              with a fresh X-Switchyard-Event-Id each (the idempotency claim), vs N raw submits
 *              through POST /api/agent/tasks to 202, in the same run, interleaved in rounds.
 *   lateness:  1,000 one-shot schedules (20 owners × 50, the per-owner maximum) due within the same
 *              second; from each due time to its task row written (task accepted), p50/p99.
 */

const REDIS_URL = 'redis://127.0.0.1:6379/11';
const N = 1_500;
const CONCURRENCY = 16;
const ROUNDS = 3;
const OWNERS = 20;
const PER_OWNER = 50;

function stats(values: number[]): { n: number; p50Ms: number; p99Ms: number; maxMs: number } {
  const s = [...values].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN;
  return { n: s.length, p50Ms: r3(q(0.5)), p99Ms: r3(q(0.99)), maxMs: r3(s[s.length - 1] ?? NaN) };
}
const r3 = (x: number) => Math.round(x * 1000) / 1000;

async function pool(n: number, lanes: number, one: (i: number) => Promise<ApiResponse>): Promise<number> {
  let next = 0;
  let failed = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      for (let i = next++; i < n; i = next++) {
        const res = await one(i);
        if (res.status !== 202) failed += 1;
      }
    }),
  );
  if (failed) throw new Error(`${failed} of ${n} requests were not accepted`);
  return n / ((performance.now() - started) / 1000);
}

export async function runTriggersBench(outDir: string): Promise<Record<string, unknown>> {
  const db = await createScratchDatabase('postgresql://postgres@127.0.0.1:5432/postgres', { label: 'bench' });
  const admin = `bench_${randomBytes(24).toString('base64url')}`;
  const limits = String(1_000_000);
  const stack = await Stack.start({
    DATABASE_URL: db.url,
    NATS_SUBJECT_PREFIX: `btrg${randomBytes(3).toString('hex')}.`,
    SWITCHYARD_ADMIN_TOKEN: admin,
    LOG_LEVEL: 'warn',
    REDIS_URL,
    TASK_GLOBAL_QUEUE_LIMIT: limits,
    TASK_OWNER_QUEUE_LIMIT: limits,
    TASK_BATCH_OWNER_LIMIT: limits,
    TASK_BATCH_GLOBAL_LIMIT: limits,
    TASK_NON_INTERACTIVE_OWNER_LIMIT: limits,
    TASK_NON_INTERACTIVE_GLOBAL_LIMIT: limits,
  });
  try {
    const call = (
      method: string,
      path: string,
      token: string,
      body?: unknown,
      headers?: Record<string, string>,
    ) =>
      api(stack.gatewayUrl, method, path, {
        token,
        ...(body !== undefined ? { body } : {}),
        ...(headers ? { headers } : {}),
      });
    const owner = async (name: string) => {
      const token = (await call('POST', '/api/tokens', admin, { owner: name, role: 'user' })).json[
        'token'
      ] as string;
      const wf = await call('POST', '/api/workflows', token, {
        name: 'bench',
        inputSchema: { type: 'object', properties: { tag: { type: 'string' } } },
        plan: { steps: [{ id: 'w', tool: 'wait', arguments: { ms: 0, value: '{{inputs.tag}}' } }] },
      });
      const id = wf.json['id'] as string;
      await call('POST', `/api/workflows/${id}/publish`, token, { revision: 1 });
      return { token, workflowId: id };
    };

    // ── webhooks vs raw submit ──────────────────────────────────────────────────────────────
    const hookOwner = await owner('hooks');
    const trigger = await call('POST', '/api/workflow-triggers', hookOwner.token, {
      workflowId: hookOwner.workflowId,
      inputs: { tag: 'bench' },
    });
    const triggerId = trigger.json['id'] as string;
    const secret = trigger.json['secret'] as string;
    const lateOwners = await Promise.all(Array.from({ length: OWNERS }, (_, i) => owner(`late${i}`)));
    // Creating schedules and triggers asks the executor (permission check); measuring does not need it.
    await stack.stopService('executor');

    const rates = { raw: [] as number[], webhook: [] as number[], webhookWithEventId: [] as number[] };
    const raw = () =>
      pool(N, CONCURRENCY, () =>
        call('POST', '/api/agent/tasks', hookOwner.token, {
          workflowId: hookOwner.workflowId,
          inputs: { tag: 'bench' },
          priority: 'interactive',
        }),
      );
    const hook = (withEventId: boolean) =>
      pool(N, CONCURRENCY, () =>
        api(stack.gatewayUrl, 'POST', `/api/workflow-hooks/${triggerId}`, {
          body: { tag: 'bench' },
          headers: {
            'x-switchyard-webhook-secret': secret,
            ...(withEventId ? { 'x-switchyard-event-id': randomUUID() } : {}),
          },
        }),
      );
    await pool(200, CONCURRENCY, () =>
      api(stack.gatewayUrl, 'POST', `/api/workflow-hooks/${triggerId}`, {
        body: {},
        headers: { 'x-switchyard-webhook-secret': secret },
      }),
    ); // warm-up
    for (let r = 0; r < ROUNDS; r++) {
      rates.raw.push(await raw());
      rates.webhook.push(await hook(false));
      rates.webhookWithEventId.push(await hook(true));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
    const rawPerS = median(rates.raw);
    const hookPerS = median(rates.webhook);
    const hookEventPerS = median(rates.webhookWithEventId);

    // ── lateness of 1,000 schedules due in the same second ─────────────────────────────────
    await stack.startService('executor');
    const dueAt = Math.ceil((Date.now() + 45_000) / 1000) * 1000;
    const created: Array<{ token: string; id: string; due: number }> = [];
    await Promise.all(
      lateOwners.map(async (o) => {
        for (let i = 0; i < PER_OWNER; i++) {
          // floor: each due time (creation + whole seconds) falls in the second before dueAt.
          const delaySeconds = Math.max(1, Math.floor((dueAt - Date.now()) / 1000));
          const s = await call('POST', '/api/agent/schedules', o.token, {
            workflowId: o.workflowId,
            inputs: { tag: 'late' },
            recurrence: { type: 'once', delaySeconds },
          });
          if (s.status !== 201) throw new Error(`schedule refused: ${s.text}`);
          created.push({
            token: o.token,
            id: s.json['id'] as string,
            due: Date.parse((s.json['nextFires'] as string[])[0] ?? ''),
          });
        }
      }),
    );
    await stack.stopService('executor');
    const dues = created.map((c) => c.due);
    const spreadMs = Math.max(...dues) - Math.min(...dues);
    if (Date.now() > Math.min(...dues))
      throw new Error('creating the schedules took longer than the lead time');
    await waitFor(
      async () => {
        const counts = await Promise.all(
          lateOwners.map(async (o) => {
            const list = (await call('GET', '/api/agent/schedules', o.token)).json['items'] as Array<{
              triggerCount: number;
            }>;
            return list.filter((s) => s.triggerCount === 1).length;
          }),
        );
        return counts.reduce((a, b) => a + b, 0) === OWNERS * PER_OWNER;
      },
      120_000,
      500,
    );
    const lateness: number[] = [];
    for (const o of lateOwners) {
      const schedules = (await call('GET', '/api/agent/schedules', o.token)).json['items'] as Array<{
        id: string;
        lastTaskId: string;
      }>;
      const tasks = new Map<string, string>();
      for (let cursor: string | null = null, first = true; first || cursor; first = false) {
        const page: ApiResponse = await call(
          'GET',
          `/api/agent/tasks?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          o.token,
        );
        for (const t of page.json['items'] as Array<{ id: string; createdAt: string }>)
          tasks.set(t.id, t.createdAt);
        cursor = page.json['nextCursor'] as string | null;
      }
      for (const s of schedules) {
        const c = created.find((x) => x.id === s.id);
        const at = tasks.get(s.lastTaskId);
        if (c && at) lateness.push(Date.parse(at) - c.due);
      }
    }
    const late = stats(lateness);

    const result = {
      machine: { cpus: cpus().length, model: cpus()[0]?.model, loadavg: loadavg().map(r3) },
      method:
        'gateway → NATS → scheduler → Postgres + Redis (admission); executor stopped while measuring; queue limits raised; ' +
        `${ROUNDS} interleaved rounds of ${N} requests each, ${CONCURRENCY} concurrent; median round reported`,
      webhooks: {
        rawSubmitPerS: r3(rawPerS),
        webhookPerS: r3(hookPerS),
        webhookWithEventIdPerS: r3(hookEventPerS),
        rounds: Object.fromEntries(Object.entries(rates).map(([k, v]) => [k, v.map(r3)])),
        ratio: r3(hookPerS / rawPerS),
        ratioWithEventId: r3(hookEventPerS / rawPerS),
        goal: 'webhook path ≥ 80% of raw submit throughput',
        goalMet: hookPerS / rawPerS >= 0.8 && hookEventPerS / rawPerS >= 0.8,
      },
      lateness: {
        schedules: created.length,
        dueSpreadMs: spreadMs,
        fromDueToTaskAccepted: late,
        goal: 'p99 ≤ 1 s with 1,000 due at once',
        goalMet: late.n === OWNERS * PER_OWNER && late.p99Ms <= 1_000,
      },
    };
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'triggers.json'), JSON.stringify(result, null, 2) + '\n');
    return result;
  } finally {
    await stack.stop();
    await db.drop();
  }
}
