import { randomBytes } from 'node:crypto';
import { Events, runEventsSubject, type RunEventBody } from '@switchyard/contracts';
import { Bus } from '@switchyard/server-bus';
import { createPrisma, type PrismaClient } from '@switchyard/server-db';
import { IdentityRepository } from '@switchyard/server-db-identity';
import { RunEventsRepository } from '@switchyard/server-db-runs';
import type { RunningService } from '@switchyard/server-runtime';
import {
  api,
  createTestDatabase,
  openStream,
  testConfig,
  uniquePrefix,
  waitFor,
  type TestDatabase,
} from '@switchyard/testing';
import { bootstrap } from '../bootstrap';

const tokenEvent = (text: string): RunEventBody => ({ type: 'plan_token', data: { text, attempt: 1 } });
const complete: RunEventBody = { type: 'complete', data: { summary: 'done', result: null, results: {} } };
const started: RunEventBody = { type: 'run_started', data: { steps: 1, reused: 0 } };

describe('GET /api/agent/stream (in-process gateway, real Postgres and NATS)', () => {
  let db: TestDatabase;
  let gateway: RunningService;
  let prisma: PrismaClient;
  let events: RunEventsRepository;
  let bus: Bus;
  let prefix: string;
  let token: string;
  let ownerId: string;
  let otherToken: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    prefix = uniquePrefix('sse');
    const admin = `adm_${randomBytes(24).toString('base64url')}`;
    gateway = await bootstrap(
      testConfig('gateway', {
        DATABASE_URL: db.url,
        NATS_SUBJECT_PREFIX: prefix,
        SWITCHYARD_ADMIN_TOKEN: admin,
        SSE_HEARTBEAT_MS: '200',
        LOG_LEVEL: 'fatal',
      }),
    );
    prisma = createPrisma({ url: db.url, poolSize: 4, applicationName: 'sse-test' });
    events = new RunEventsRepository(prisma);
    bus = await Bus.connect({
      servers: ['nats://127.0.0.1:4222'],
      name: 'sse-test',
      subjectPrefix: prefix,
      defaultTimeoutMs: 5000,
    });
    const identity = new IdentityRepository(prisma);
    const owner = (await identity.ensureOwner('streamer', 'user')).owner;
    ownerId = owner.id;
    token = (await identity.createToken(owner.id)).token;
    otherToken = (await identity.createToken((await identity.ensureOwner('outsider', 'user')).owner.id))
      .token;
  });

  afterAll(async () => {
    await bus?.close();
    await gateway?.close();
    await prisma?.$disconnect();
    await db?.drop();
  });

  /** Stores events, then publishes them live, as the executor does. */
  async function emit(runId: string, ...list: RunEventBody[]) {
    bus.emit(Events.run(runId), { events: await events.append(runId, list) });
  }

  const url = (runId: string, extra = '') => `${gateway.url}/api/agent/stream?runId=${runId}${extra}`;

  it('replays stored events, follows live ones in order, and ends after a terminal event', async () => {
    const run = await events.createRun(ownerId, 'stream me');
    await emit(run, { type: 'planning_started', data: {} }, tokenEvent('a'));
    const s = await openStream(url(run), { 'x-switchyard-token': token });
    expect(s.res.status).toBe(200);
    expect(s.res.headers.get('content-type')).toContain('text/event-stream');
    await waitFor(() => s.frames.length === 2, 60_000, 20);
    await emit(run, started);
    await emit(run, complete);
    await s.reading;
    expect(s.ended()).toBe(true);
    expect(s.frames.map((f) => [f.id, f.event])).toEqual([
      [1, 'planning_started'],
      [2, 'plan_token'],
      [3, 'run_started'],
      [4, 'complete'],
    ]);
    expect(s.frames[1]?.data).toMatchObject({ runId: run, seq: 2, type: 'plan_token', data: { text: 'a' } });
  });

  it('resumes after Last-Event-ID with no gap and no duplicate, and fills a gap in the live feed from Postgres', async () => {
    const run = await events.createRun(ownerId, 'reconnect');
    await emit(run, ...Array.from({ length: 5 }, (_, i) => tokenEvent(String(i))));
    const s = await openStream(url(run), { 'x-switchyard-token': token, 'last-event-id': '3' });
    await waitFor(() => s.frames.length === 2, 60_000, 20);
    // Stored but never published (a lost NATS message), then a later one that is published.
    await events.append(run, [tokenEvent('5')]);
    // A live message of an event type the catalog does not have (another version, sent around
    // the catalog) is dropped at the edge.
    bus.publish(runEventsSubject(run), {
      events: [{ runId: run, seq: 7, type: 'plan_token_v2', data: { text: '7' }, at: '' }],
    });
    await emit(run, tokenEvent('6'));
    await waitFor(() => s.frames.length === 4, 60_000, 20);
    expect(s.frames.map((f) => f.id)).toEqual([4, 5, 6, 7]);
    s.close();
  });

  it('accepts ?token= here (EventSource cannot send headers) and ?lastEventId=', async () => {
    const run = await events.createRun(ownerId, 'query token');
    await emit(run, tokenEvent('a'), tokenEvent('b'), {
      type: 'error',
      data: { message: 'boom', code: 'internal' },
    });
    const s = await openStream(url(run, `&token=${token}&lastEventId=1`), {
      'x-correlation-id': 'trace-sse-1',
    });
    await s.reading;
    expect(s.frames.map((f) => f.event)).toEqual(['plan_token', 'error']);
    // The stream's head echoes the correlation id like every answer.
    expect(s.res.headers.get('x-correlation-id')).toBe('trace-sse-1');
    expect(s.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  });

  it('fails the test helper on a stored frame that does not fit the catalog', async () => {
    const run = await events.createRun(ownerId, 'drifted');
    // Written around the writer (as an old or buggy version might have): a step_failed with no code.
    await prisma.$executeRawUnsafe(
      `INSERT INTO run_event (run_id, seq, type, data) VALUES ($1::uuid, 1, 'step_failed', '{"stepId":"a","tool":"t","attempt":1,"cancelled":false,"error":"x"}')`,
      run,
    );
    const s = await openStream(url(run), { 'x-switchyard-token': token });
    await expect(s.next('complete')).rejects.toThrow(/does not fit the run event catalog \(data.code: /);
    await expect(s.reading).rejects.toThrow(/step_failed/);
  });

  it('sends heartbeats while idle', async () => {
    const run = await events.createRun(ownerId, 'quiet');
    const s = await openStream(url(run), { 'x-switchyard-token': token });
    await waitFor(() => s.comments.filter((c) => c === 'heartbeat').length >= 2, 60_000, 50);
    s.close();
  });

  it("answers 404 for someone else's run and 401 without a token", async () => {
    const run = await events.createRun(ownerId, 'private');
    const other = await api(gateway.url, 'GET', `/api/agent/stream?runId=${run}`, { token: otherToken });
    expect(other.status).toBe(404);
    expect(other.type).toContain('application/problem+json');
    expect((await api(gateway.url, 'GET', `/api/agent/stream?runId=${run}`)).status).toBe(401);
    expect((await api(gateway.url, 'GET', '/api/agent/stream?runId=not-a-uuid', { token })).status).toBe(400);
  });

  it('refuses a bad query with the field named, and bad tokens however they are sent', async () => {
    const bad = await api(gateway.url, 'GET', '/api/agent/stream?runId=not-a-uuid&lastEventId=-1', { token });
    expect(bad.status).toBe(400);
    expect(bad.json['code']).toBe('validation_failed');
    expect((bad.json['errors'] as Array<{ path: string }>).map((e) => e.path).sort()).toEqual([
      'query.lastEventId',
      'query.runId',
    ]);
    expect(bad.headers.get('x-correlation-id')).toBeTruthy();
    const run = await events.createRun(ownerId, 'tokens');
    for (const t of ['', 'nope', 'x'.repeat(600), "' OR 1=1 --"]) {
      const res = await api(
        gateway.url,
        'GET',
        `/api/agent/stream?runId=${run}&token=${encodeURIComponent(t)}`,
      );
      expect(res.status).toBe(401);
    }
    expect(
      (
        await api(gateway.url, 'GET', `/api/agent/stream?runId=${run}`, {
          headers: { authorization: 'Bearer nope' },
        })
      ).status,
    ).toBe(401);
  });

  it('goes on past a terminal event that is not the newest (a resumed run)', async () => {
    const run = await events.createRun(ownerId, 'resumed');
    await emit(
      run,
      started,
      { type: 'interrupted', data: { message: 'the replica stopped' } },
      { type: 'resumed', data: { from: 'interrupted', reusedSteps: [] } },
      tokenEvent('again'),
    );
    const s = await openStream(url(run), { 'x-switchyard-token': token });
    await waitFor(() => s.frames.length === 4, 60_000, 20);
    expect(s.ended()).toBe(false);
    await emit(run, complete);
    await s.reading;
    expect(s.frames.map((f) => f.event)).toEqual([
      'run_started',
      'interrupted',
      'resumed',
      'plan_token',
      'complete',
    ]);
  });

  it("ends at once for a caller that resumes at a finished run's last event, and waits past an earlier one", async () => {
    const run = await events.createRun(ownerId, 'finished before the stream');
    await emit(run, started, tokenEvent('x'), complete);
    const atEnd = await openStream(url(run, '&lastEventId=3'), { 'x-switchyard-token': token });
    await atEnd.reading;
    expect(atEnd.ended()).toBe(true);
    expect(atEnd.frames).toEqual([]);
    // Resumed before the end: the rest is sent, then the stream ends as usual.
    const before = await openStream(url(run, '&lastEventId=2'), { 'x-switchyard-token': token });
    await before.reading;
    expect(before.frames.map((f) => f.event)).toEqual(['complete']);
    // At a terminal event that is not the newest (the run was resumed), the stream stays open.
    await emit(run, { type: 'resumed', data: { from: 'completed', reusedSteps: [] } });
    const resumed = await openStream(url(run, '&lastEventId=3'), { 'x-switchyard-token': token });
    await waitFor(() => resumed.frames.length === 1, 60_000, 20);
    expect(resumed.ended()).toBe(false);
    await emit(run, complete);
    await resumed.reading;
    expect(resumed.frames.map((f) => f.event)).toEqual(['resumed', 'complete']);
  });

  it('serves many streams of one run from one subscription, each complete and in order', async () => {
    const run = await events.createRun(ownerId, 'fan out');
    const streams = await Promise.all(
      Array.from({ length: 5 }, () => openStream(url(run), { 'x-switchyard-token': token })),
    );
    await waitFor(() => streams.every((s) => s.comments.includes('connected')), 60_000, 20);
    await emit(run, ...Array.from({ length: 20 }, (_, i) => tokenEvent(String(i))), complete);
    await Promise.all(streams.map((s) => s.reading));
    for (const s of streams)
      expect(s.frames.map((f) => f.id)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
  });
});
