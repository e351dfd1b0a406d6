import {
  createPrisma,
  createScratchDatabase,
  type PrismaClient,
  type ScratchDatabase,
} from '@switchyard/server-db';
import { IdentityRepository } from '@switchyard/server-db-identity';
import type { RunEventBody } from '@switchyard/contracts';
import { RunEventsRepository } from './run-events.repository';

const SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';

const token = (text: string): RunEventBody => ({ type: 'plan_token', data: { text, attempt: 1 } });

describe('RunEventsRepository (real Postgres)', () => {
  let db: ScratchDatabase;
  let prisma: PrismaClient;
  let events: RunEventsRepository;
  let ownerId: string;

  beforeAll(async () => {
    db = await createScratchDatabase(SERVER, { label: 'events' });
    prisma = createPrisma({ url: db.url, poolSize: 10, applicationName: 'test' });
    events = new RunEventsRepository(prisma);
    ownerId = (await new IdentityRepository(prisma).ensureOwner('runner', 'user')).owner.id;
  });

  afterAll(async () => {
    await prisma.$disconnect();
    await db.drop();
  });

  it('numbers events 1, 2, 3… per run, keeping order within a batch', async () => {
    const run = await events.createRun(ownerId, 'count things');
    const first = await events.append(run, [
      { type: 'run_started', data: { steps: 2, reused: 0 } },
      token('a'),
    ]);
    const second = await events.append(run, [{ type: 'planning_started', data: {} }]);
    expect([...first, ...second].map((e) => [e.seq, e.type])).toEqual([
      [1, 'run_started'],
      [2, 'plan_token'],
      [3, 'planning_started'],
    ]);
    expect(first[0]).toMatchObject({ runId: run, data: { steps: 2, reused: 0 } });
    expect(first[0]?.at).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    expect(second[0]?.data).toEqual({});
  });

  it('has no gap and no duplicate under concurrent appenders', async () => {
    const run = await events.createRun(ownerId, 'race');
    await Promise.all(
      Array.from({ length: 8 }, (_, w) =>
        (async () => {
          for (let i = 0; i < 10; i++)
            await events.append(run, [token(`tick ${w}.${i}`), token(`tock ${w}.${i}`)]);
        })(),
      ),
    );
    const all = await events.readAfter(run, 0, 1000);
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 160 }, (_, i) => i + 1));
    // Each batch stayed contiguous: a tick is always followed by its tock.
    const texts = all.map((e) => (e.type === 'plan_token' ? e.data.text : e.type));
    for (let i = 0; i < texts.length; i += 2) {
      expect(texts[i]).toMatch(/^tick /);
      expect(texts[i + 1]).toBe(texts[i]?.replace('tick', 'tock'));
    }
  });

  it('replays after a sequence number, in pages, and keeps runs apart', async () => {
    const a = await events.createRun(ownerId, 'a');
    const b = await events.createRun(ownerId, 'b');
    await events.append(
      a,
      Array.from({ length: 5 }, (_, i) => token(String(i))),
    );
    await events.append(b, [{ type: 'planning_started', data: {} }]);
    expect((await events.readAfter(a, 2, 2)).map((e) => e.seq)).toEqual([3, 4]);
    expect((await events.readAfter(a, 5)).length).toBe(0);
    expect((await events.readAfter(b, 0)).map((e) => e.type)).toEqual(['planning_started']);
  });

  it('refuses events for a run that does not exist, and hides runs from other owners', async () => {
    await expect(events.append('00000000-0000-4000-8000-000000000000', [token('x')])).rejects.toMatchObject({
      code: 'not_found',
    });
    const run = await events.createRun(ownerId, 'mine');
    await expect(events.assertVisible(run, ownerId)).resolves.toBeUndefined();
    await expect(events.assertVisible(run, '00000000-0000-4000-8000-000000000001')).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(events.assertVisible(run, null)).resolves.toBeUndefined();
  });
});
