import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  api,
  createTestDatabase,
  Stack,
  uniquePrefix,
  waitFor,
  type ApiResponse,
  type TestDatabase,
} from '@switchyard/testing';

interface Execution {
  stepId: string;
  status: string;
  result?: unknown;
  error: string | null;
  arguments?: unknown;
}

const LIMIT = 4096;

/** Files end to end: uploads, grants on runs, @file: binding at dispatch, pickers and dropdowns. */
describe('files end to end', () => {
  let db: TestDatabase;
  let stack: Stack;
  let workspace: string;
  let filesDir: string;
  const admin = `e2e_${randomBytes(24).toString('base64url')}`;
  let alice: string;
  let bob: string;
  let aliceId: string;

  const call = (method: string, path: string, token: string, body?: unknown): Promise<ApiResponse> =>
    api(stack.gatewayUrl, method, path, { token, ...(body !== undefined ? { body } : {}) });

  const upload = async (token: string, name: string, body: string | Buffer, type = 'text/csv') => {
    const res = await fetch(`${stack.gatewayUrl}/api/files?name=${encodeURIComponent(name)}`, {
      method: 'POST',
      headers: { 'x-switchyard-token': token, 'content-type': type },
      body,
    });
    const text = await res.text();
    return { status: res.status, json: JSON.parse(text) as Record<string, unknown> };
  };

  /** Starts a run of a supplied plan that needs nobody, and waits for its end. */
  const runToEnd = async (token: string, body: Record<string, unknown>) => {
    const started = await call('POST', '/api/agent/run', token, {
      goal: 'files',
      config: { permissionMode: 'full-access', planApproval: false },
      ...body,
    });
    if (started.status !== 200) return { started, detail: undefined };
    const runId = started.json['runId'] as string;
    let detail: ApiResponse | undefined;
    await waitFor(async () => {
      detail = await call('GET', `/api/agent/runs/${runId}`, token);
      return ['completed', 'failed', 'cancelled'].includes(String(detail.json['status']));
    }, 60_000).catch((err: Error) => {
      throw new Error(`${err.message}; the run: ${detail?.text.slice(0, 3_000) ?? 'never read'}`);
    });
    return { started, detail: detail as ApiResponse, runId };
  };
  const execOf = (detail: ApiResponse, stepId: string) =>
    (detail.json['executions'] as Execution[]).find((e) => e.stepId === stepId) as Execution;

  beforeAll(async () => {
    db = await createTestDatabase();
    workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sy-files-ws-')));
    filesDir = realpathSync(mkdtempSync(join(tmpdir(), 'sy-files-')));
    stack = await Stack.start({
      DATABASE_URL: db.url,
      NATS_SUBJECT_PREFIX: uniquePrefix('files'),
      SWITCHYARD_ADMIN_TOKEN: admin,
      LOG_LEVEL: 'warn',
      SHUTDOWN_GRACE_MS: '3000',
      WORKSPACE_DIR: workspace,
      FILES_DIR: filesDir,
      FILE_UPLOAD_LIMIT_BYTES: String(LIMIT),
    });
    const token = async (owner: string) =>
      (await call('POST', '/api/tokens', admin, { owner, role: 'user' })).json['token'] as string;
    alice = await token('alice');
    bob = await token('bob');
    aliceId = ((await call('GET', '/api/me', alice)).json['owner'] as { id: string }).id;
  });

  afterAll(async () => {
    await stack?.stop();
    await db?.drop();
    rmSync(workspace, { recursive: true, force: true });
    rmSync(filesDir, { recursive: true, force: true });
  });

  describe('the files API', () => {
    it('uploads raw bytes, lists, describes and downloads them; the name is sanitised', async () => {
      const up = await upload(alice, '../regions.csv', 'region,n\nnorth,1\n');
      expect(up.status).toBe(201);
      expect(up.json).toMatchObject({ name: '_regions.csv', contentType: 'text/csv', size: 17 });
      const id = up.json['id'] as string;
      expect((await call('GET', `/api/files/${id}`, alice)).json).toEqual(up.json);
      const list = await call('GET', '/api/files', alice);
      expect((list.json['items'] as Array<{ id: string }>).map((f) => f.id)).toContain(id);
      const content = await fetch(`${stack.gatewayUrl}/api/files/${id}/content`, {
        headers: { 'x-switchyard-token': alice },
      });
      expect(content.status).toBe(200);
      expect(await content.text()).toBe('region,n\nnorth,1\n');
      expect(content.headers.get('content-disposition')).toMatch(/^attachment; filename="_regions.csv"/);
      expect(content.headers.get('x-content-type-options')).toBe('nosniff');
    });

    it('stores a JSON upload as bytes (the JSON body parser stays off uploads)', async () => {
      const up = await upload(alice, 'data.json', '{"a":1}', 'application/json');
      expect(up.status).toBe(201);
      expect(up.json).toMatchObject({ size: 7, contentType: 'application/json' });
    });

    it('refuses an upload over FILE_UPLOAD_LIMIT_BYTES with 413, and keeps nothing of it', async () => {
      const res = await upload(alice, 'big.bin', Buffer.alloc(LIMIT + 1), 'application/octet-stream');
      expect(res.status).toBe(413);
      expect(res.json['code']).toBe('payload_too_large');
      const incoming = join(filesDir, 'incoming');
      await waitFor(async () => !existsSync(incoming) || readdirSync(incoming).length === 0, 60_000);
      // Just at the limit is fine.
      expect((await upload(alice, 'edge.bin', Buffer.alloc(LIMIT), 'application/octet-stream')).status).toBe(
        201,
      );
    });

    it('refuses an upload without a name', async () => {
      const res = await fetch(`${stack.gatewayUrl}/api/files`, {
        method: 'POST',
        headers: { 'x-switchyard-token': alice },
        body: 'x',
      });
      expect(res.status).toBe(400);
    });

    it("answers another owner's file id as 404 everywhere", async () => {
      const id = (await upload(alice, 'mine.csv', 'x')).json['id'] as string;
      expect((await call('GET', `/api/files/${id}`, bob)).status).toBe(404);
      expect((await call('GET', `/api/files/${id}/content`, bob)).status).toBe(404);
      expect((await call('DELETE', `/api/files/${id}`, bob)).status).toBe(404);
      const { started } = await runToEnd(bob, {
        workflow: { steps: [{ id: 'e', tool: 'wait', arguments: { ms: 0, value: '@file:in' } }] },
        files: [{ name: 'in', refs: [id] }],
      });
      expect(started.status).toBe(404);
      expect((await call('GET', `/api/files/${id}`, alice)).status).toBe(200);
    });
  });

  describe('grants on runs', () => {
    it('binds @file: at dispatch; a shared directory written by one step is read by the next', async () => {
      const book = (await upload(alice, 'q3.csv', 'north,1\n')).json['id'] as string;
      const { started, detail, runId } = await runToEnd(alice, {
        workflow: {
          steps: [
            {
              id: 'write',
              tool: 'write_file',
              arguments: { filePath: '@file:out/part.csv', content: 'from step 1' },
            },
            {
              id: 'read',
              tool: 'read_file',
              arguments: { filePath: '@file:out/part.csv' },
              dependsOn: ['write'],
            },
            {
              id: 'echo',
              tool: 'wait',
              arguments: { ms: 0, value: { book: '@file:book', say: 'see @file:out' } },
            },
          ],
        },
        files: [
          { name: 'book', refs: [book] },
          { name: 'out', createSharedDirectory: true },
        ],
      });
      expect(started.status).toBe(200);
      const d = detail as ApiResponse;
      expect(d.json['status']).toBe('completed');
      expect(String(execOf(d, 'read').result)).toContain('from step 1');
      const runDir = join(workspace, '.switchyard', 'runs', runId as string);
      expect(execOf(d, 'echo').result).toEqual({
        book: join(runDir, 'book', 'q3.csv'),
        say: `see ${join(runDir, 'out')}`,
      });
      // The log shows the placeholders, not paths; the detail shows names and kinds, no host paths.
      expect(execOf(d, 'write').arguments).toEqual({
        filePath: '@file:out/part.csv',
        content: 'from step 1',
      });
      expect(d.json['files']).toEqual([
        { name: 'book', kind: 'refs', files: ['q3.csv'], directory: false, writable: false },
        { name: 'out', kind: 'shared', files: [], directory: true, writable: true },
      ]);
      expect(
        readFileSync(
          join(workspace, 'owners', aliceId, '.switchyard', 'runs', runId as string, 'out', 'part.csv'),
          'utf8',
        ),
      ).toBe('from step 1');

      // A fork gets copies: the shared directory with what the source wrote, in a directory of its own.
      const fork = await call('POST', `/api/agent/runs/${runId as string}/fork`, alice);
      expect(fork.status).toBe(200);
      const forkId = fork.json['runId'] as string;
      const forkOut = join(workspace, 'owners', aliceId, '.switchyard', 'runs', forkId, 'out', 'part.csv');
      expect(readFileSync(forkOut, 'utf8')).toBe('from step 1');
      await call('POST', `/api/agent/${forkId}/cancel`, alice);
    });

    it('refuses a step whose tool cannot see files (file_not_granted), and an unknown grant name', async () => {
      const wf = await call('POST', '/api/workflows', alice, {
        name: 'inner',
        inputSchema: { type: 'object', properties: { p: { type: 'string' } } },
        plan: { steps: [{ id: 'e', tool: 'wait', arguments: { ms: 0, value: '{{inputs.p}}' } }] },
      });
      await call('POST', `/api/workflows/${String(wf.json['id'])}/publish`, alice, { revision: 1 });
      const tool = (await call('GET', `/api/workflows/${String(wf.json['id'])}`, alice)).json[
        'tool'
      ] as string;
      const { detail } = await runToEnd(alice, {
        workflow: { steps: [{ id: 'nested', tool, arguments: { p: '@file:out' } }] },
        files: [{ name: 'out', createSharedDirectory: true }],
      });
      const nested = execOf(detail as ApiResponse, 'nested');
      expect(nested.status).toBe('failed');
      expect(nested.error).toMatch(/^file_not_granted: run_workflow_.* cannot see the run's files/);

      const { detail: unknown } = await runToEnd(alice, {
        workflow: { steps: [{ id: 'e', tool: 'wait', arguments: { ms: 0, value: '@file:nope' } }] },
        files: [{ name: 'out', createSharedDirectory: true }],
      });
      expect(execOf(unknown as ApiResponse, 'e').error).toMatch(/no file grant named "nope"/);
    });

    it('refuses a native path outside the workspace (validation_failed, path_outside_workspace), and grants one inside', async () => {
      for (const nativePath of ['../../etc/passwd', '/etc/passwd']) {
        const { started } = await runToEnd(alice, {
          workflow: { steps: [{ id: 'e', tool: 'wait', arguments: { ms: 0, value: '@file:src' } }] },
          files: [{ name: 'src', nativePath }],
        });
        expect(started.status).toBe(400);
        expect(started.json).toMatchObject({
          code: 'validation_failed',
          details: { reason: 'path_outside_workspace' },
        });
      }
      mkdirSync(join(workspace, 'owners', aliceId, 'data'), { recursive: true });
      writeFileSync(join(workspace, 'owners', aliceId, 'data', 'in.csv'), 'x');
      const { detail } = await runToEnd(alice, {
        workflow: { steps: [{ id: 'e', tool: 'read_file', arguments: { filePath: '@file:src' } }] },
        files: [{ name: 'src', nativePath: 'data/in.csv' }],
      });
      expect((detail as ApiResponse).json['status']).toBe('completed');
    });

    it('still takes the old list of workspace paths as inputs.files', async () => {
      const { detail } = await runToEnd(alice, {
        workflow: { steps: [{ id: 'e', tool: 'wait', arguments: { ms: 0, value: '{{inputs.files}}' } }] },
        files: ['a.txt', 'b.txt'],
      });
      expect(execOf(detail as ApiResponse, 'e').result).toEqual(['a.txt', 'b.txt']);
    });
  });

  describe('workflow inputs', () => {
    let workflowId: string;
    beforeAll(async () => {
      const wf = await call('POST', '/api/workflows', alice, {
        name: 'split',
        inputSchema: {
          type: 'object',
          properties: {
            book: { type: 'string', format: 'switchyard-file' },
            out: { type: 'string', 'x-switchyard-auto': 'shared-directory' },
            account: {
              type: 'string',
              'x-switchyard-enum': {
                tool: 'wait',
                arguments: {
                  ms: 0,
                  value: [
                    { id: 'a1', email: 'alice@example.com' },
                    { id: 'a2', email: 'bob@example.com' },
                  ],
                },
                valueField: 'id',
                labelField: 'email',
              },
            },
            bad: { type: 'string', 'x-switchyard-enum': { tool: 'write_file' } },
          },
          required: ['book', 'out'],
        },
        plan: {
          steps: [
            { id: 'read', tool: 'read_file', arguments: { filePath: '{{inputs.book}}' } },
            { id: 'dir', tool: 'wait', arguments: { ms: 0, value: '{{inputs.out}}' } },
          ],
        },
      });
      expect(wf.status).toBe(201);
      workflowId = wf.json['id'] as string;
    });

    const runWorkflow = async (body: Record<string, unknown>) => {
      const res = await call('POST', `/api/workflows/${workflowId}/run`, alice, {
        permissionMode: 'full-access',
        planApproval: false,
        ...body,
      });
      if (res.status !== 200) return { res, detail: undefined };
      let detail: ApiResponse | undefined;
      await waitFor(async () => {
        detail = await call('GET', `/api/agent/runs/${String(res.json['runId'])}`, alice);
        return ['completed', 'failed'].includes(String(detail.json['status']));
      }, 60_000);
      return { res, detail: detail as ApiResponse };
    };

    it('fills a file input from its grant and gives a shared-directory input its own directory', async () => {
      const book = (await upload(alice, 'book.csv', 'hello book')).json['id'] as string;
      const { res, detail } = await runWorkflow({
        inputs: { account: 'a1' },
        files: [{ name: 'book', refs: [book] }],
      });
      expect(res.status).toBe(200);
      expect(detail?.json['status']).toBe('completed');
      expect(String(execOf(detail as ApiResponse, 'read').result)).toContain('hello book');
      expect(execOf(detail as ApiResponse, 'dir').result).toBe(
        join(workspace, '.switchyard', 'runs', String(res.json['runId']), 'out'),
      );
    });

    it('refuses a start without the picked file, and a typed value for a run-filled input', async () => {
      const missing = await runWorkflow({});
      expect(missing.res.status).toBe(400);
      expect(JSON.stringify(missing.res.json)).toContain('inputs.book');
      const typed = await runWorkflow({ inputs: { out: '/etc' } });
      expect(typed.res.status).toBe(400);
      expect(JSON.stringify(typed.res.json)).toContain('inputs.out');
    });

    it('lists an enum input’s choices from its read tool, and refuses a list tool that is not a read', async () => {
      const options = await call('GET', `/api/workflows/${workflowId}/inputs/account/options`, alice);
      expect(options.status).toBe(200);
      expect(options.json).toEqual({
        items: [
          { value: 'a1', label: 'alice@example.com' },
          { value: 'a2', label: 'bob@example.com' },
        ],
      });
      expect((await call('GET', `/api/workflows/${workflowId}/inputs/bad/options`, alice)).status).toBe(403);
      expect((await call('GET', `/api/workflows/${workflowId}/inputs/region/options`, alice)).status).toBe(
        404,
      );
      expect((await call('GET', `/api/workflows/${workflowId}/inputs/account/options`, bob)).status).toBe(
        404,
      );
    });

    it('reads the list tool from the version being run: a published one by ?version=, refused when unknown', async () => {
      const wf = await call('GET', `/api/workflows/${workflowId}`, alice);
      const published = await call('POST', `/api/workflows/${workflowId}/publish`, alice, {
        revision: wf.json['revision'],
      });
      expect(published.status).toBe(200);
      const version = published.json['publishedVersion'] as number;
      const options = await call(
        'GET',
        `/api/workflows/${workflowId}/inputs/account/options?version=${version}`,
        alice,
      );
      expect([options.status, (options.json['items'] as unknown[]).length]).toEqual([200, 2]);
      const unknown = await call(
        'GET',
        `/api/workflows/${workflowId}/inputs/account/options?version=${version + 5}`,
        alice,
      );
      expect(unknown.status).toBe(404);
      const bad = await call(
        'GET',
        `/api/workflows/${workflowId}/inputs/account/options?version=latest`,
        alice,
      );
      expect([bad.status, bad.json['code']]).toEqual([400, 'validation_failed']);
    });
  });
});
