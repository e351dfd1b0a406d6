import { randomUUID } from 'node:crypto';
import { AppError, Rpc, type RpcRequest, type ToolDescriptor } from '@switchyard/contracts';
import { Bus } from '@switchyard/server-bus';
import { createPrisma, type PrismaClient } from '@switchyard/server-db';
import { IdentityRepository } from '@switchyard/server-db-identity';
import type { CallContext } from '@switchyard/server-observability';
import type { RunningService } from '@switchyard/server-runtime';
import { createTestDatabase, testConfig, uniquePrefix, type TestDatabase } from '@switchyard/testing';
import { bootstrap } from '../bootstrap';
import { WORKFLOW_TEMPLATES } from './templates';

const readFile: ToolDescriptor = {
  name: 'read_file',
  description: 'Reads a text file of the workspace',
  inputSchema: { type: 'object', properties: { filePath: { type: 'string' } }, required: ['filePath'] },
  effect: 'read',
  idempotent: true,
  source: 'builtin',
};
const writeFile: ToolDescriptor = {
  name: 'write_file',
  description: 'Writes a text file of the workspace',
  inputSchema: {
    type: 'object',
    properties: { filePath: { type: 'string' }, content: { type: 'string' } },
    required: ['filePath', 'content'],
  },
  effect: 'write',
  idempotent: false,
  source: 'builtin',
};

const inputSchema = { type: 'object' as const, properties: { path: { type: 'string' } }, required: ['path'] };
const graph = {
  nodes: [
    {
      id: 'copy',
      type: 'tool',
      position: { x: 300, y: 0 },
      data: { tool: 'write_file', arguments: { filePath: 'copy.md', content: '{{node.read.result}}' } },
    },
    {
      id: 'read',
      type: 'tool',
      position: { x: 0, y: 0 },
      data: { tool: 'read_file', arguments: { filePath: '{{inputs.path}}' } },
    },
    { id: 'hint', type: 'note', position: { x: 0, y: 200 }, data: { text: 'copies a file' } },
  ],
  edges: [{ id: 'e1', source: 'read', target: 'copy' }],
  viewport: { x: 0, y: 0, zoom: 1 },
};
const readOnlyPlan = {
  goal: 'Read {{inputs.path}}',
  steps: [{ id: 'read', tool: 'read_file', arguments: { filePath: '{{inputs.path}}' } }],
};

