import {
  createPrisma,
  createScratchDatabase,
  type PrismaClient,
  type ScratchDatabase,
} from '@switchyard/server-db';
import { randomUUID } from 'node:crypto';
import { AppError, MEMORY_PER_OWNER_MAX } from '@switchyard/contracts';
import { IdentityRepository } from '@switchyard/server-db-identity';
import { MemoryRepository } from './memory.repository';

const SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';
const DAY = 24 * 60 * 60 * 1000;

async function refusal(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('MemoryRepository (real Postgres)', () => {
  let db: ScratchDatabase;
  let prisma: PrismaClient;
  let repo: MemoryRepository;
  let identity: IdentityRepository;
  let a: string;
  let b: string;

  beforeAll(async () => {
    db = await createScratchDatabase(SERVER, { label: 'memory' });
    prisma = createPrisma({ url: db.url, poolSize: 6, applicationName: 'test' });
    repo = new MemoryRepository(prisma);
    identity = new IdentityRepository(prisma);
    a = (await identity.ensureOwner('mem-a', 'user')).owner.id;
    b = (await identity.ensureOwner('mem-b', 'user')).owner.id;
  });

  afterAll(async () => {
    await prisma.$disconnect();
    await db.drop();
  });

  it('is off until the owner turns it on, and refuses to remember while off', async () => {
    expect(await repo.enabled(a)).toBe(false);
    const off = await refusal(repo.remember(a, 'the staging host is blue'));
    expect(off.code).toBe('conflict');
    expect(off.message).toMatch(/memory is off/);
    expect(await repo.setEnabled(a, true)).toBe(true);
    expect(await repo.enabled(a)).toBe(true);
    expect(await repo.enabled(b)).toBe(false);
  });

  it("keeps each owner's memories apart: search, list and forget", async () => {
    await repo.setEnabled(b, true);
    const mine = await repo.remember(a, 'Deploys go to the staging cluster first');
    const theirs = await repo.remember(b, 'Deploys go to production on Fridays');
    expect((await repo.search(a, 'deploys', { limit: 5, touch: false })).map((m) => m.id)).toEqual([mine.id]);
    expect((await repo.page(a, { limit: 50 })).items.map((m) => m.id)).not.toContain(theirs.id);
    const foreign = await refusal(repo.forget(a, theirs.id));
    expect(foreign.code).toBe('not_found');
    expect((await repo.page(b, { limit: 50 })).items.map((m) => m.id)).toContain(theirs.id);
    expect((await refusal(repo.forget(a, randomUUID()))).code).toBe('not_found');
    expect((await repo.forget(a, mine.id)).id).toBe(mine.id);
  });

  it('ranks by overlap weighted with the 7-day half-life and marks found memories used when asked', async () => {
    const now = new Date();
    const fresh = await repo.remember(a, 'the build server is called anvil', now);
    const older = await repo.remember(
      a,
      'the build server runs nightly builds on anvil',
      new Date(now.getTime() - 8 * DAY),
    );
    const found = await repo.search(a, 'build server anvil', { limit: 5, touch: true, now });
    // fresh: overlap 3 → 3; older: overlap 3 × 0.5^(8/7) ≈ 1.36.
    expect(found.map((m) => m.id)).toEqual([fresh.id, older.id]);
    expect(found[0]?.score).toBe(3);
    expect(found[1]?.score).toBeCloseTo(3 * Math.pow(0.5, 8 / 7), 10);
    expect(found[0]?.lastUsedAt).toBe(now.toISOString());
    const listed = await repo.page(a, { limit: 50, q: 'ANVIL' });
    expect(listed.items.map((m) => m.id)).toEqual([fresh.id, older.id]);
    expect(listed.items[0]?.lastUsedAt).toBe(now.toISOString());
    await repo.forget(a, fresh.id);
    await repo.forget(a, older.id);
  });

  it('pages newest first with a cursor, and rejects a forged cursor', async () => {
    const base = Date.now() - 1000;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await repo.remember(a, `page fact ${i}`, new Date(base + i))).id);
    const first = await repo.page(a, { limit: 2, q: 'page fact' });
    expect(first.total).toBe(5);
    expect(first.items.map((m) => m.id)).toEqual([ids[4], ids[3]]);
    const second = await repo.page(a, { limit: 2, q: 'page fact', cursor: first.nextCursor ?? '' });
    expect(second.items.map((m) => m.id)).toEqual([ids[2], ids[1]]);
    const third = await repo.page(a, { limit: 2, q: 'page fact', cursor: second.nextCursor ?? '' });
    expect(third.items.map((m) => m.id)).toEqual([ids[0]]);
    expect(third.nextCursor).toBeNull();
    expect((await refusal(repo.page(a, { limit: 2, cursor: 'bm90IGEgY3Vyc29y' }))).code).toBe(
      'validation_failed',
    );
    for (const id of ids) await repo.forget(a, id);
  });

  it(`refuses the ${MEMORY_PER_OWNER_MAX + 1}th memory with a clear error, also when remembers race`, async () => {
    const owner = (await identity.ensureOwner('mem-full', 'user')).owner.id;
    await repo.setEnabled(owner, true);
    await prisma.$executeRawUnsafe(
      `INSERT INTO memory (id, owner_id, text, keywords)
       SELECT gen_random_uuid(), $1::uuid, 'fact ' || g, ARRAY['fact']
       FROM generate_series(1, $2::int - 2) g`,
      owner,
      MEMORY_PER_OWNER_MAX,
    );
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) => repo.remember(owner, `racing fact ${i}`)),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    const refused = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused?.reason).toBeInstanceOf(AppError);
    expect((refused?.reason as AppError).code).toBe('conflict');
    expect((refused?.reason as AppError).message).toMatch(/1000 memories/);
    expect((await repo.page(owner, { limit: 1 })).total).toBe(MEMORY_PER_OWNER_MAX);
  });
});
