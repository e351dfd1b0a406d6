import { randomBytes } from 'node:crypto';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import {
  api,
  createTestDatabase,
  FakeLlmServer,
  openStream,
  Stack,
  uniquePrefix,
  type ApiResponse,
  stepFrames,
  type SseStream,
  type TestDatabase,
} from '@switchyard/testing';

interface WorkflowJson {
  id: string;
  revision: number;
  publishedVersion: number | null;
  tool: string | null;
  plan: { steps: Array<Record<string, unknown>> };
}

const inputSchema = {
  type: 'object',
  properties: { name: { type: 'string' }, count: { type: 'integer' } },
  required: ['name', 'count'],
};
const greet = {
  steps: [
    { id: 'hello', tool: 'wait', arguments: { ms: 0, value: 'hello {{inputs.name}}' } },
    { id: 'count', tool: 'wait', arguments: { ms: 0, value: '{{inputs.count}}' } },
    {
      id: 'both',
      tool: 'wait',
      arguments: { ms: 0, value: { greeting: '{{node.hello.result}}', n: '{{node.count.result}}' } },
      dependsOn: ['hello', 'count'],
    },
  ],
};

/** Saved workflows end to end: definitions, revisions, versions, runs by hand and as tools. */
describe('workflows end to end', () => {
  let db: TestDatabase;
  let stack: Stack;
  let llm: FakeLlmServer;
  let workspace: string;
  const admin = `e2e_${randomBytes(24).toString('base64url')}`;
  let alice: string;
  let bob: string;
  const streams: SseStream[] = [];

  const call = (method: string, path: string, token: string, body?: unknown): Promise<ApiResponse> =>
    api(stack.gatewayUrl, method, path, { token, ...(body !== undefined ? { body } : {}) });
  const follow = async (runId: string, token = alice) => {
    const s = await openStream(`${stack.gatewayUrl}/api/agent/stream?runId=${runId}`, {
      'x-switchyard-token': token,
    });
    streams.push(s);
    return s;
  };
  const create = async (body: Record<string, unknown>) => {
    const res = await call('POST', '/api/workflows', alice, { name: 'greet', inputSchema, ...body });
    return res;
  };
  const issuesOf = (res: ApiResponse) =>
    (
      (res.json['details'] as { issues?: Array<{ path: string; code: string }> } | undefined)?.issues ?? []
    ).map((i) => [i.path, i.code]);
  const catalogNames = async (token = alice) =>
    ((await call('GET', '/api/agent/tools', token)).json as unknown as Array<{ name: string }>).map(
      (t) => t.name,
    );

  /** Runs a workflow by hand in full-access mode and approves its plan. */
  const runApproved = async (id: string) => {
    const run = await call('POST', `/api/workflows/${id}/run`, alice, { permissionMode: 'full-access' });
    const s = await follow(run.json['runId'] as string);
    await s.next('plan_approval_requested');
    await call('POST', `/api/agent/${String(run.json['runId'])}/approve`, alice);
    return s;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    llm = await FakeLlmServer.start();
    workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sy-wf-')));
    stack = await Stack.start({
      DATABASE_URL: db.url,
      NATS_SUBJECT_PREFIX: uniquePrefix('wf'),
      SWITCHYARD_ADMIN_TOKEN: admin,
      LOG_LEVEL: 'warn',
      SHUTDOWN_GRACE_MS: '3000',
      WORKSPACE_DIR: workspace,
      LLM_PROVIDER: 'openai',
      LLM_MODEL: 'fake',
      LLM_BASE_URL: llm.baseUrl,
    });
    const token = async (owner: string) =>
      (await call('POST', '/api/tokens', admin, { owner, role: 'user' })).json['token'] as string;
    alice = await token('alice');
    bob = await token('bob');
  });

  afterEach(() => streams.splice(0).forEach((s) => s.close()));

  afterAll(async () => {
    await stack?.stop();
    await llm?.close();
    await db?.drop();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('lives through create, racing saves, publish, catalog, runs by hand and by a model, edit, restore, delete', async () => {
    const created = await create({ description: 'says hello', plan: greet });
    expect(created.status).toBe(201);
    const wf = created.json as unknown as WorkflowJson;
    expect(wf).toMatchObject({ revision: 1, publishedVersion: null, tool: null });

    // Two editors save on revision 1 at once: exactly one wins, the other learns the current revision.
    const save = (description: string) =>
      call('PUT', `/api/workflows/${wf.id}`, alice, {
        revision: 1,
        name: 'greet',
        description,
        inputSchema,
        plan: greet,
      });
    const [a, b] = await Promise.all([save('editor a'), save('editor b')]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const lost = a.status === 409 ? a : b;
    expect(String(lost.json['detail'])).toContain('revision 2');
    // The editor that lost learns the current revision without parsing the sentence.
    expect(lost.json).toMatchObject({ code: 'conflict', details: { currentRevision: 2 } });

    const published = await call('POST', `/api/workflows/${wf.id}/publish`, alice, { revision: 2 });
    expect(published.status).toBe(200);
    expect(published.json).toMatchObject({ publishedVersion: 1, revision: 3, tool: `run_workflow_${wf.id}` });

    // In the catalog as a tool with the input schema, for its owner only.
    const tools = (await call('GET', '/api/agent/tools', alice)).json as unknown as Array<
      Record<string, unknown>
    >;
    const tool = tools.find((t) => t['name'] === `run_workflow_${wf.id}`);
    expect(tool).toMatchObject({
      source: 'workflow',
      effect: 'read',
      inputSchema: expect.objectContaining({ required: ['name', 'count'] }),
    });
    expect(await catalogNames(bob)).not.toContain(`run_workflow_${wf.id}`);

    // By hand: inputs checked first, each problem listed.
    const bad = await call('POST', `/api/workflows/${wf.id}/run`, alice, { inputs: { count: 'three' } });
    expect(bad.status).toBe(400);
    expect((bad.json['errors'] as Array<{ path: string }>).map((e) => e.path).sort()).toEqual([
      'inputs.count',
      'inputs.name',
    ]);
    const byHand = await call('POST', `/api/workflows/${wf.id}/run`, alice, {
      inputs: { name: 'ada', count: 3 },
      permissionMode: 'ask',
    });
    expect(byHand.status).toBe(200);
    const s1 = await follow(byHand.json['runId'] as string);
    await s1.next('plan_approval_requested'); // the normal approval policy
    await call('POST', `/api/agent/${String(byHand.json['runId'])}/approve`, alice);
    expect((await s1.next('complete')).data.data.result).toEqual({ greeting: 'hello ada', n: 3 });
    expect(
      (await call('POST', `/api/workflows/${wf.id}/run`, bob, { inputs: { name: 'x', count: 1 } })).status,
    ).toBe(404);

    // A model plans a step that calls the workflow's tool; it runs the published version.
    llm.enqueue({
      content: JSON.stringify({
        steps: [{ id: 'w', tool: `run_workflow_${wf.id}`, arguments: { name: 'model', count: 7 } }],
      }),
    });
    const goal = await call('POST', '/api/agent/run', alice, {
      goal: 'greet the model',
      config: { planApproval: false, permissionMode: 'approve-for-me' },
    });
    expect(goal.status).toBe(200);
    const s2 = await follow(goal.json['runId'] as string);
    const done = await s2.next('complete', 60_000);
    expect(done.data.data.result).toMatchObject({ result: { greeting: 'hello model', n: 7 } });

    // Editing the draft does not change what the tool runs.
    const edited = await call('PUT', `/api/workflows/${wf.id}`, alice, {
      revision: 3,
      name: 'greet',
      inputSchema,
      plan: { steps: [{ id: 'only', tool: 'wait', arguments: { ms: 0, value: 'draft {{inputs.name}}' } }] },
    });
    expect(edited.status).toBe(200);
    expect((await call('GET', `/api/workflows/${wf.id}`, alice)).json).toMatchObject({
      publishedVersion: 1,
      revision: 4,
    });
    const versions = await call('GET', `/api/workflows/${wf.id}/versions`, alice);
    expect((versions.json['items'] as Array<{ version: number }>).map((v) => v.version)).toEqual([1]);

    // Restore version 1 into the draft: the draft is the greeting again; still version 1 published.
    const restored = await call('POST', `/api/workflows/${wf.id}/versions/1/restore`, alice, { revision: 4 });
    expect(restored.status).toBe(200);
    expect(restored.json).toMatchObject({ revision: 5, publishedVersion: 1 });
    expect((restored.json as unknown as WorkflowJson).plan.steps.map((s) => s['id'])).toEqual([
      'hello',
      'count',
      'both',
    ]);
    expect((await call('POST', `/api/workflows/${wf.id}/publish`, alice, { revision: 4 })).status).toBe(409);

    // Copy, then delete the original: its tool is gone at once.
    const copy = await call('POST', `/api/workflows/${wf.id}/copy`, alice);
    expect(copy.status).toBe(201);
    expect(copy.json).toMatchObject({ revision: 1, publishedVersion: null });
    expect((await call('DELETE', `/api/workflows/${wf.id}?revision=4`, alice)).status).toBe(409);
    expect((await call('DELETE', `/api/workflows/${wf.id}?revision=5`, alice)).status).toBe(200);
    expect(await catalogNames()).not.toContain(`run_workflow_${wf.id}`);
    expect((await call('GET', `/api/workflows/${wf.id}`, alice)).status).toBe(404);
  });

  it('unpublishing removes the tool from the catalog at once', async () => {
    const wf = (await create({ plan: greet })).json as unknown as WorkflowJson;
    await call('POST', `/api/workflows/${wf.id}/publish`, alice, { revision: 1 });
    expect(await catalogNames()).toContain(`run_workflow_${wf.id}`);
    expect((await call('POST', `/api/workflows/${wf.id}/unpublish`, alice, { revision: 2 })).status).toBe(
      200,
    );
    expect(await catalogNames()).not.toContain(`run_workflow_${wf.id}`);
  });

  it('compiles a canvas graph (edges become dependsOn) and keeps the graph as drawn', async () => {
    const graph = {
      nodes: [
        {
          id: 'b',
          type: 'tool',
          position: { x: 200, y: 0 },
          data: { tool: 'wait', arguments: { ms: 0, value: '{{node.a.result}}!' } },
        },
        {
          id: 'a',
          type: 'tool',
          position: { x: 0, y: 0 },
          data: { tool: 'wait', arguments: { ms: 0, value: 'A' } },
        },
        { id: 'note1', type: 'note', position: { x: 50, y: 90 }, data: { text: 'remember' } },
      ],
      edges: [{ id: 'e1', source: 'a', target: 'b' }],
      viewport: { zoom: 1.5 },
    };
    const res = await create({ graph, inputSchema: { type: 'object', properties: {} } });
    expect(res.status).toBe(201);
    const wf = res.json as unknown as WorkflowJson & { graph: unknown };
    expect(wf.plan.steps.map((s) => [s['id'], s['dependsOn']])).toEqual([
      ['a', []],
      ['b', ['a']],
    ]);
    expect(wf.graph).toEqual(graph);
  });

  it('ships templates that save as drafts of the caller and run, each step value fitting its tool’s output schema', async () => {
    const listed = await call('GET', '/api/workflows/templates', alice);
    expect(listed.status).toBe(200);
    const all = listed.json['items'] as Array<{
      id: string;
      name: string;
      requires?: string[];
      inputSchema: { properties: Record<string, unknown> };
      graph: { nodes: Array<{ id: string; type: string; data: { tool?: string } }> };
    }>;
    // Templates over a plugin's tools need the plugin (not installed here): refused by its name.
    const needsPlugin = all.filter((t) => t.requires?.length);
    expect(needsPlugin.map((t) => [t.id, t.requires])).toEqual([['excel-split-email', ['office']]]);
    const refused = await call('POST', '/api/workflows/templates/excel-split-email/instantiate', alice);
    expect([refused.status, refused.json['code'], refused.json['detail']]).toEqual([
      409,
      'conflict',
      expect.stringMatching(/^the template Excel split → batch e-mail needs the office plugin: /),
    ]);
    const templates = all.filter((t) => !t.requires?.length);
    expect(templates.length).toBeGreaterThanOrEqual(3);
    const inputsFor: Record<string, Record<string, unknown>> = {
      'save-note': { path: 'tpl/note.txt', text: 'hello from a template' },
      'folder-inventory': { folder: '.', reportPath: 'tpl/inventory.txt' },
      'delayed-reminder': { message: 'stretch', path: 'tpl/reminder.txt' },
      'command-log': { command: 'ls -la', logPath: 'tpl/command.log' },
    };
    expect(templates.map((t) => t.id).sort()).toEqual(Object.keys(inputsFor).sort());

    const catalog = (await call('GET', '/api/agent/tools', alice)).json as unknown as Array<{
      name: string;
      outputSchema?: Record<string, unknown>;
    }>;
    const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
    const outputOf = new Map(catalog.map((t) => [t.name, t.outputSchema]));
    const results = new Map<string, unknown>();

    for (const template of templates) {
      const made = await call('POST', `/api/workflows/templates/${template.id}/instantiate`, alice, {
        name: `Mine: ${template.name}`,
      });
      expect({ template: template.id, status: made.status }).toEqual({ template: template.id, status: 201 });
      expect(made.json).toMatchObject({
        name: `Mine: ${template.name}`,
        revision: 1,
        publishedVersion: null,
      });
      const id = String(made.json['id']);
      const run = await call('POST', `/api/workflows/${id}/run`, alice, {
        inputs: inputsFor[template.id],
        permissionMode: 'full-access',
      });
      expect(run.status).toBe(200);
      const runId = String(run.json['runId']);
      const s = await follow(runId);
      await s.next('plan_approval_requested');
      await call('POST', `/api/agent/${runId}/approve`, alice);
      await s.next('complete', 60_000);
      for (const node of template.graph.nodes.filter((n) => n.type === 'tool')) {
        const [done] = stepFrames(s.frames, 'step_complete', node.id).map((f) => f.data.data);
        results.set(`${template.id}/${node.id}`, done?.result);
        const schema = outputOf.get(node.data.tool as string);
        expect({ node: node.id, hasSchema: schema !== undefined }).toEqual({
          node: node.id,
          hasSchema: true,
        });
        const validate = ajv.compile(schema ?? {});
        expect({ node: node.id, valid: validate(done?.result), errors: validate.errors ?? null }).toEqual({
          node: node.id,
          valid: true,
          errors: null,
        });
      }
      // The library card shows it.
      const page = await call('GET', `/api/workflows?q=${encodeURIComponent(template.name)}`, alice);
      expect(
        (page.json['items'] as Array<{ id: string; lastRun: unknown }>).find((w) => w.id === id),
      ).toMatchObject({
        lastRun: { id: runId, status: 'completed', createdAt: expect.any(String) },
      });
    }
    expect(String(results.get('save-note/read'))).toMatch(/^hello from a template\n/);
    expect(String(results.get('command-log/save'))).toMatch(/^wrote \d+ bytes to tpl\/command\.log$/);

    // Task tools answer structured values; capacity's fits its schema.
    const capacity = await call('POST', '/api/agent/tools/invoke', admin, {
      tool: 'task_capacity',
      arguments: {},
    });
    const validate = ajv.compile(outputOf.get('task_capacity') ?? {});
    const value = (capacity.json['content'] as Array<{ json?: unknown }>)[0]?.json;
    expect({ valid: validate(value), errors: validate.errors ?? null }).toEqual({
      valid: true,
      errors: null,
    });

    const unknown = await call('POST', '/api/workflows/templates/no-such-template/instantiate', alice);
    expect([unknown.status, unknown.json['code']]).toEqual([404, 'not_found']);
    expect((await call('GET', '/api/workflows/templates', bob)).status).toBe(200);
  });

  it('refuses an undeclared input in a graph at the node and argument that use it', async () => {
    const res = await create({
      inputSchema: { type: 'object', properties: { name: { type: 'string' } } },
      graph: {
        nodes: [
          { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
          {
            id: 'a',
            type: 'tool',
            position: { x: 300, y: 0 },
            data: { tool: 'wait', arguments: { ms: 0, value: 'hi {{inputs.ghost}}' } },
          },
        ],
        edges: [{ id: 'e', source: 'start', target: 'a' }],
      },
    });
    expect(res.status).toBe(400);
    expect(issuesOf(res)).toEqual([['$.graph.nodes[1].data.arguments.value', 'unknown_input']]);
  });

  describe('refuses at save time, with the path', () => {
    const many = Array.from({ length: 65 }, (_, i) => ({ id: `s${i}`, tool: 'wait', arguments: { ms: 0 } }));
    const cases: Array<[string, unknown, string, string]> = [
      [
        'an undeclared input',
        { steps: [{ id: 'a', tool: 'wait', arguments: { ms: 0, value: '{{inputs.ghost}}' } }] },
        '$.steps[0].arguments.value',
        'unknown_input',
      ],
      ['more than 64 steps', { steps: many }, '$.steps', 'too_many_steps'],
      ['an unknown tool', { steps: [{ id: 'a', tool: 'nope' }] }, '$.steps[0].tool', 'unknown_tool'],
      [
        'a bad reference',
        { steps: [{ id: 'a', tool: 'wait', arguments: { ms: 0, value: '{{node.zz.result}}' } }] },
        '$.steps[0].arguments.value',
        'dangling_reference',
      ],
      [
        'a cycle',
        {
          steps: [
            { id: 'a', tool: 'wait', arguments: { ms: 0 }, dependsOn: ['b'] },
            { id: 'b', tool: 'wait', arguments: { ms: 0 }, dependsOn: ['a'] },
          ],
        },
        '$.steps[0].dependsOn',
        'cycle',
      ],
      [
        'a nested workflow',
        { steps: [{ id: 'a', tool: 'run_workflow_00000000-0000-4000-8000-000000000000' }] },
        '$.steps[0].tool',
        'invalid',
      ],
      [
        'a retry of a tool that is not retry-safe',
        {
          steps: [{ id: 'a', tool: 'execute_command', arguments: { command: 'ls' }, retry: { attempts: 2 } }],
        },
        '$.steps[0].retry',
        'retry_not_allowed',
      ],
      [
        'retry attempts outside 1-5',
        { steps: [{ id: 'a', tool: 'wait', arguments: { ms: 0 }, retry: { attempts: 6 } }] },
        '$.steps[0].retry.attempts',
        'invalid',
      ],
    ];
    it.each(cases)('%s', async (_, plan, path, code) => {
      const res = await create({ plan });
      expect(res.status).toBe(400);
      expect(issuesOf(res)).toContainEqual([path, code]);
    });
  });

  it('never executes a pinned step, and says it was pinned', async () => {
    const res = await create({
      inputSchema: { type: 'object', properties: {} },
      plan: {
        steps: [
          {
            id: 'p',
            tool: 'read_file',
            arguments: { filePath: join(workspace, 'missing.txt') },
            pinned: { result: { rows: 2 } },
          },
          {
            id: 'use',
            tool: 'wait',
            arguments: { ms: 0, value: '{{node.p.result.rows}}' },
            dependsOn: ['p'],
          },
        ],
      },
    });
    expect(res.status).toBe(201);
    const s = await runApproved(String(res.json['id']));
    expect((await s.next('complete')).data.data.result).toBe(2);
    expect(stepFrames(s.frames, 'step_start', 'p').map((f) => f.data.data)).toEqual([]);
    expect(stepFrames(s.frames, 'step_complete', 'p').map((f) => f.data.data)).toEqual([
      expect.objectContaining({ pinned: true, result: { rows: 2 } }),
    ]);
  });

  it('retries a retry-safe step until an attempt succeeds, the backoff in the events', async () => {
    const file = join(workspace, 'third-time.txt');
    const res = await create({
      inputSchema: { type: 'object', properties: {} },
      plan: {
        steps: [
          {
            id: 'read',
            tool: 'read_file',
            arguments: { filePath: file },
            // Up to 15 s of retries (1+2+4+8) for a write 2 s away: how many attempts it takes
            // depends on the machine, so only their order and backoff are checked.
            retry: { attempts: 5, backoffMs: 1_000 },
          },
          { id: 'pause', tool: 'wait', arguments: { ms: 2_000 } },
          {
            id: 'make',
            tool: 'write_file',
            arguments: { filePath: file, content: 'at last' },
            dependsOn: ['pause'],
          },
        ],
      },
    });
    expect(res.status).toBe(201);
    const s = await runApproved(String(res.json['id']));
    await s.next('complete');
    const retries = stepFrames(s.frames, 'step_retry', 'read')
      .map((f) => f.data.data)
      .map((e) => [e.attempt, e.code, e.delayMs]);
    expect(retries.length).toBeGreaterThanOrEqual(1); // the first read comes before the write
    expect(retries).toEqual(retries.map((_, i) => [i + 1, 'tool_failed', 1_000 * 2 ** i]));
    expect(stepFrames(s.frames, 'step_complete', 'read').map((f) => f.data.data)).toEqual([
      expect.objectContaining({ attempt: retries.length + 1, result: expect.stringContaining('at last') }),
    ]);
  });
});
