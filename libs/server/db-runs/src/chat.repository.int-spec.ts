import type { ChatEventBody } from '@switchyard/contracts';
import {
  createPgPool,
  createPrisma,
  createScratchDatabase,
  type PgPool,
  type PrismaClient,
  type ScratchDatabase,
} from '@switchyard/server-db';
import { ChatEventsReader } from '@switchyard/server-db-run-events';
import { IdentityRepository } from '@switchyard/server-db-identity';
import { ChatRepository } from './chat.repository';

const SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';
const token = (text: string): ChatEventBody => ({ type: 'token', data: { text } });

describe('ChatRepository (real Postgres)', () => {
  let db: ScratchDatabase;
  let prisma: PrismaClient;
  let pool: PgPool;
  let chats: ChatRepository;
  let reader: ChatEventsReader;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    db = await createScratchDatabase(SERVER, { label: 'chat' });
    prisma = createPrisma({ url: db.url, poolSize: 10, applicationName: 'test' });
    pool = createPgPool({ url: db.url, poolSize: 10, applicationName: 'test-chat' });
    chats = new ChatRepository(prisma, pool);
    reader = new ChatEventsReader(prisma);
    const identity = new IdentityRepository(prisma);
    alice = (await identity.ensureOwner('alice', 'user')).owner.id;
    bob = (await identity.ensureOwner('bob', 'user')).owner.id;
  });

  afterAll(async () => {
    await pool.end();
    await prisma.$disconnect();
    await db.drop();
  });

  it('numbers events 1, 2, 3… per session, with no gap or duplicate under concurrent appends', async () => {
    const s = await chats.create(alice, { permissionMode: 'ask' });
    expect(await chats.claimTurn(alice, s.id, 'r1')).toBe(true);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => chats.append(alice, s.id, [token(`${i}a`), token(`${i}b`)], 'r1')),
    );
    const events = await reader.readAfter(s.id, 0, 100);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    // Within a batch, in order.
    for (let i = 0; i < 40; i += 2)
      expect([events[i]?.data, events[i + 1]?.data]).toEqual([
        { text: expect.stringMatching(/a$/) as string },
        { text: expect.stringMatching(/b$/) as string },
      ]);
    expect((await chats.detail(alice, s.id)).lastEventId).toBe(40);
  });

  it('takes one turn at a time, and writes only while the replica holds the session', async () => {
    const s = await chats.create(alice, { permissionMode: 'ask' });
    const claims = await Promise.all([
      chats.claimTurn(alice, s.id, 'r1'),
      chats.claimTurn(alice, s.id, 'r2'),
    ]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    const holder = claims[0] ? 'r1' : 'r2';
    const other = holder === 'r1' ? 'r2' : 'r1';
    await expect(chats.append(alice, s.id, [token('x')], other)).rejects.toMatchObject({ code: 'conflict' });
    // Releasing with the terminal event frees it; a replica that died is taken over by name.
    await chats.append(alice, s.id, [{ type: 'cancelled', data: { message: 'x' } }], holder, {
      status: 'cancelled',
      release: true,
    });
    expect(await chats.claimTurn(alice, s.id, 'r3')).toBe(true);
    expect(await chats.claimTurn(alice, s.id, 'r4')).toBe(false);
    expect(await chats.claimTurn(alice, s.id, 'r4', 'r3')).toBe(true);
    expect((await chats.getDriven(alice, s.id)).replica).toBe('r4');
  });

  it('keeps another owner out of every read and write: not_found, as for a missing session', async () => {
    const s = await chats.create(alice, { permissionMode: 'ask', title: 'private' });
    const m = await chats.addMessage(alice, s.id, { role: 'user', content: 'hello' });
    expect(await chats.claimTurn(alice, s.id, 'ra')).toBe(true);
    const call = (callId: string) => [
      { newCalls: [{ callId, messageId: m.id, tool: 'wait', arguments: {} }] },
    ];
    await chats.append(alice, s.id, [token('c1')], 'ra', undefined, call('c1'));
    const notFound = { code: 'not_found' };
    await expect(chats.get(bob, s.id)).rejects.toMatchObject(notFound);
    await expect(chats.detail(bob, s.id)).rejects.toMatchObject(notFound);
    await expect(chats.update(bob, s.id, { title: 'mine' })).rejects.toMatchObject(notFound);
    await expect(chats.delete(bob, s.id)).rejects.toMatchObject(notFound);
    await expect(chats.addMessage(bob, s.id, { role: 'user', content: 'x' })).rejects.toMatchObject(notFound);
    expect(await chats.claimTurn(bob, s.id, 'rb')).toBe(false);
    // Bob naming alice's session and even her replica writes nothing: no call, no patch, no message.
    await expect(chats.append(bob, s.id, [token('x')], 'ra', undefined, call('c2'))).rejects.toMatchObject({
      code: 'conflict',
    });
    await expect(
      chats.append(bob, s.id, [token('x')], 'ra', undefined, [
        {
          callPatches: [{ callId: 'c1', status: 'completed', result: 'stolen' }],
          toolMessages: [{ callId: 'c1', content: 'stolen' }],
        },
      ]),
    ).rejects.toMatchObject({ code: 'conflict' });
    expect((await chats.list(bob, { limit: 30 })).items).toEqual([]);
    await expect(reader.assertOwned(s.id, bob)).rejects.toMatchObject(notFound);
    // Nothing of bob's attempts landed.
    const d = await chats.detail(alice, s.id);
    expect(d).toMatchObject({ title: 'private', messages: [expect.objectContaining({ content: 'hello' })] });
    expect(d.toolCalls).toEqual([expect.objectContaining({ callId: 'c1', status: 'pending' })]);
    expect(d.toolCalls[0]).not.toHaveProperty('result');
    expect(d.lastEventId).toBe(1);
  });

  it('writes calls, their outcomes and tool messages with the events: a JSON null result is kept apart from none', async () => {
    const s = await chats.create(alice, { permissionMode: 'full-access', budget: { maxToolCalls: 3 } });
    const m = await chats.addMessage(alice, s.id, { role: 'assistant', content: '', callIds: ['n', 'm'] });
    expect(await chats.claimTurn(alice, s.id, 'r1')).toBe(true);
    const fresh = (callId: string) => ({ callId, messageId: m.id, tool: 'wait', arguments: { ms: 0 } });
    // `n` is written and completed in one append (its outcome folded into its new row); `m` later.
    await chats.append(alice, s.id, [token('calls'), token('n done')], 'r1', undefined, [
      { newCalls: [fresh('n'), { ...fresh('m'), status: 'running', effect: 'read' }] },
      {
        callPatches: [{ callId: 'n', status: 'completed', result: null, durationMs: 1.5 }],
        toolMessages: [{ callId: 'n', content: 'null' }],
      },
    ]);
    await chats.append(alice, s.id, [token('m failed')], 'r1', undefined, [
      {
        callPatches: [
          { callId: 'm', status: 'failed', error: { code: 'tool_failed', message: 'no' } },
          { callId: 'm', durationMs: 2 },
          // A patch that sets no result leaves the JSON null of `n` as it is.
          { callId: 'n', durationMs: 3 },
        ],
        toolMessages: [{ callId: 'm', content: 'second' }],
      },
    ]);
    const d = await chats.detail(alice, s.id);
    expect(d.messages.map((x) => [x.seq, x.role, x.callId ?? null, x.content])).toEqual([
      [1, 'assistant', null, ''],
      [2, 'tool', 'n', 'null'],
      [3, 'tool', 'm', 'second'],
    ]);
    const byId = new Map(d.toolCalls.map((c) => [c.callId, c]));
    expect(byId.get('n')).toMatchObject({ status: 'completed', result: null, durationMs: 3 });
    expect(byId.get('m')).toMatchObject({
      status: 'failed',
      effect: 'read',
      error: { code: 'tool_failed', message: 'no' },
      durationMs: 2,
    });
    expect(byId.get('m')).not.toHaveProperty('result');
    expect(d.lastEventId).toBe(3);
    expect(d).toMatchObject({
      budget: { maxToolCalls: 3 },
      messages: expect.arrayContaining([expect.objectContaining({ callIds: ['n', 'm'] })]) as unknown,
    });
    expect((await chats.update(alice, s.id, { budget: null })).budget).toBeNull();

    const first = await chats.list(alice, { limit: 2 });
    expect(first.items).toHaveLength(2);
    const rest = await chats.list(alice, { limit: 30, cursor: first.nextCursor ?? '' });
    const all = [...first.items, ...rest.items];
    expect(new Set(all.map((x) => x.id)).size).toBe(all.length);
    expect(all.map((x) => x.createdAt)).toEqual([...all.map((x) => x.createdAt)].sort().reverse());
  });
});
