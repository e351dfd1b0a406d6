import {
  createPrisma,
  createScratchDatabase,
  type PrismaClient,
  type ScratchDatabase,
} from '@switchyard/server-db';
import { randomUUID } from 'node:crypto';
import { AppError, type AgentPlan } from '@switchyard/contracts';
import { IdentityRepository } from '@switchyard/server-db-identity';
import { WorkflowsRepository, type WorkflowDefinition } from './workflows.repository';

const SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';

const plan = (tool: string): AgentPlan => ({
  steps: [{ id: 'a', tool, arguments: { path: '{{inputs.path}}' }, dependsOn: [], description: '' }],
});

const definition = (over: Partial<WorkflowDefinition> = {}): WorkflowDefinition => ({
  name: 'Tidy notes',
  description: 'Reads and tidies the notes',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  plan: plan('read_file'),
  graph: {
    nodes: [
      { id: 'a', type: 'tool', position: { x: 10, y: 20 }, data: { tool: 'read_file' }, selected: true },
    ],
    edges: [],
    notes: [{ id: 'n1', text: 'sticky' }],
    viewport: { x: 0, y: 0, zoom: 1.5 },
  },
  ...over,
});

async function refusal(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('WorkflowsRepository (real Postgres)', () => {
  let db: ScratchDatabase;
  let prisma: PrismaClient;
  let repo: WorkflowsRepository;
  let ownerId: string;
  let otherOwner: string;

  beforeAll(async () => {
    db = await createScratchDatabase(SERVER, { label: 'workflows' });
    prisma = createPrisma({ url: db.url, poolSize: 6, applicationName: 'test' });
    repo = new WorkflowsRepository(prisma);
    const identity = new IdentityRepository(prisma);
    ownerId = (await identity.ensureOwner('wf-owner', 'user')).owner.id;
    otherOwner = (await identity.ensureOwner('wf-other', 'user')).owner.id;
  });

  afterAll(async () => {
    await prisma.$disconnect();
    await db.drop();
  });

  it('keeps the inputs in their author’s order through create, update and publish (the run form’s order)', async () => {
    const names = ['workbook', 'outputDir', 'splitColumn', 'account', 'group', 'subject', 'body'];
    const inputSchema = {
      type: 'object',
      properties: Object.fromEntries(names.map((n) => [n, { type: 'string' }])),
    };
    const order = (w: { inputSchema: Record<string, unknown> }) =>
      Object.keys(w.inputSchema['properties'] as Record<string, unknown>);
    const created = await repo.create(ownerId, definition({ inputSchema }));
    expect(order(await repo.get(ownerId, created.id))).toEqual(names);
    const reversed = {
      type: 'object',
      properties: Object.fromEntries([...names].reverse().map((n) => [n, { type: 'string' }])),
    };
    const updated = await repo.update(ownerId, created.id, 1, definition({ inputSchema: reversed }));
    expect(order(updated)).toEqual([...names].reverse());
    const published = await repo.publish(ownerId, created.id, updated.revision, 'read');
    const version = await repo.version(ownerId, created.id, published.publishedVersion as number);
    expect(order(version)).toEqual([...names].reverse());
  });

  it('creates a draft at revision 1 and keeps the graph verbatim', async () => {
    const def = definition();
    const created = await repo.create(ownerId, def);
    expect(created).toMatchObject({
      ownerId,
      name: 'Tidy notes',
      description: 'Reads and tidies the notes',
      revision: 1,
      publishedVersion: null,
      tool: null,
      inputSchema: def.inputSchema,
      plan: def.plan,
      graph: def.graph,
    });
    expect(await repo.get(ownerId, created.id)).toEqual(created);
    const bare = await repo.create(ownerId, definition({ graph: undefined }));
    expect(bare.graph).toBeNull();
  });

  it("answers not_found for another owner's workflow and for a missing one, on every operation", async () => {
    const { id } = await repo.create(ownerId, definition());
    const missing = randomUUID();
    for (const wid of [id, missing]) {
      const calls = [
        repo.get(otherOwner, wid),
        repo.update(otherOwner, wid, 1, definition()),
        repo.delete(otherOwner, wid, 1),
        repo.copy(otherOwner, wid),
        repo.publish(otherOwner, wid, 1, 'read'),
        repo.unpublish(otherOwner, wid, 1),
        repo.restore(otherOwner, wid, 1, 1),
        repo.versions(otherOwner, wid),
        repo.version(otherOwner, wid, 1),
        repo.resolve({ ownerId: otherOwner, admin: false }, wid, 'draft'),
      ];
      for (const call of calls) {
        const err = await refusal(call);
        expect([err.code, err.message]).toEqual(['not_found', `workflow ${wid} does not exist`]);
      }
    }
    expect((await repo.get(ownerId, id)).revision).toBe(1);
  });

  it('saves on the current revision and refuses a stale one, naming the current revision', async () => {
    const { id } = await repo.create(ownerId, definition());
    const saved = await repo.update(
      ownerId,
      id,
      1,
      definition({ name: 'Renamed', plan: plan('write_file') }),
    );
    expect(saved).toMatchObject({ revision: 2, name: 'Renamed', plan: plan('write_file') });

    const stale = await refusal(repo.update(ownerId, id, 1, definition({ name: 'Lost' })));
    expect(stale.code).toBe('conflict');
    expect(stale.message).toBe(
      `workflow ${id} is at revision 2; you edited revision 1 — reload and try again`,
    );
    expect(stale.details).toEqual({ currentRevision: 2 });
    expect((await repo.get(ownerId, id)).name).toBe('Renamed');
  });

  it('lets exactly one of two concurrent saves of the same revision win', async () => {
    const { id } = await repo.create(ownerId, definition());
    const results = await Promise.allSettled([
      repo.update(ownerId, id, 1, definition({ name: 'Editor A' })),
      repo.update(ownerId, id, 1, definition({ name: 'Editor B' })),
    ]);
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]?.reason).toMatchObject({ code: 'conflict', details: { currentRevision: 2 } });
    const current = await repo.get(ownerId, id);
    expect(current.revision).toBe(2);
    expect(current.name).toBe((won[0] as PromiseFulfilledResult<{ name: string }>).value.name);
  });

  it('publishes immutable numbered snapshots; later drafts do not change what is served', async () => {
    const { id } = await repo.create(ownerId, definition());
    const published = await repo.publish(ownerId, id, 1, 'read');
    expect(published).toMatchObject({ revision: 2, publishedVersion: 1, tool: `run_workflow_${id}` });

    await repo.update(ownerId, id, 2, definition({ name: 'Draft 2', plan: plan('write_file') }));
    expect(await repo.resolve({ ownerId, admin: false }, id, 'published')).toEqual({
      workflowId: id,
      version: 1,
      name: 'Tidy notes',
      inputSchema: definition().inputSchema,
      plan: plan('read_file'),
    });
    expect(await repo.resolve({ ownerId, admin: false }, id, 'draft')).toMatchObject({
      version: null,
      name: 'Draft 2',
      plan: plan('write_file'),
    });

    const again = await repo.publish(ownerId, id, 3, 'read');
    expect(again).toMatchObject({ revision: 4, publishedVersion: 2 });
    expect(await repo.resolve({ ownerId, admin: false }, id, 'published')).toMatchObject({
      version: 2,
      plan: plan('write_file'),
    });
    expect(await repo.resolve({ ownerId, admin: false }, id, 1)).toMatchObject({
      version: 1,
      name: 'Tidy notes',
    });
    expect((await repo.versions(ownerId, id)).map((v) => [v.version, v.name])).toEqual([
      [2, 'Draft 2'],
      [1, 'Tidy notes'],
    ]);
    expect(await repo.version(ownerId, id, 1)).toMatchObject({ version: 1, graph: definition().graph });

    const stale = await refusal(repo.publish(ownerId, id, 3, 'read'));
    expect([stale.code, stale.details]).toEqual(['conflict', { currentRevision: 4 }]);
  });

  it('publishes once when two publishes of the same revision race', async () => {
    const { id } = await repo.create(ownerId, definition());
    const results = await Promise.allSettled([
      repo.publish(ownerId, id, 1, 'read'),
      repo.publish(ownerId, id, 1, 'read'),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect((await repo.versions(ownerId, id)).map((v) => v.version)).toEqual([1]);
  });

  it('unpublishes, keeping the versions; a workflow that is not published cannot be unpublished', async () => {
    const { id } = await repo.create(ownerId, definition());
    await repo.publish(ownerId, id, 1, 'read');
    const off = await repo.unpublish(ownerId, id, 2);
    expect(off).toMatchObject({ revision: 3, publishedVersion: null, tool: null });
    expect(await repo.versions(ownerId, id)).toHaveLength(1);
    expect(await repo.published(ownerId)).not.toContainEqual(expect.objectContaining({ workflowId: id }));

    const twice = await refusal(repo.unpublish(ownerId, id, 3));
    expect([twice.code, twice.message]).toEqual(['conflict', `workflow ${id} is not published`]);
    const resolved = await refusal(repo.resolve({ ownerId, admin: false }, id, 'published'));
    expect([resolved.code, resolved.message]).toEqual(['conflict', `workflow ${id} is not published`]);
    expect(await repo.resolve({ ownerId, admin: false }, id, 1)).toMatchObject({ version: 1 });
    const stale = await refusal(repo.unpublish(ownerId, id, 2));
    expect(stale.details).toEqual({ currentRevision: 3 });
  });

  it('restores a version into the draft without changing the published version', async () => {
    const { id } = await repo.create(ownerId, definition());
    await repo.publish(ownerId, id, 1, 'read'); // v1
    await repo.update(
      ownerId,
      id,
      2,
      definition({ name: 'Second', description: 'two', plan: plan('write_file'), graph: null }),
    );
    await repo.publish(ownerId, id, 3, 'read'); // v2, revision 4

    const restored = await repo.restore(ownerId, id, 1, 4);
    expect(restored).toMatchObject({
      revision: 5,
      publishedVersion: 2,
      name: 'Tidy notes',
      description: 'Reads and tidies the notes',
      inputSchema: definition().inputSchema,
      plan: plan('read_file'),
      graph: definition().graph,
    });
    expect(await repo.resolve({ ownerId, admin: false }, id, 'published')).toMatchObject({
      version: 2,
      name: 'Second',
    });

    const missing = await refusal(repo.restore(ownerId, id, 9, 5));
    expect([missing.code, missing.message]).toEqual(['not_found', `workflow ${id} has no version 9`]);
    const stale = await refusal(repo.restore(ownerId, id, 2, 4));
    expect([stale.code, stale.details]).toEqual(['conflict', { currentRevision: 5 }]);
    const unknown = await refusal(repo.version(ownerId, id, 9));
    expect(unknown.code).toBe('not_found');
    const unknownResolve = await refusal(repo.resolve({ ownerId, admin: false }, id, 9));
    expect(unknownResolve.message).toBe(`workflow ${id} has no version 9`);
  });

  it('saves a copy of the draft as a new unpublished workflow', async () => {
    const source = await repo.create(ownerId, definition());
    await repo.publish(ownerId, source.id, 1, 'read');
    await repo.update(ownerId, source.id, 2, definition({ plan: plan('write_file') }));

    const copy = await repo.copy(ownerId, source.id);
    expect(copy.id).not.toBe(source.id);
    expect(copy).toMatchObject({
      ownerId,
      name: 'Tidy notes (copy)',
      revision: 1,
      publishedVersion: null,
      tool: null,
      plan: plan('write_file'),
      graph: definition().graph,
    });
    expect(await repo.versions(ownerId, copy.id)).toEqual([]);

    const long = await repo.create(ownerId, definition({ name: 'x'.repeat(200) }));
    const longCopy = await repo.copy(ownerId, long.id);
    expect(longCopy.name).toBe(`${'x'.repeat(193)} (copy)`);
  });

  it('deletes on the current revision only, with its versions', async () => {
    const { id } = await repo.create(ownerId, definition());
    await repo.publish(ownerId, id, 1, 'read');
    const stale = await refusal(repo.delete(ownerId, id, 1));
    expect([stale.code, stale.details]).toEqual(['conflict', { currentRevision: 2 }]);

    const deleted = await repo.delete(ownerId, id, 2);
    expect(deleted).toMatchObject({ id, publishedVersion: 1 });
    expect((await refusal(repo.get(ownerId, id))).code).toBe('not_found');
    expect(await prisma.workflowVersion.count({ where: { workflowId: id } })).toBe(0);
    expect((await refusal(repo.delete(ownerId, id, 2))).code).toBe('not_found');
  });

  it('lets an admin resolve any workflow, and only the owner otherwise', async () => {
    const { id } = await repo.create(otherOwner, definition({ name: 'Theirs' }));
    expect(await repo.resolve({ ownerId, admin: true }, id, 'draft')).toMatchObject({ name: 'Theirs' });
    expect((await refusal(repo.resolve({ ownerId, admin: false }, id, 'draft'))).code).toBe('not_found');
  });

  it("lists the owner's published workflows with their published definitions", async () => {
    const { id: ownerOnly } = await (async () => {
      const identity = new IdentityRepository(prisma);
      return { id: (await identity.ensureOwner('wf-catalog', 'user')).owner.id };
    })();
    const a = await repo.create(ownerOnly, definition({ name: 'B flow' }));
    const b = await repo.create(ownerOnly, definition({ name: 'A flow' }));
    await repo.create(ownerOnly, definition({ name: 'Unpublished' }));
    await repo.publish(ownerOnly, a.id, 1, 'read');
    await repo.publish(ownerOnly, b.id, 1, 'write');
    await repo.update(ownerOnly, a.id, 2, definition({ name: 'B flow, edited', plan: plan('write_file') }));

    const published = await repo.published(ownerOnly);
    expect(published.map((p) => [p.name, p.version, p.plan.steps[0]?.tool, p.effect])).toEqual([
      ['A flow', 1, 'read_file', 'write'],
      ['B flow', 1, 'read_file', 'read'],
    ]);
    expect(published[0]).toMatchObject({ workflowId: b.id, inputSchema: definition().inputSchema });
    expect(await repo.published(randomUUID())).toEqual([]);
  });

  describe('list', () => {
    let lister: string;
    beforeAll(async () => {
      lister = (await new IdentityRepository(prisma).ensureOwner('wf-lister', 'user')).owner.id;
      for (const name of ['delta', 'alpha', '100% done', 'gamma_1', 'gammax1', 'beta', 'alpha'])
        await repo.create(lister, definition({ name, description: `about ${name}` }));
      await repo.create(otherOwner, definition({ name: 'alpha' }));
    });

    it('pages by name then id, with the total', async () => {
      const all = await repo.page(lister, { pageNum: 1, pageSize: 50 });
      expect(all.total).toBe(7);
      expect(all.items.map((w) => w.name)).toEqual([
        '100% done',
        'alpha',
        'alpha',
        'beta',
        'delta',
        'gamma_1',
        'gammax1',
      ]);
      const [first, second] = all.items.filter((w) => w.name === 'alpha');
      expect((first?.id ?? '') < (second?.id ?? '')).toBe(true);
      expect(all.items[0]).not.toHaveProperty('plan');

      const page2 = await repo.page(lister, { pageNum: 2, pageSize: 3 });
      expect(page2.total).toBe(7);
      expect(page2.items.map((w) => w.name)).toEqual(['beta', 'delta', 'gamma_1']);
      const past = await repo.page(lister, { pageNum: 9, pageSize: 3 });
      expect(past).toEqual({ items: [], total: 7 });
    });

    it('searches name and description literally, case-insensitively', async () => {
      const names = async (q: string) =>
        (await repo.page(lister, { pageNum: 1, pageSize: 50, q })).items.map((w) => w.name);
      expect(await names('%')).toEqual(['100% done']);
      expect(await names('a_1')).toEqual(['gamma_1']);
      expect(await names('ALPHA')).toEqual(['alpha', 'alpha']);
      expect(await names('about beta')).toEqual(['beta']);
      expect(await names('\\')).toEqual([]);
      expect((await repo.page(lister, { pageNum: 1, pageSize: 1, q: 'gamma' })).total).toBe(2);
    });
  });
});
