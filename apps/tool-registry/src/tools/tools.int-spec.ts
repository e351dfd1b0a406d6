import {
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  existsSync,
  mkdirSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { Events, Rpc, type ToolResult } from '@switchyard/contracts';
import { resultValue } from '@switchyard/plan';
import { Bus } from '@switchyard/server-bus';
import type { RunningService } from '@switchyard/server-runtime';
import { createTestDatabase, testConfig, uniquePrefix, type TestDatabase } from '@switchyard/testing';
import { bootstrap } from '../bootstrap';

const textOf = (r: ToolResult) =>
  r.content.map((c) => (c.type === 'text' ? c.text : JSON.stringify(c.json))).join('\n');

/** A real tool-registry service with its own database, workspace and subject prefix, and a bus to it. */
function registryUnderTest(label: string, env: (ws: string) => Record<string, string>) {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), `sy-${label}-`)));
  const handle = { ws } as { ws: string; db: TestDatabase; service: RunningService; bus: Bus };
  beforeAll(async () => {
    handle.db = await createTestDatabase();
    const prefix = uniquePrefix('reg');
    handle.service = await bootstrap(
      testConfig('tool-registry', {
        DATABASE_URL: handle.db.url,
        NATS_SUBJECT_PREFIX: prefix,
        WORKSPACE_DIR: ws,
        ...env(ws),
      }),
    );
    handle.bus = await Bus.connect({
      servers: ['nats://127.0.0.1:4222'],
      name: 'tools-test',
      subjectPrefix: prefix,
      defaultTimeoutMs: 10_000,
    });
  });
  afterAll(async () => {
    await handle.bus?.close();
    await handle.service?.close();
    await handle.db?.drop();
    rmSync(ws, { recursive: true, force: true });
  });
  return handle;
}

