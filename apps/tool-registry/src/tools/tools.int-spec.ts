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
import { Events, Rpc, type ToolResult } from '@switchyard/contracts';
import { Bus } from '@switchyard/server-bus';
import type { RunningService } from '@switchyard/server-runtime';
import { createTestDatabase, testConfig, uniquePrefix, type TestDatabase } from '@switchyard/testing';
import { bootstrap } from '../bootstrap';

const textOf = (r: ToolResult) =>
  r.content.map((c) => (c.type === 'text' ? c.text : JSON.stringify(c.json))).join('\n');

/** The real tool-registry service over real NATS: catalog and invocation of the built-in tools. */
describe('registry tools over NATS', () => {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'sy-tools-')));
  let db: TestDatabase;
  let service: RunningService;
  let bus: Bus;

  beforeAll(async () => {
    db = await createTestDatabase();
    const prefix = uniquePrefix('reg');
    service = await bootstrap(
      testConfig('tool-registry', {
        DATABASE_URL: db.url,
        NATS_SUBJECT_PREFIX: prefix,
        WORKSPACE_DIR: ws,
        TOOL_OUTPUT_LIMIT_BYTES: '4096',
      }),
    );
    bus = await Bus.connect({
      servers: ['nats://127.0.0.1:4222'],
      name: 'tools-test',
      subjectPrefix: prefix,
      defaultTimeoutMs: 10_000,
    });
  });

  afterAll(async () => {
    await bus?.close();
    await service?.close();
    await db?.drop();
    rmSync(ws, { recursive: true, force: true });
  });

  const invoke = (tool: string, args: Record<string, unknown>, timeoutMs?: number) =>
    bus.call(
      Rpc.registry.invoke,
      { tool, arguments: args, ...(timeoutMs ? { timeoutMs } : {}) },
      { ctx: { correlationId: 'c', ownerId: 'o', role: 'user' } },
    );

  it('lists the built-in tools with JSON Schemas, effects and idempotency', async () => {
    const { tools } = await bus.call(Rpc.registry.catalog, {});
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
    expect(readFileSync(file, 'utf8')).toBe('héllo\n');
    const read = await invoke('read_file', { filePath: file });
    expect(textOf(read)).toMatch(/^héllo\n\n\n\[file: .*today\.md; size 7 bytes; modified /);
    await invoke('edit_file', { filePath: file, diff: 'replaced' });
    expect(readFileSync(file, 'utf8')).toBe('replaced');
    const listing = await invoke('list_directory', { filePath: ws, recursive: true, maxDepth: 2 });
    expect(textOf(listing)).toContain('dir   notes/');
    expect(textOf(listing)).toContain('file  notes/today.md (8 bytes)');
    const refused = await invoke('delete_file', { filePath: join(ws, 'notes') });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('recursive=true');
    expect((await invoke('delete_file', { filePath: join(ws, 'notes'), recursive: true })).isError).toBe(
      false,
    );
    expect(existsSync(join(ws, 'notes'))).toBe(false);
  });

  it('truncates read_file at 32 KiB and says so', async () => {
    const big = join(ws, 'big.txt');
    writeFileSync(big, 'a'.repeat(40_000));
    const r = await bus.call(Rpc.registry.invoke, { tool: 'read_file', arguments: { filePath: big } });
    expect(r.truncated).toBe(true);
  });

  it('caps any output at TOOL_OUTPUT_LIMIT_BYTES', async () => {
    mkdirSync(join(ws, 'many'), { recursive: true });
    for (let i = 0; i < 300; i++) writeFileSync(join(ws, 'many', `file-number-${i}.txt`), '');
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
    const started = Date.now();
    await expect(invoke('wait', { ms: 5_000 }, 200)).rejects.toMatchObject({ code: 'timeout' });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('cancels a running call when any caller publishes its invocation id', async () => {
    const started = Date.now();
    const running = bus.call(Rpc.registry.invoke, {
      tool: 'wait',
      arguments: { ms: 10_000 },
      invocationId: 'cancel-me-1',
    });
    await new Promise((r) => setTimeout(r, 200));
    bus.emit(Events.toolCancel, { invocationId: 'cancel-me-1' });
    const r = await running;
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe('wait was cancelled by the caller');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('returns the value of wait with its JSON type', async () => {
    const r = await invoke('wait', { ms: 5, value: { n: 1, list: [true] } });
    expect(r.content).toEqual([{ type: 'json', json: { n: 1, list: [true] } }]);
  });
});