async function refusal(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('planner workflows over NATS', () => {
  let db: TestDatabase;
  let prisma: PrismaClient;
  let service: RunningService;
  let bus: Bus;
  let stopCatalog: () => void;
  let catalog: ToolDescriptor[] = [readFile, writeFile];
  let catalogCalls = 0;
  let alice: CallContext;
  let bob: CallContext;
  let admin: CallContext;

  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrisma({ url: db.url, poolSize: 2, applicationName: 'test' });
    const identity = new IdentityRepository(prisma);
    const owner = async (name: string, role: 'user' | 'admin'): Promise<CallContext> => ({
      correlationId: randomUUID(),
      ownerId: (await identity.ensureOwner(name, role)).owner.id,
      role,
    });
    alice = await owner('alice', 'user');
    bob = await owner('bob', 'user');
    admin = await owner('root', 'admin');

    const prefix = uniquePrefix('wfl');
    service = await bootstrap(testConfig('planner', { DATABASE_URL: db.url, NATS_SUBJECT_PREFIX: prefix }));
    bus = await Bus.connect({
      servers: ['nats://127.0.0.1:4222'],
      name: 'workflows-test',
      subjectPrefix: prefix,
      defaultTimeoutMs: 10_000,
    });
    // The tool registry's catalog, as this test sets it.
    stopCatalog = await bus.respond(Rpc.registry.catalog.subject, async () => {
      catalogCalls += 1;
      return { tools: catalog };
    });
  });

  afterAll(async () => {
    stopCatalog?.();
    await bus?.close();
    await service?.close();
    await prisma?.$disconnect();
    await db?.drop();
  });

  beforeEach(() => {
    catalog = [readFile, writeFile];
  });

  const create = (ctx: CallContext, body: Partial<RpcRequest<typeof Rpc.workflows.create>>) =>
    bus.call(Rpc.workflows.create, { name: 'Copy a file', inputSchema, ...body }, { ctx });

  it('saves a graph verbatim with its compiled plan, and refuses every save-time rule with paths', async () => {
    const created = await create(alice, { description: 'Copies a file', graph });
    expect(created).toMatchObject({ revision: 1, publishedVersion: null, tool: null, graph, inputSchema });
    expect(created.plan.steps.map((s) => [s.id, s.dependsOn])).toEqual([
      ['read', []],
      ['copy', ['read']],
    ]);
    expect(await bus.call(Rpc.workflows.get, { id: created.id }, { ctx: alice })).toEqual(created);

    const refused = await refusal(
      create(alice, {
        plan: {
          steps: [
            { id: 'a', tool: 'read_file', arguments: { filePath: '{{inputs.nope}}' } },
            { id: 'b', tool: `run_workflow_${created.id}`, arguments: {} },
            {
              id: 'c',
              tool: 'write_file',
              arguments: { filePath: 'x', content: 'y' },
              retry: { attempts: 2 },
            },
          ],
        },
      }),
    );
    expect(refused.code).toBe('validation_failed');
    expect(refused.issues?.map((i) => i.path)).toEqual([
      '$.steps[1].tool',
      '$.steps[0].arguments.filePath',
      '$.steps[2].retry',
    ]);
    expect(refused.issues?.[1]?.message).toBe('unknown_input: {{inputs.nope}}: the inputs declare no nope');
    expect((refused.details?.['issues'] as unknown[]).length).toBe(3);
  });

  it('lets exactly one of two concurrent saves of revision 1 win', async () => {
    const { id } = await create(alice, { plan: readOnlyPlan });
    const save = (name: string) =>
      bus.call(
        Rpc.workflows.update,
        { id, body: { revision: 1, name, inputSchema, plan: readOnlyPlan } },
        { ctx: alice },
      );
    const results = await Promise.allSettled([save('one'), save('two')]);
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(lost).toHaveLength(1);
    expect(lost[0]?.reason).toMatchObject({
      code: 'conflict',
      message: `workflow ${id} is at revision 2; you edited revision 1 — reload and try again`,
      details: { currentRevision: 2 },
    });
  });

  it('publishes, serves the published version as a tool, restores, unpublishes and deletes', async () => {
    const owner: CallContext = {
      ...alice,
      ownerId: (await new IdentityRepository(prisma).ensureOwner('carol', 'user')).owner.id,
    };
    expect(await bus.call(Rpc.workflows.tools, {}, { ctx: owner })).toEqual({ tools: [] });

    const { id } = await create(owner, { name: 'Read a file', description: 'Reads it', plan: readOnlyPlan });
    const published = await bus.call(Rpc.workflows.publish, { id, revision: 1 }, { ctx: owner });
    expect(published).toMatchObject({ revision: 2, publishedVersion: 1, tool: `run_workflow_${id}` });
    // The registry asks for these tools while building its catalog: they must not ask for the catalog.
    const before = catalogCalls;
    expect(await bus.call(Rpc.workflows.tools, {}, { ctx: owner })).toEqual({
      tools: [
        {
          name: `run_workflow_${id}`,
          description: 'Run the workflow "Read a file": Reads it',
          inputSchema,
          effect: 'read',
          idempotent: false,
          source: 'workflow',
        },
      ],
    });
    expect(catalogCalls).toBe(before);

    // A newer draft does not change what is served.
    await bus.call(
      Rpc.workflows.update,
      { id, body: { revision: 2, name: 'Copy', inputSchema, graph } },
      { ctx: owner },
    );
    expect(await bus.call(Rpc.workflows.resolve, { id, version: 'published' }, { ctx: owner })).toEqual({
      workflowId: id,
      version: 1,
      name: 'Read a file',
      inputSchema,
      plan: {
        goal: readOnlyPlan.goal,
        steps: [{ ...readOnlyPlan.steps[0], dependsOn: [], description: '' }],
      },
    });
    expect(
      (await bus.call(Rpc.workflows.resolve, { id, version: 'draft' }, { ctx: owner })).plan.steps,
    ).toHaveLength(2);
    expect((await bus.call(Rpc.workflows.tools, {}, { ctx: owner })).tools[0]?.effect).toBe('read');

    await bus.call(Rpc.workflows.publish, { id, revision: 3 }, { ctx: owner });
    expect((await bus.call(Rpc.workflows.tools, {}, { ctx: owner })).tools[0]?.effect).toBe('write');
    expect(
      (await bus.call(Rpc.workflows.versions, { id }, { ctx: owner })).items.map((v) => v.version),
    ).toEqual([2, 1]);

    const restored = await bus.call(Rpc.workflows.restore, { id, n: 1, revision: 4 }, { ctx: owner });
    expect(restored).toMatchObject({ revision: 5, publishedVersion: 2, name: 'Read a file', graph: null });

    const stale = await refusal(bus.call(Rpc.workflows.unpublish, { id, revision: 4 }, { ctx: owner }));
    expect([stale.code, stale.details]).toEqual(['conflict', { currentRevision: 5 }]);
    await bus.call(Rpc.workflows.unpublish, { id, revision: 5 }, { ctx: owner });
    expect(await bus.call(Rpc.workflows.tools, {}, { ctx: owner })).toEqual({ tools: [] });
    const notPublished = await refusal(
      bus.call(Rpc.workflows.resolve, { id, version: 'published' }, { ctx: owner }),
    );
    expect([notPublished.code, notPublished.message]).toEqual([
      'conflict',
      `workflow ${id} is not published`,
    ]);

    await bus.call(Rpc.workflows.publish, { id, revision: 6 }, { ctx: owner });
    expect((await bus.call(Rpc.workflows.tools, {}, { ctx: owner })).tools).toHaveLength(1);
    const deleted = await bus.call(Rpc.workflows.delete, { id, revision: 7 }, { ctx: owner });
    expect(deleted.id).toBe(id);
    expect(await bus.call(Rpc.workflows.tools, {}, { ctx: owner })).toEqual({ tools: [] });
    expect((await refusal(bus.call(Rpc.workflows.get, { id }, { ctx: owner }))).code).toBe('not_found');
  });

  it('checks the draft again when publishing and a version when restoring', async () => {
    const { id } = await create(alice, {
      plan: { steps: [{ id: 'w', tool: 'write_file', arguments: { filePath: 'a', content: 'b' } }] },
    });
    await bus.call(Rpc.workflows.publish, { id, revision: 1 }, { ctx: alice });
    catalog = [readFile];
    const publish = await refusal(bus.call(Rpc.workflows.publish, { id, revision: 2 }, { ctx: alice }));
    expect(publish.code).toBe('validation_failed');
    expect(publish.issues).toEqual([
      { path: '$.steps[0].tool', message: 'unknown_tool: no tool named write_file in the catalog' },
    ]);
    const restore = await refusal(bus.call(Rpc.workflows.restore, { id, n: 1, revision: 2 }, { ctx: alice }));
    expect(restore.code).toBe('validation_failed');
    const stale = await refusal(bus.call(Rpc.workflows.publish, { id, revision: 1 }, { ctx: alice }));
    expect(stale.code).toBe('conflict');
    expect((await bus.call(Rpc.workflows.get, { id }, { ctx: alice })).revision).toBe(2);
  });

  it("keeps owners apart; an admin may resolve anyone's workflow", async () => {
    const mine = await create(alice, { name: 'Alice only', plan: readOnlyPlan });
    await create(bob, { name: 'Bob only', plan: readOnlyPlan });
    for (const call of [
      bus.call(Rpc.workflows.get, { id: mine.id }, { ctx: bob }),
      bus.call(Rpc.workflows.copy, { id: mine.id }, { ctx: bob }),
      bus.call(Rpc.workflows.versions, { id: mine.id }, { ctx: bob }),
      bus.call(Rpc.workflows.resolve, { id: mine.id, version: 'draft' }, { ctx: bob }),
      bus.call(Rpc.workflows.delete, { id: mine.id, revision: 1 }, { ctx: bob }),
    ]) {
      const err = await refusal(call);
      expect([err.code, err.message]).toEqual(['not_found', `workflow ${mine.id} does not exist`]);
    }
    expect(
      await bus.call(Rpc.workflows.resolve, { id: mine.id, version: 'draft' }, { ctx: admin }),
    ).toMatchObject({
      workflowId: mine.id,
      version: null,
      name: 'Alice only',
    });
    const bobs = await bus.call(Rpc.workflows.list, { q: 'only' }, { ctx: bob });
    expect(bobs).toMatchObject({ total: 1, pageNum: 1, pageSize: 20, items: [{ name: 'Bob only' }] });

    const copy = await bus.call(Rpc.workflows.copy, { id: mine.id }, { ctx: alice });
    expect(copy).toMatchObject({ name: 'Alice only (copy)', revision: 1, publishedVersion: null });
  });

  it('points an undeclared input in a graph at its node and argument, and accepts edges from the start node', async () => {
    const drawn = {
      nodes: [
        { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
        ...graph.nodes.map((n) =>
          n.id === 'copy'
            ? { ...n, data: { ...n.data, arguments: { filePath: '{{inputs.target}}', content: 'x' } } }
            : n,
        ),
      ],
      edges: [...graph.edges, { id: 's1', source: 'start', target: 'read' }],
    };
    const refused = await refusal(create(alice, { graph: drawn }));
    expect(refused.code).toBe('validation_failed');
    expect(refused.details?.['issues']).toEqual([
      {
        path: '$.graph.nodes[1].data.arguments.filePath',
        code: 'unknown_input',
        message: '{{inputs.target}}: the inputs declare no target',
      },
    ]);

    const ok = { ...drawn, nodes: drawn.nodes.map((n) => (n.id === 'copy' ? graph.nodes[0] : n)) };
    const saved = await create(alice, { graph: ok });
    expect(saved.graph).toEqual(ok);
    expect(saved.plan.steps.map((s) => [s.id, s.dependsOn])).toEqual([
      ['read', []],
      ['copy', ['read']],
    ]);
    const into = await refusal(
      create(alice, { graph: { ...ok, edges: [...ok.edges, { source: 'read', target: 'start' }] } }),
    );
    expect(into.details?.['issues']).toEqual([
      expect.objectContaining({ path: '$.graph.edges[2]', code: 'edge_into_start' }),
    ]);
  });

  it('lists the templates and saves one as a new draft of the caller, named as asked', async () => {
    const { items } = await bus.call(Rpc.workflows.templates, {}, { ctx: alice });
    expect(items.map((t) => t.id)).toEqual(WORKFLOW_TEMPLATES.map((t) => t.id));
    expect(items.length).toBeGreaterThanOrEqual(3);
    expect(new Set(items.map((t) => t.id)).size).toBe(items.length);
    for (const t of items) {
      expect(t.graph.nodes.filter((n) => n.type === 'start')).toHaveLength(1);
      expect(t.graph.nodes.every((n) => n.position !== undefined)).toBe(true);
      expect(t.graph.edges.length).toBeGreaterThan(0);
    }
    expect(items.some((t) => t.graph.nodes.some((n) => n.type === 'note'))).toBe(true);

    // Every tool the templates use, as the catalog describes it here.
    const used = new Set(items.flatMap((t) => t.graph.nodes.map((n) => n.data.tool).filter(Boolean)));
    catalog = [...used].map((name) => ({ ...readFile, name: String(name), inputSchema: { type: 'object' } }));
    const template = items[0]!;
    const saved = await bus.call(Rpc.workflows.instantiate, { id: template.id, body: {} }, { ctx: bob });
    expect(saved).toMatchObject({
      ownerId: bob.ownerId,
      name: template.name,
      description: template.description,
      revision: 1,
      publishedVersion: null,
      inputSchema: template.inputSchema,
      graph: template.graph,
      lastRun: null,
    });
    expect(saved.plan.steps.length).toBe(template.graph.nodes.filter((n) => n.type === 'tool').length);
    const named = await bus.call(
      Rpc.workflows.instantiate,
      { id: template.id, body: { name: 'Mine' } },
      { ctx: bob },
    );
    expect([named.name, named.id === saved.id]).toEqual(['Mine', false]);
    expect(await bus.call(Rpc.workflows.get, { id: saved.id }, { ctx: bob })).toEqual(saved);
    expect((await refusal(bus.call(Rpc.workflows.get, { id: saved.id }, { ctx: alice }))).code).toBe(
      'not_found',
    );

    const unknown = await refusal(
      bus.call(Rpc.workflows.instantiate, { id: 'no-such', body: {} }, { ctx: bob }),
    );
    expect([unknown.code, unknown.message]).toEqual(['not_found', 'there is no workflow template no-such']);
  });

  it("refuses a template whose plugin is missing from the caller's catalog by naming the plugin", async () => {
    const office = WORKFLOW_TEMPLATES.find((t) => t.requires?.includes('office'));
    expect(office?.id).toBe('excel-split-email');
    const tools = office!.graph.nodes.map((n) => n.data.tool).filter((t): t is string => !!t);
    // Only some of the plugin's tools: the rest are named.
    catalog = [readFile, writeFile, ...tools.slice(0, 2).map((name) => ({ ...readFile, name }))];
    const refused = await refusal(
      bus.call(Rpc.workflows.instantiate, { id: office!.id, body: {} }, { ctx: bob }),
    );
    expect([refused.code, refused.message, refused.details]).toEqual([
      'conflict',
      'the template Excel split → batch e-mail needs the office plugin: email_send_batch, confirm_send are not in your catalog; an admin installs and enables it',
      { requires: ['office'], missingTools: ['email_send_batch', 'confirm_send'] },
    ]);
    catalog = [
      readFile,
      writeFile,
      ...tools.map((name) => ({ ...readFile, name, inputSchema: { type: 'object' } })),
    ];
    const saved = await bus.call(Rpc.workflows.instantiate, { id: office!.id, body: {} }, { ctx: bob });
    expect(saved.plan.steps.map((s) => [s.id, s.tool, s.dependsOn, s.requiresApproval ?? false])).toEqual([
      ['analyse', 'excel_complex_config', [], false],
      ['split', 'excel_execute', ['analyse'], false],
      ['stage', 'email_send_batch', ['split'], false],
      ['send', 'confirm_send', ['stage'], true],
    ]);
    catalog = [readFile, writeFile];
  });

  it("shows each workflow's newest run of the caller's, in the list and on the workflow", async () => {
    const owner = async (name: string): Promise<CallContext> => ({
      ...alice,
      ownerId: (await new IdentityRepository(prisma).ensureOwner(name, 'user')).owner.id,
    });
    const dave = await owner('dave');
    const erin = await owner('erin');
    const ran = await create(dave, { name: 'Ran twice', plan: readOnlyPlan });
    const never = await create(dave, { name: 'Never ran', plan: readOnlyPlan });
    const run = async (ownerId: string, workflowId: string | null, status: string, at: string) => {
      const id = randomUUID();
      await prisma.$executeRawUnsafe(
        `INSERT INTO run (id, owner_id, status, workflow_id, created_at, updated_at)
         VALUES ($1::uuid, $2::uuid, $3::"RunStatus", $4::uuid, $5::timestamptz, now())`,
        id,
        ownerId,
        status,
        workflowId,
        at,
      );
      return id;
    };
    await run(dave.ownerId!, ran.id, 'completed', '2026-01-01T10:00:00.000Z');
    const newest = await run(dave.ownerId!, ran.id, 'failed', '2026-01-02T10:00:00.000Z');
    await run(dave.ownerId!, null, 'running', '2026-01-03T10:00:00.000Z');
    // Someone else's run of it (an admin's, say) is not the owner's last run.
    await run(erin.ownerId!, ran.id, 'running', '2026-01-04T10:00:00.000Z');

    const page = await bus.call(Rpc.workflows.list, {}, { ctx: dave });
    expect(page.items.map((w) => [w.name, w.lastRun])).toEqual([
      ['Never ran', null],
      ['Ran twice', { id: newest, status: 'failed', createdAt: '2026-01-02T10:00:00.000Z' }],
    ]);
    expect((await bus.call(Rpc.workflows.get, { id: ran.id }, { ctx: dave })).lastRun).toEqual(
      page.items[1]?.lastRun,
    );
    const edited = await bus.call(
      Rpc.workflows.update,
      { id: ran.id, body: { revision: 1, name: 'Ran twice', inputSchema, plan: readOnlyPlan } },
      { ctx: dave },
    );
    expect(edited.lastRun?.id).toBe(newest);
    expect((await bus.call(Rpc.workflows.get, { id: never.id }, { ctx: dave })).lastRun).toBeNull();
  });

  it('refuses a call without an owner as forbidden (a missing identity is a missing permission)', async () => {
    const err = await refusal(bus.call(Rpc.workflows.list, {}, { ctx: { correlationId: randomUUID() } }));
    expect(err.code).toBe('forbidden');
    expect(await bus.call(Rpc.workflows.tools, {}, { ctx: { correlationId: randomUUID() } })).toEqual({
      tools: [],
    });
  });
});
