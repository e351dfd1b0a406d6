import {
  createPrisma,
  createScratchDatabase,
  type PrismaClient,
  type ScratchDatabase,
} from '@switchyard/server-db';
import { Client } from 'pg';

const SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';
import { digestToken, IdentityRepository } from './identity.repository';

describe('IdentityRepository (real Postgres)', () => {
  let db: ScratchDatabase;
  let prisma: PrismaClient;
  let repo: IdentityRepository;

  beforeAll(async () => {
    db = await createScratchDatabase(SERVER, { label: 'idn' });
    prisma = createPrisma({ url: db.url, poolSize: 4, applicationName: 'test' });
    repo = new IdentityRepository(prisma);
  });

  afterAll(async () => {
    await prisma.$disconnect();
    await db.drop();
  });

  it('stores only the SHA-256 digest of a token', async () => {
    const { owner } = await repo.ensureOwner('digest-check', 'user');
    const { token, info } = await repo.createToken(owner.id, { label: 'ci' });
    expect(token).toMatch(/^sy_[A-Za-z0-9_-]{43}$/);
    const c = new Client({ connectionString: db.url });
    await c.connect();
    const rows = await c.query('SELECT * FROM api_token WHERE id = $1', [info.id]);
    await c.end();
    expect(rows.rows[0].digest).toBe(digestToken(token));
    expect(JSON.stringify(rows.rows)).not.toContain(token);
  });

  it('authenticates live tokens and refuses unknown, revoked and expired ones', async () => {
    const { owner } = await repo.ensureOwner('auth-check', 'admin');
    const live = await repo.createToken(owner.id);
    expect((await repo.authenticate(live.token))?.owner).toMatchObject({ name: 'auth-check', role: 'admin' });
    expect(await repo.authenticate(live.token + 'x')).toBeNull();
    const expired = await repo.createToken(owner.id, { expiresAt: new Date(Date.now() - 1000) });
    expect(await repo.authenticate(expired.token)).toBeNull();
    await repo.revokeToken(live.info.id, owner.id);
    expect(await repo.authenticate(live.token)).toBeNull();
  });

  it("does not let one owner revoke another owner's token", async () => {
    const a = (await repo.ensureOwner('owner-a', 'user')).owner;
    const b = (await repo.ensureOwner('owner-b', 'user')).owner;
    const t = await repo.createToken(a.id);
    await expect(repo.revokeToken(t.info.id, b.id)).rejects.toMatchObject({ code: 'not_found' });
    expect(await repo.authenticate(t.token)).not.toBeNull();
  });

  it('creates an owner once when many callers race', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => repo.ensureOwner('racy', 'user')));
    expect(new Set(results.map((r) => r.owner.id)).size).toBe(1);
  });

  it('pages through tokens newest first without gaps or repeats', async () => {
    const { owner } = await repo.ensureOwner('pager', 'user');
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push((await repo.createToken(owner.id, { label: `t${i}` })).info.id);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await repo.listTokens(owner.id, { limit: 3, cursor });
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items.map((t) => t.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toHaveLength(7);
    expect(new Set(seen)).toEqual(new Set(made));
    expect(seen[0]).toBe(made[6]);
    await expect(repo.listTokens(owner.id, { limit: 3, cursor: 'garbage' })).rejects.toMatchObject({
      code: 'validation_failed',
    });
  });
});
