import { randomUUID } from 'node:crypto';
import { AppError, EvaluateBody, Rpc, WorkflowIdParam, type RpcRequest } from '@switchyard/contracts';
import { Bus } from '@switchyard/server-bus';
import { createPrisma, type PrismaClient } from '@switchyard/server-db';
import { IdentityRepository } from '@switchyard/server-db-identity';
import { SchedulesRepository } from '@switchyard/server-db-tasks';
import { WorkflowsRepository } from '@switchyard/server-db-workflows';
import type { CallContext } from '@switchyard/server-observability';
import type { RunningService } from '@switchyard/server-runtime';
import {
  createTestDatabase,
  ManualClock,
  testConfig,
  uniquePrefix,
  waitFor,
  type TestDatabase,
} from '@switchyard/testing';
import { bootstrap } from '../bootstrap';
import { CLAIM_GRACE_MS, planClaim, ScheduleFirer } from './schedule-firer';

async function refusal(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

const MINUTE = 60_000;

/**
 * Schedules against real Postgres, Redis and NATS, on a clock the test moves: two scheduler replicas
 * share it, the planner and the executor are answered by this test.
 */
describe('workflow schedules (two scheduler replicas, a manual clock)', () => {
  let db: TestDatabase;
  let prisma: PrismaClient;
  let replicas: RunningService[] = [];
  let bus: Bus;
  let workflows: WorkflowsRepository;
  let schedules: SchedulesRepository;
  let identity: IdentityRepository;
  const clock = new ManualClock('2026-06-01T06:00:00Z');
  const stops: Array<() => void> = [];
  /** Tools the owner's allow rules cover (the executor's answer, as this test sets it). */
  let allowed = new Set<string>();

  const owner = async (): Promise<CallContext> => ({
    correlationId: randomUUID(),
    ownerId: (await identity.ensureOwner(`o${randomUUID().slice(0, 8)}`, 'user')).owner.id,
    role: 'user',
  });
  const publish = async (ctx: CallContext, steps = [{ id: 'r', tool: 'read_file', arguments: {} }]) => {
    const ownerId = ctx.ownerId ?? '';
    const wf = await workflows.create(ownerId, {
      name: 'scheduled',
      description: '',
      inputSchema: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
      plan: { steps: steps.map((s) => ({ ...s, dependsOn: [], description: '' })) },
      graph: null,
    });
    await workflows.publish(ownerId, wf.id, 1, 'read');
    return wf.id;
  };
  const create = (ctx: CallContext, body: Partial<RpcRequest<typeof Rpc.schedules.create>>) =>
    bus.call(Rpc.schedules.create, { workflowId: randomUUID(), inputs: { tag: 'x' }, ...body }, { ctx });
  const get = (ctx: CallContext, id: string) => bus.call(Rpc.schedules.get, { id }, { ctx });
  const tasksOf = async (workflowId: string) =>
    prisma.$queryRawUnsafe<Array<{ id: string; priority: string; state: string }>>(
      `SELECT id, priority::text, state::text FROM bg_task WHERE workflow_id = $1::uuid ORDER BY created_at`,
      workflowId,
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrisma({ url: db.url, poolSize: 4, applicationName: 'test' });
    workflows = new WorkflowsRepository(prisma);
    schedules = new SchedulesRepository(prisma);
    identity = new IdentityRepository(prisma);
    const prefix = uniquePrefix('sch');
    const env = {
      DATABASE_URL: db.url,
      NATS_SUBJECT_PREFIX: prefix,
      // No executor runs the tasks here: room for every fire in the queues.
      TASK_GLOBAL_QUEUE_LIMIT: '100000',
      TASK_OWNER_QUEUE_LIMIT: '100000',
      TASK_BATCH_OWNER_LIMIT: '100000',
      TASK_BATCH_GLOBAL_LIMIT: '100000',
      TASK_NON_INTERACTIVE_OWNER_LIMIT: '100000',
      TASK_NON_INTERACTIVE_GLOBAL_LIMIT: '100000',
    };
    replicas = [
      await bootstrap(testConfig('scheduler', env), clock),
      await bootstrap(testConfig('scheduler', env), clock),
    ];
    bus = await Bus.connect({
      servers: ['nats://127.0.0.1:4222'],
      name: 'schedules-test',
      subjectPrefix: prefix,
      defaultTimeoutMs: 10_000,
    });
    stops.push(
      await bus.respond(Rpc.workflows.resolve.subject, async (payload) => {
        const { id } = WorkflowIdParam.parse(payload);
        return workflows.resolve({ ownerId: randomUUID(), admin: true }, id, 'published');
      }),
      await bus.respond(Rpc.executor.permissionsEvaluate.subject, async (payload) => {
        const call = EvaluateBody.parse(payload);
        const writes = call.tool !== 'read_file';
        if (!writes || allowed.has(call.tool) || call.permissionMode !== 'ask')
          return { decision: 'allow', reason: 'allowed' };
        return { decision: 'deny', reason: `permission mode "ask": ${call.tool} is a write tool` };
      }),
    );
  });

  afterAll(async () => {
    for (const stop of stops) stop();
    await bus?.close();
    await Promise.all(replicas.map((r) => r.close()));
    await prisma?.$disconnect();
    await db?.drop();
  });

  beforeEach(() => {
    allowed = new Set();
  });

  it('creates a daily 09:00 schedule by default and shows its next five fires with the zone offset', async () => {
    const ctx = await owner();
    const wf = await publish(ctx);
    clock.set('2026-06-01T06:00:00Z');
    const s = await create(ctx, { workflowId: wf, timeZone: 'Europe/Berlin' });
    expect(s).toMatchObject({
      status: 'active',
      permissionMode: 'ask',
      recurrence: { type: 'daily', time: '09:00' },
      triggerCount: 0,
      missedFires: 0,
      lastError: null,
      expiresAt: null,
    });
    expect(s.nextFires).toEqual([
      '2026-06-01T09:00:00+02:00',
      '2026-06-02T09:00:00+02:00',
      '2026-06-03T09:00:00+02:00',
      '2026-06-04T09:00:00+02:00',
      '2026-06-05T09:00:00+02:00',
    ]);
    expect(await bus.call(Rpc.schedules.list, {}, { ctx })).toEqual({ items: [s] });
    const preview = await bus.call(
      Rpc.schedules.preview,
      {
        timeZone: 'America/New_York',
        recurrence: { type: 'weekly', weekdays: [1, 5], time: '02:30' },
        from: '2026-03-05T00:00:00Z',
      },
      { ctx },
    );
    expect(preview.nextFires).toEqual([
      '2026-03-06T02:30:00-05:00',
      '2026-03-09T02:30:00-04:00',
      '2026-03-13T02:30:00-04:00',
      '2026-03-16T02:30:00-04:00',
      '2026-03-20T02:30:00-04:00',
    ]);

    const bad = await refusal(create(ctx, { workflowId: wf, timeZone: 'Mars/Olympus_Mons' }));
    expect(bad.code).toBe('validation_failed');
    expect(bad.issues?.[0]?.path).toBe('timeZone');
    const misfit = await refusal(create(ctx, { workflowId: wf, inputs: { tag: 7 } }));
    expect(misfit.code).toBe('validation_failed');
    expect(misfit.message).toContain('inputs.tag');
    expect((await refusal(create(ctx, { workflowId: randomUUID() }))).code).toBe('not_found');
  });

  it('refuses an uncovered write step under "ask", naming it and the modes that work; an allow rule lets it in', async () => {
    const ctx = await owner();
    const wf = await publish(ctx, [
      { id: 'read', tool: 'read_file', arguments: {} },
      { id: 'save', tool: 'write_file', arguments: {} },
    ]);
    const refused = await refusal(create(ctx, { workflowId: wf }));
    expect(refused.code).toBe('validation_failed');
    expect(refused.message).toContain('save (write_file)');
    expect(refused.details).toMatchObject({ workingModes: ['approve-for-me', 'full-access'] });
    expect(refused.details?.['steps']).toEqual([
      { step: 'save', tool: 'write_file', reason: 'permission mode "ask": write_file is a write tool' },
    ]);
    expect((await create(ctx, { workflowId: wf, permissionMode: 'full-access' })).permissionMode).toBe(
      'full-access',
    );
    allowed = new Set(['write_file']);
    expect((await create(ctx, { workflowId: wf })).status).toBe('active');
  });

  it('after downtime across 5 interval boundaries fires one recovery run and reports missedFires 4', async () => {
    const ctx = await owner();
    const wf = await publish(ctx);
    const t0 = clock.now();
    const s = await create(ctx, { workflowId: wf, recurrence: { type: 'interval', everySeconds: 60 } });
    expect(s.nextFires[0]).toBe(new Date(t0.getTime() + MINUTE).toISOString().replace('.000Z', 'Z'));
    expect(s.expiresAt).toBe(
      new Date(t0.getTime() + 7 * 24 * 60 * MINUTE).toISOString().replace('.000Z', 'Z'),
    );
    // Nothing ticks the schedule while the clock stands still; then five boundaries pass at once.
    clock.advance(5 * MINUTE + 30_000);
    const fired = await waitFor(async () => {
      const now = await get(ctx, s.id);
      return now.triggerCount === 1 ? now : undefined;
    });
    expect(fired).toMatchObject({ triggerCount: 1, missedFires: 4, lastError: null });
    // The boundaries stay where they were: the next one is anchor + 6 minutes.
    expect(fired.nextFires[0]).toBe(new Date(t0.getTime() + 6 * MINUTE).toISOString().replace('.000Z', 'Z'));
    const tasks = await tasksOf(wf);
    // Queued, or running once dispatched (no executor here runs its body).
    expect(tasks).toEqual([
      { id: fired.lastTaskId, priority: 'batch', state: expect.stringMatching(/^(queued|running)$/) },
    ]);
    const fires = await schedules.fires(s.id);
    expect(fires.map((f) => [f.state, f.coalesced])).toEqual([['submitted', 4]]);
  });

  it('two replicas fire 200 occurrences exactly once each', async () => {
    const ctx = await owner();
    const wf = await publish(ctx);
    const made = [];
    for (let i = 0; i < 40; i++)
      made.push(await create(ctx, { workflowId: wf, recurrence: { type: 'interval', everySeconds: 60 } }));
    for (let round = 1; round <= 5; round++) {
      clock.advance(MINUTE);
      await waitFor(async () => {
        const { items } = await bus.call(Rpc.schedules.list, {}, { ctx });
        return items.every((s) => s.triggerCount === round);
      }, 60_000);
    }
    const { items } = await bus.call(Rpc.schedules.list, {}, { ctx });
    expect(items.map((s) => [s.triggerCount, s.missedFires])).toEqual(made.map(() => [5, 0]));
    const [counts] = await prisma.$queryRawUnsafe<
      Array<{ fires: number; occurrences: number; tasks: number }>
    >(
      `SELECT count(*)::int AS fires, count(DISTINCT (schedule_id, occurrence_at))::int AS occurrences,
              count(DISTINCT task_id)::int AS tasks
       FROM schedule_fire WHERE schedule_id = ANY($1::uuid[]) AND state = 'submitted'`,
      made.map((s) => s.id),
    );
    expect(counts).toEqual({ fires: 200, occurrences: 200, tasks: 200 });
    expect((await tasksOf(wf)).length).toBe(200);
  });

  it('reports an occurrence claimed by a replica that died before submitting as missed, and never replays it', async () => {
    const ctx = await owner();
    const wf = await publish(ctx);
    const s = await create(ctx, { workflowId: wf, recurrence: { type: 'interval', everySeconds: 60 } });
    // Another replica, a minute ahead of the live ones, claims the due occurrence (committed) and
    // dies before submitting it.
    const later = new Date(clock.now().getTime() + MINUTE);
    const claims = await schedules.claimDue(later, 1000, (row, now) => planClaim(row, now), randomUUID);
    expect(claims.filter((c) => c.scheduleId === s.id).length).toBe(1);
    clock.advance(MINUTE + CLAIM_GRACE_MS + 1_000);
    const reported = await waitFor(async () => {
      const now = await get(ctx, s.id);
      return now.missedFires === 1 ? now : undefined;
    });
    expect(reported.triggerCount).toBe(0);
    expect(reported.lastError).toContain('interrupted');
    expect((await schedules.fires(s.id)).map((f) => f.state)).toEqual(['interrupted']);
    expect(await tasksOf(wf)).toEqual([]);
    // The next boundary fires normally.
    clock.advance(MINUTE);
    await waitFor(async () => (await get(ctx, s.id)).triggerCount === 1);
    expect((await schedules.fires(s.id)).map((f) => f.state)).toEqual(['interrupted', 'submitted']);
  });

  it('deleting a workflow while a fire is due cancels its schedules: no task is submitted afterwards', async () => {
    const ctx = await owner();
    const ownerId = ctx.ownerId ?? '';
    const wf = await publish(ctx);
    const s = await create(ctx, { workflowId: wf, recurrence: { type: 'interval', everySeconds: 60 } });
    const other = await create(ctx, { workflowId: wf, recurrence: { type: 'interval', everySeconds: 120 } });
    // One occurrence is already claimed when the delete commits; the other is due after it.
    const later = new Date(clock.now().getTime() + MINUTE);
    const claims = (
      await schedules.claimDue(later, 1000, (row, now) => planClaim(row, now), randomUUID)
    ).filter((c) => c.scheduleId === s.id);
    expect(claims.length).toBe(1);
    await workflows.delete(ownerId, wf, 2);
    const written = await schedules.writeTasks(
      claims.map((c) => ({ fireId: c.fireId, taskId: randomUUID() })),
    );
    expect(written).toEqual({ written: [], refused: claims.map((c) => c.fireId) });
    clock.advance(3 * MINUTE);
    await replicas[0]?.app.get(ScheduleFirer).tick();
    expect(await get(ctx, s.id)).toMatchObject({ status: 'cancelled', nextFires: [] });
    expect(await get(ctx, other.id)).toMatchObject({
      status: 'cancelled',
      lastError: 'its workflow was deleted',
    });
    expect(await tasksOf(wf)).toEqual([]);
  });

  it('fires a one-shot once and ends it; deleting a schedule stops it and leaves its tasks alone', async () => {
    const ctx = await owner();
    const wf = await publish(ctx);
    const once = await create(ctx, { workflowId: wf, recurrence: { type: 'once', delaySeconds: 90 } });
    expect(once.nextFires.length).toBe(1);
    const hourly = await create(ctx, {
      workflowId: wf,
      fireNow: true,
      recurrence: { type: 'interval', everySeconds: 3600 },
    });
    await waitFor(async () => (await get(ctx, hourly.id)).triggerCount === 1);
    clock.advance(90_000);
    // The claim ends the schedule at once; the count moves when the task it submitted is settled.
    const done = await waitFor(async () => {
      const now = await get(ctx, once.id);
      return now.status === 'completed' && now.triggerCount > 0 ? now : undefined;
    });
    expect(done).toMatchObject({ triggerCount: 1, nextFires: [] });
    const deleted = await bus.call(Rpc.schedules.delete, { id: hourly.id }, { ctx });
    expect(deleted.id).toBe(hourly.id);
    expect((await refusal(get(ctx, hourly.id))).code).toBe('not_found');
    clock.advance(3600_000);
    const tasks = await tasksOf(wf);
    expect(tasks.length).toBe(2);
    // Left alone: none cancelled (queued, or running once dispatched; no executor here runs them).
    expect(tasks.filter((t) => t.state !== 'queued' && t.state !== 'running')).toEqual([]);
  });

  it('holds at most 50 active schedules per owner', async () => {
    const ctx = await owner();
    const wf = await publish(ctx);
    const made = await Promise.all(
      Array.from({ length: 52 }, () =>
        create(ctx, { workflowId: wf }).then(
          () => 'ok',
          (e: AppError) => e.code,
        ),
      ),
    );
    expect(made.filter((m) => m === 'ok').length).toBe(50);
    expect(made.filter((m) => m === 'conflict').length).toBe(2);
  });
});
