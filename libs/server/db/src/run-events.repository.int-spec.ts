import { createScratchDatabase, type ScratchDatabase } from './scratch-database';
import { IdentityRepository } from './identity.repository';
import { createPrisma, type PrismaClient } from './prisma';
import { RunEventsRepository } from './run-events.repository';

const SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';

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
      { type: 'plan_ready', data: { steps: 2 } },
      { type: 'step_start', data: { stepId: 'a' } },
    ]);
    const second = await events.append(run, [{ type: 'step_complete' }]);
    expect([...first, ...second].map((e) => [e.seq, e.type])).toEqual([
      [1, 'plan_ready'],
      [2, 'step_start'],
      [3, 'step_complete'],
    ]);
    expect(first[0]?.data).toEqual({ steps: 2 });
    expect(second[0]?.data).toEqual({});
  });

  it('has no gap and no duplicate under concurrent appenders', async () => {
    const run = await events.createRun(ownerId, 'race');
    await Promise.all(
      Array.from({ length: 8 }, (_, w) =>
        (async () => {
          for (let i = 0; i < 10; i++)
            await events.append(run, [
              { type: 'tick', data: { w, i } },
              { type: 'tock', data: { w, i } },
            ]);
        })(),
      ),
    );
    const all = await events.readAfter(run, 0, 1000);
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 160 }, (_, i) => i + 1));
    // Each batch stayed contiguous: a tick is always followed by its tock.
    for (let i = 0; i < all.length; i += 2) {
      expect(all[i]?.type).toBe('tick');
      expect(all[i + 1]).toMatchObject({ type: 'tock', data: all[i]?.data });
    }
  });

  it('replays after a sequence number, in pages, and keeps runs apart', async () => {
    const a = await events.createRun(ownerId, 'a');
    const b = await events.createRun(ownerId, 'b');
    await events.append(
      a,
      Array.from({ length: 5 }, (_, i) => ({ type: 'e', data: { i } })),
    );
    await events.append(b, [{ type: 'other' }]);
    expect((await events.readAfter(a, 2, 2)).map((e) => e.seq)).toEqual([3, 4]);
    expect((await events.readAfter(a, 5)).length).toBe(0);
    expect((await events.readAfter(b, 0)).map((e) => e.type)).toEqual(['other']);
  });

  it('refuses events for a run that does not exist, and hides runs from other owners', async () => {
    await expect(
      events.append('00000000-0000-4000-8000-000000000000', [{ type: 'x' }]),
    ).rejects.toMatchObject({ code: 'not_found' });
    const run = await events.createRun(ownerId, 'mine');
    await expect(events.assertVisible(run, ownerId)).resolves.toBeUndefined();
    await expect(events.assertVisible(run, '00000000-0000-4000-8000-000000000001')).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(events.assertVisible(run, null)).resolves.toBeUndefined();
  });
});
