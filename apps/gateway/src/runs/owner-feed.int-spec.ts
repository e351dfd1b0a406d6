import { randomBytes, randomUUID } from 'node:crypto';
import { Events, type OwnerFeedEvent } from '@switchyard/contracts';
import { Bus } from '@switchyard/server-bus';
import { createPrisma, type PrismaClient } from '@switchyard/server-db';
import { IdentityRepository } from '@switchyard/server-db-identity';
import type { RunningService } from '@switchyard/server-runtime';
import {
  api,
  createTestDatabase,
  openOwnerFeed,
  testConfig,
  uniquePrefix,
  waitFor,
  type TestDatabase,
} from '@switchyard/testing';
import { bootstrap } from '../bootstrap';
import { FEED_RING_SIZE } from './owner-feed';

const runEvent = (status: 'running' | 'completed' = 'running'): OwnerFeedEvent => ({
  kind: 'run',
  runId: randomUUID(),
  status,
  type: status === 'running' ? 'run_started' : 'complete',
});
const taskEvent = (): OwnerFeedEvent => ({ kind: 'task', taskId: randomUUID(), status: 'queued' });

describe('GET /api/events, the owner feed (in-process gateway, real NATS)', () => {
  let db: TestDatabase;
  let gateway: RunningService;
  let prisma: PrismaClient;
  let bus: Bus;
  const admin = `adm_${randomBytes(24).toString('base64url')}`;
  let adminId: string;
  const owners: Record<'alice' | 'bob', { id: string; token: string }> = {
    alice: { id: '', token: '' },
    bob: { id: '', token: '' },
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    const prefix = uniquePrefix('feed');
    gateway = await bootstrap(
      testConfig('gateway', {
        DATABASE_URL: db.url,
        NATS_SUBJECT_PREFIX: prefix,
        SWITCHYARD_ADMIN_TOKEN: admin,
        SSE_HEARTBEAT_MS: '200',
        LOG_LEVEL: 'fatal',
      }),
    );
    prisma = createPrisma({ url: db.url, poolSize: 2, applicationName: 'feed-test' });
    bus = await Bus.connect({
      servers: ['nats://127.0.0.1:4222'],
      name: 'feed-test',
      subjectPrefix: prefix,
      defaultTimeoutMs: 5000,
    });
    const identity = new IdentityRepository(prisma);
    for (const name of ['alice', 'bob'] as const) {
      const owner = (await identity.ensureOwner(name, 'user')).owner;
      owners[name] = { id: owner.id, token: (await identity.createToken(owner.id)).token };
    }
    adminId = ((await api(gateway.url, 'GET', '/api/me', { token: admin })).json['owner'] as { id: string })
      .id;
    expect(adminId).toEqual(expect.any(String));
  });

  // A failed test leaves no stream open (the gateway would wait for it when closing).
  const open: Array<{ close(): void }> = [];
  const feed = async (...args: Parameters<typeof openOwnerFeed>) => {
    const s = await openOwnerFeed(...args);
    open.push(s);
    return s;
  };
  afterEach(() => open.splice(0).forEach((s) => s.close()));

  afterAll(async () => {
    await bus?.close();
    await gateway?.close();
    await prisma?.$disconnect();
    await db?.drop();
  });

  const url = (extra = '') => `${gateway.url}/api/events${extra}`;
  const as = (token: string, headers: Record<string, string> = {}) => ({
    'x-switchyard-token': token,
    ...headers,
  });
  const send = (ownerId: string, ...events: OwnerFeedEvent[]) => {
    for (const e of events) bus.emit(Events.ownerFeed(ownerId), e);
  };

  it("streams each owner's own events only (admins included), named by kind", async () => {
    const alice = await feed(url(), as(owners.alice.token));
    // EventSource cannot send headers: the token may come in the query.
    const bob = await feed(url(`?token=${owners.bob.token}`));
    const root = await feed(url(), as(admin));
    expect(alice.res.status).toBe(200);
    expect(alice.res.headers.get('content-type')).toContain('text/event-stream');
    const forAlice = [runEvent(), taskEvent(), runEvent('completed')];
    const forBob = [taskEvent()];
    const forAdmin = [runEvent()];
    send(owners.alice.id, ...forAlice);
    send(owners.bob.id, ...forBob);
    send(adminId, ...forAdmin);
    await alice.until((f) => f.length === 3);
    await bob.until((f) => f.length === 1);
    await root.until((f) => f.length === 1);
    // A last event for everyone, so nothing of another owner's can still be on its way.
    send(owners.alice.id, taskEvent());
    send(owners.bob.id, taskEvent());
    send(adminId, taskEvent());
    await Promise.all(
      [alice, bob, root].map((s) => s.until((f) => f.length >= 2 && f.at(-1)?.event === 'task')),
    );
    expect(alice.events().slice(0, 3)).toEqual(forAlice);
    expect(alice.frames.map((f) => f.event)).toEqual(['run', 'task', 'run', 'task']);
    expect(bob.events()).toHaveLength(2);
    expect(bob.events()[0]).toEqual(forBob[0]);
    expect(root.events()).toHaveLength(2);
    expect(root.events()[0]).toEqual(forAdmin[0]);
    // Ids grow within the epoch.
    const numbers = alice.frames.map((f) => Number(f.id?.split('-')[1]));
    expect([...numbers].sort((a, b) => a - b)).toEqual(numbers);
    expect(new Set(alice.frames.map((f) => f.id?.split('-')[0])).size).toBe(1);
    for (const s of [alice, bob, root]) s.close();
  });

  it('relays a message of several events as a frame each, numbered in order, and resumes within it', async () => {
    const live = await feed(url(), as(owners.alice.token));
    const told = [runEvent(), taskEvent(), runEvent('completed')];
    bus.emit(Events.ownerFeed(owners.alice.id), { kind: 'batch', events: told });
    await live.until((f) => f.length === 3);
    expect(live.events()).toEqual(told);
    const numbers = live.frames.map((f) => Number(f.id?.split('-')[1]));
    expect(numbers).toEqual([numbers[0], (numbers[0] as number) + 1, (numbers[0] as number) + 2]);
    // A client that heard the first frame only gets the other two on reconnect.
    const resumed = await feed(
      url(),
      as(owners.alice.token, { 'last-event-id': live.frames[0]?.id as string }),
    );
    await resumed.until((f) => f.length === 2);
    expect(resumed.events()).toEqual(told.slice(1));
    expect(resumed.frames.map((f) => f.event)).toEqual(['task', 'run']);
  });

  it('resumes after Last-Event-ID (header or query) with what was missed, no duplicate, no resync', async () => {
    const first = await feed(url(), as(owners.alice.token));
    const before = [runEvent(), runEvent()];
    send(owners.alice.id, ...before);
    await first.until((f) => f.length === 2);
    const resumeFrom = first.lastId();
    first.close();

    // Missed while disconnected; a second stream of the same owner shows when they have arrived.
    const witness = await feed(url(), as(owners.alice.token));
    const missed = [taskEvent(), runEvent('completed')];
    send(owners.alice.id, ...missed);
    await witness.until((f) => f.length === 2);

    const again = await feed(url(), as(owners.alice.token, { 'last-event-id': resumeFrom ?? '' }));
    await again.until((f) => f.length === 2);
    const live = runEvent();
    send(owners.alice.id, live);
    await again.until((f) => f.length === 3);
    expect(again.frames.map((f) => f.event)).not.toContain('resync');
    expect(again.events()).toEqual([...missed, live]);
    expect(new Set(again.frames.map((f) => f.id)).size).toBe(3);

    // The same through ?lastEventId= (clients that cannot send the header).
    const byQuery = await feed(
      url(`?lastEventId=${encodeURIComponent(resumeFrom ?? '')}&token=${owners.alice.token}`),
    );
    await byQuery.until((f) => f.length === 3);
    expect(byQuery.events()).toEqual([...missed, live]);
    for (const s of [witness, again, byQuery]) s.close();
  });

  it('sends one resync first for an id it cannot serve: another epoch, garbage, or older than the buffer', async () => {
    for (const id of ['0123456789abcdef-1', 'not-an-id', `${'f'.repeat(16)}-99999999`]) {
      const s = await feed(url(), as(owners.bob.token, { 'last-event-id': id }));
      await s.until((f) => f.length === 1);
      expect(s.frames[0]?.event).toBe('resync');
      const e = taskEvent();
      send(owners.bob.id, e);
      await s.until((f) => f.length === 2);
      expect(s.frames.map((f) => f.event)).toEqual(['resync', 'task']);
      expect(s.events()).toEqual([e]);
      s.close();
    }

    // Older than the buffer: more events than it keeps were sent since.
    const first = await feed(url(), as(owners.bob.token));
    send(owners.bob.id, taskEvent());
    await first.until((f) => f.length === 1);
    const old = first.lastId() ?? '';
    send(owners.bob.id, ...Array.from({ length: FEED_RING_SIZE + 5 }, () => taskEvent()));
    await first.until((f) => f.length === FEED_RING_SIZE + 6, 60_000);
    first.close();
    const late = await feed(url(), as(owners.bob.token, { 'last-event-id': old }));
    const e = runEvent();
    send(owners.bob.id, e);
    await late.until((f) => f.length === 2);
    expect(late.frames.map((f) => f.event)).toEqual(['resync', 'run']);
    late.close();
  });

  it("never replays another owner's buffer, whatever id is presented", async () => {
    const alice = await feed(url(), as(owners.alice.token));
    const secret = runEvent();
    send(owners.alice.id, secret);
    await alice.until((f) => f.length === 1);
    const aliceId = alice.frames[0]?.id ?? '';
    const before = Number(aliceId.split('-')[1]) - 1;
    alice.close();
    // Bob presents Alice's ids (and one just before her event), by header, by query, with an owner in the query.
    const tries = [
      feed(url(), as(owners.bob.token, { 'last-event-id': aliceId })),
      feed(
        url(`?lastEventId=${aliceId.split('-')[0]}-${before}&ownerId=${owners.alice.id}`),
        as(owners.bob.token),
      ),
    ];
    const streams = await Promise.all(tries);
    const mine = taskEvent();
    send(owners.bob.id, mine);
    for (const s of streams) {
      await s.until((f) => f.some((x) => x.event === 'task'));
      expect(s.events()).toEqual([mine]);
      s.close();
    }
  });

  it('sends heartbeats, refuses a missing or bad token, and a query token is for the streams only', async () => {
    const s = await feed(url(), as(owners.alice.token));
    await waitFor(() => s.comments.filter((c) => c === 'heartbeat').length >= 2, 60_000, 50);
    s.close();
    expect((await api(gateway.url, 'GET', '/api/events')).status).toBe(401);
    const bad = await api(gateway.url, 'GET', '/api/events?token=nope');
    expect(bad.status).toBe(401);
    expect(bad.type).toContain('application/problem+json');
    expect((await api(gateway.url, 'GET', `/api/agent/inbox?token=${owners.alice.token}`)).status).toBe(401);
  });
});