/** The real tool-registry service over real NATS: catalog and invocation of the built-in tools. */
describe('registry tools over NATS', () => {
  const registry = registryUnderTest('tools', () => ({ TOOL_OUTPUT_LIMIT_BYTES: '4096' }));
  const ws = registry.ws;
  const OWNER = '0a0a0a0a-0000-4000-8000-00000000000a';
  const OTHER = '0b0b0b0b-0000-4000-8000-00000000000b';
  /** Where the caller's files really are: their own area. */
  const area = join(ws, 'owners', OWNER);

  const invoke = (tool: string, args: Record<string, unknown>, timeoutMs?: number, ownerId = OWNER) =>
    registry.bus.call(
      Rpc.registry.invoke,
      { tool, arguments: args, ...(timeoutMs ? { timeoutMs } : {}) },
      { ctx: { correlationId: 'c', ownerId, role: 'user' } },
    );
  /** The same call as another owner; errors come back as values to compare. */
  const asOther = (tool: string, args: Record<string, unknown>) =>
    invoke(tool, args, undefined, OTHER).then(
      (r) => ({ result: textOf(r), isError: r.isError }),
      (e: { code: string; message: string }) => ({ error: e.code, message: e.message }),
    );

  it('lists the built-in tools with JSON Schemas, effects and idempotency', async () => {
    const { tools } = await registry.bus.call(Rpc.registry.catalog, {});
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual(
      [
        'delete_file',
        'edit_file',
        'execute_command',
        'execute_sql_query',
        'list_directory',
        'query_all_tables',
        'query_table_schema',
        'read_file',
        'task_capacity',
        'task_kill',
        'task_list',
        'task_output',
        'task_schedule',
        'task_submit_workflow',
        'task_wait',
        'wait',
        'web_fetch',
        'write_file',
      ].sort(),
    );
    expect(byName['read_file']).toMatchObject({ effect: 'read', idempotent: true, source: 'builtin' });
    expect(byName['task_submit_workflow']).toMatchObject({ effect: 'external', idempotent: false });
    expect(byName['task_output']).toMatchObject({ effect: 'read', idempotent: true });
    expect(byName['task_wait']?.inputSchema).toMatchObject({
      properties: { taskIds: { type: 'array', maxItems: 20 }, mode: { enum: ['any', 'all'] } },
    });
    expect(byName['execute_command']).toMatchObject({ effect: 'external', idempotent: false });
    expect(byName['write_file']?.inputSchema).toMatchObject({
      type: 'object',
      properties: { filePath: { type: 'string' }, content: { type: 'string' } },
      required: ['filePath', 'content'],
      additionalProperties: false,
    });
  });

  it('writes, reads, edits, lists and deletes files in the workspace', async () => {
    const file = join(ws, 'notes', 'today.md');
    expect((await invoke('write_file', { filePath: file, content: 'héllo\n' })).isError).toBe(false);
    expect(readFileSync(join(area, 'notes', 'today.md'), 'utf8')).toBe('héllo\n');
    const read = await invoke('read_file', { filePath: file });
    expect(textOf(read)).toMatch(/^héllo\n\n\n\[file: .*today\.md; size 7 bytes; modified /);
    await invoke('edit_file', { filePath: file, diff: 'replaced' });
    expect(readFileSync(join(area, 'notes', 'today.md'), 'utf8')).toBe('replaced');
    const listing = await invoke('list_directory', { filePath: ws, recursive: true, maxDepth: 2 });
    expect(textOf(listing)).toContain('dir   notes/');
    expect(textOf(listing)).toContain('file  notes/today.md (8 bytes)');
    const refused = await invoke('delete_file', { filePath: join(ws, 'notes') });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('recursive=true');
    expect((await invoke('delete_file', { filePath: join(ws, 'notes'), recursive: true })).isError).toBe(
      false,
    );
    expect(existsSync(join(area, 'notes'))).toBe(false);
  });

  it('keeps owners apart: another owner cannot read, list, edit, delete or learn of a file', async () => {
    const secret = join(ws, 'plans', 'secret.txt');
    await invoke('write_file', { filePath: secret, content: 'for my eyes only' });
    // Every spelling of the path, compared with a path that exists for nobody.
    for (const spelling of [secret, 'plans/secret.txt', join(ws, 'owners', OWNER, 'plans', 'secret.txt')]) {
      const missing = spelling.replace('secret.txt', 'never-existed.txt');
      const same = async (tool: string, extra: Record<string, unknown> = {}) => {
        const theirs = await asOther(tool, { filePath: spelling, ...extra });
        const nothing = await asOther(tool, { filePath: missing, ...extra });
        expect(JSON.stringify(theirs).replaceAll('secret.txt', 'X')).toBe(
          JSON.stringify(nothing).replaceAll('never-existed.txt', 'X'),
        );
        expect(JSON.stringify(theirs)).not.toContain('for my eyes only');
      };
      await same('read_file');
      await same('edit_file', { diff: 'overwritten' });
      await same('delete_file');
      await same('list_directory');
    }
    const listing = await asOther('list_directory', { filePath: ws, recursive: true, maxDepth: 10 });
    expect(JSON.stringify(listing)).not.toMatch(/plans|secret/);
    // Writing "the same" path makes the other owner's own file; the first owner's is untouched.
    await invoke('write_file', { filePath: secret, content: 'mine' }, undefined, OTHER);
    expect(readFileSync(join(area, 'plans', 'secret.txt'), 'utf8')).toBe('for my eyes only');
    expect(readFileSync(join(ws, 'owners', OTHER, 'plans', 'secret.txt'), 'utf8')).toBe('mine');
    expect(textOf(await invoke('read_file', { filePath: secret }))).toContain('for my eyes only');
  });

  it('truncates read_file at 32 KiB and says so', async () => {
    mkdirSync(area, { recursive: true });
    writeFileSync(join(area, 'big.txt'), 'a'.repeat(40_000));
    const r = await invoke('read_file', { filePath: join(ws, 'big.txt') });
    expect(r.truncated).toBe(true);
  });

  it('caps any output at TOOL_OUTPUT_LIMIT_BYTES', async () => {
    mkdirSync(join(area, 'many'), { recursive: true });
    for (let i = 0; i < 300; i++) writeFileSync(join(area, 'many', `file-number-${i}.txt`), '');
    const r = await invoke('list_directory', { filePath: join(ws, 'many') });
    expect(r.truncated).toBe(true);
    expect(Buffer.byteLength(textOf(r))).toBeLessThan(4096 + 100);
    expect(textOf(r)).toContain('[output cut at 4096 bytes]');
  });

  it('lists every bad argument with its path', async () => {
    await expect(invoke('list_directory', { filePath: 7, maxDepth: 11, extra: true })).rejects.toMatchObject({
      code: 'validation_failed',
      issues: expect.arrayContaining([
        expect.objectContaining({ path: 'arguments.filePath' }),
        expect.objectContaining({ path: 'arguments.maxDepth' }),
        expect.objectContaining({ path: 'arguments' }),
      ]),
    });
  });

  it('refuses paths outside the workspace with a clear forbidden error', async () => {
    await expect(invoke('read_file', { filePath: '/etc/passwd' })).rejects.toMatchObject({
      code: 'forbidden',
      message: expect.stringContaining('outside the workspace'),
    });
    await expect(invoke('write_file', { filePath: `${ws}/../evil.txt`, content: 'x' })).rejects.toMatchObject(
      { code: 'forbidden' },
    );
    expect(existsSync(join(ws, '..', 'evil.txt'))).toBe(false);
  });

  it('answers an unknown tool with not_found', async () => {
    await expect(invoke('format_disk', {})).rejects.toMatchObject({ code: 'not_found' });
  });

  it('stops a call at its deadline', async () => {
    await expect(invoke('wait', { ms: 30_000 }, 200)).rejects.toMatchObject({ code: 'timeout' });
  });

  it('cancels a running call when any caller publishes its invocation id', async () => {
    const running = registry.bus.call(Rpc.registry.invoke, {
      tool: 'wait',
      arguments: { ms: 60_000 },
      invocationId: 'cancel-me-1',
    });
    // The call may not have reached the registry yet on a busy machine: say it until it is heard.
    let settled = false;
    void running.finally(() => (settled = true));
    while (!settled) {
      registry.bus.emit(Events.toolCancel, { invocationId: 'cancel-me-1' });
      await new Promise((r) => setTimeout(r, 100));
    }
    const r = await running;
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe('wait was cancelled by the caller');
  });

  it('declares an output schema for every built-in that the values of real calls fit', async () => {
    const { tools } = await registry.bus.call(Rpc.registry.catalog, {});
    const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
    const schemas = new Map(tools.map((t) => [t.name, t.outputSchema]));
    // Every built-in says what its value is, and the schema compiles.
    for (const t of tools) {
      expect({ tool: t.name, declared: t.outputSchema !== undefined }).toEqual({
        tool: t.name,
        declared: true,
      });
      ajv.compile(t.outputSchema ?? {});
    }
    expect(schemas.get('task_output')).toMatchObject({
      type: 'object',
      properties: { id: { type: 'string' }, state: expect.any(Object) },
    });
    expect(schemas.get('read_file')).toMatchObject({ type: 'string', examples: [expect.any(String)] });

    const file = join(ws, 'schemas', 'a.txt');
    const calls: Array<[string, Record<string, unknown>]> = [
      ['write_file', { filePath: file, content: 'one' }],
      ['read_file', { filePath: file }],
      ['edit_file', { filePath: file, diff: 'two' }],
      ['list_directory', { filePath: join(ws, 'schemas') }],
      ['execute_command', { command: 'ls' }],
      ['wait', { ms: 0, value: { n: [1] } }],
      ['delete_file', { filePath: join(ws, 'schemas'), recursive: true }],
    ];
    for (const [tool, args] of calls) {
      const result = await invoke(tool, args);
      expect({ tool, isError: result.isError }).toEqual({ tool, isError: false });
      const validate = ajv.compile(schemas.get(tool) ?? {});
      const value = resultValue(result);
      expect({ tool, value, valid: validate(value), errors: validate.errors ?? null }).toEqual({
        tool,
        value,
        valid: true,
        errors: null,
      });
    }
    // The schema does say something: a value of another type is refused.
    expect(ajv.compile(schemas.get('read_file') ?? {})({ not: 'text' })).toBe(false);
  });

  it('returns the value of wait with its JSON type', async () => {
    const r = await invoke('wait', { ms: 5, value: { n: 1, list: [true] } });
    expect(r.content).toEqual([{ type: 'json', json: { n: 1, list: [true] } }]);
  });

  it('reports the command sandbox in its health', async () => {
    const h = await registry.bus.call(Rpc.health['tool-registry'], {});
    expect(h.features?.['commandSandbox']).toMatchObject({ status: 'available' });
  });
});

/** The same service on a host that cannot sandbox (simulated: no bwrap where configured). */
describe('registry tools without a command sandbox', () => {
  const registry = registryUnderTest('nosbx', (ws) => ({
    COMMAND_SANDBOX_BIN: join(ws, 'bwrap-is-not-here'),
    LOG_LEVEL: 'error', // its warning about the missing sandbox is expected here
  }));

  it('refuses execute_command to users with the reason and how to enable it; health says so', async () => {
    await expect(
      registry.bus.call(
        Rpc.registry.invoke,
        { tool: 'execute_command', arguments: { command: 'ls' } },
        { ctx: { correlationId: 'c', ownerId: '0c0c0c0c-0000-4000-8000-00000000000c', role: 'user' } },
      ),
    ).rejects.toMatchObject({
      code: 'forbidden',
      message: expect.stringMatching(/^execute_command is unavailable: .*install bubblewrap/),
    });
    const h = await registry.bus.call(Rpc.health['tool-registry'], {});
    expect(h.status).toBe('up');
    expect(h.features?.['commandSandbox']).toMatchObject({
      status: 'unavailable',
      detail: expect.stringContaining('bubblewrap is not installed'),
    });
  });
});
