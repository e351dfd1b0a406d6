import { createHash, randomUUID } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rpc, type ResolvedGrant, type ToolResult } from '@switchyard/contracts';
import { Bus } from '@switchyard/server-bus';
import { stagedUploadPath } from '@switchyard/server-config';
import { createPrisma, type PrismaClient } from '@switchyard/server-db';
import { IdentityRepository } from '@switchyard/server-db-identity';
import type { CallContext } from '@switchyard/server-observability';
import type { RunningService } from '@switchyard/server-runtime';
import { createTestDatabase, testConfig, uniquePrefix, type TestDatabase } from '@switchyard/testing';
import { bootstrap } from '../bootstrap';
import { FilesService } from './files.service';
import { pluginFileAccess } from './plugin-files';

const textOf = (r: ToolResult) =>
  r.content.map((c) => (c.type === 'text' ? c.text : JSON.stringify(c.json))).join('\n');

/** Files and run grants in the real registry: real Postgres, real disk, over real NATS. */
describe('registry files', () => {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'sy-files-ws-')));
  const filesDir = realpathSync(mkdtempSync(join(tmpdir(), 'sy-files-')));
  const outside = realpathSync(mkdtempSync(join(tmpdir(), 'sy-files-outside-')));
  let db: TestDatabase;
  let prisma: PrismaClient;
  let service: RunningService;
  let bus: Bus;
  let alice: CallContext;
  let bob: CallContext;
  const LIMIT = 64 * 1024;

  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrisma({ url: db.url, poolSize: 2, applicationName: 'test' });
    const identity = new IdentityRepository(prisma);
    const owner = async (name: string): Promise<CallContext> => ({
      correlationId: randomUUID(),
      ownerId: (await identity.ensureOwner(name, 'user')).owner.id,
      role: 'user',
    });
    alice = await owner('alice');
    bob = await owner('bob');
    const prefix = uniquePrefix('files');
    service = await bootstrap(
      testConfig('tool-registry', {
        DATABASE_URL: db.url,
        NATS_SUBJECT_PREFIX: prefix,
        WORKSPACE_DIR: ws,
        FILES_DIR: filesDir,
        FILE_UPLOAD_LIMIT_BYTES: String(LIMIT),
        FILE_QUOTA_BYTES: String(3 * LIMIT),
      }),
    );
    bus = await Bus.connect({
      servers: ['nats://127.0.0.1:4222'],
      name: 'files-test',
      subjectPrefix: prefix,
      defaultTimeoutMs: 10_000,
    });
  });

  afterAll(async () => {
    await bus?.close();
    await service?.close();
    await prisma?.$disconnect();
    await db?.drop();
    for (const d of [ws, filesDir, outside]) rmSync(d, { recursive: true, force: true });
  });

  type Refusal = { code: string; message: string; details?: Record<string, unknown> };
  const err = (p: Promise<unknown>): Promise<Refusal> =>
    p.then(
      (): Refusal => ({ code: 'none', message: '' }),
      (e: { code: string; message: string; details?: Record<string, unknown> }) => e,
    );

  /** What the gateway does before adopting: the bytes in FILES_DIR/incoming. */
  async function upload(caller: CallContext, name: string, body: string | Buffer) {
    const stagedId = randomUUID();
    const path = stagedUploadPath(filesDir, stagedId);
    mkdirSync(join(filesDir, 'incoming'), { recursive: true });
    writeFileSync(path, body);
    const bytes = Buffer.from(body);
    return bus.call(
      Rpc.registry.fileAdopt,
      {
        stagedId,
        name,
        contentType: 'text/csv',
        size: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
      },
      { ctx: caller },
    );
  }

  const grant = (caller: CallContext, grants: unknown[], runId = randomUUID(), copyFrom?: string) =>
    bus
      .call(
        Rpc.registry.fileGrant,
        { runId, grants: grants as never, ...(copyFrom ? { copyFrom } : {}) },
        { ctx: caller },
      )
      .then((r) => ({ runId, grants: r.grants }));

  describe('uploads', () => {
    it('adopts a staged upload as the owner’s file, with a sanitised name, and lists it', async () => {
      const file = await upload(alice, '../../etc/regions.csv', 'region,n\nnorth,1\n');
      expect(file).toMatchObject({ name: '_.._etc_regions.csv', contentType: 'text/csv', size: 17 });
      expect(existsSync(join(filesDir, 'blobs', alice.ownerId as string, file.id))).toBe(true);
      const page = await bus.call(Rpc.registry.fileList, { limit: 50 }, { ctx: alice });
      expect(page.items.map((f) => f.id)).toContain(file.id);
      expect(await bus.call(Rpc.registry.fileGet, { id: file.id }, { ctx: alice })).toEqual(file);
    });

    it('pages newest first with a cursor', async () => {
      const fresh = {
        ...alice,
        ownerId: (await new IdentityRepository(prisma).ensureOwner('pager', 'user')).owner.id,
      };
      const ids = [];
      for (const n of [1, 2, 3]) ids.push((await upload(fresh, `f${n}.txt`, `${n}`)).id);
      const first = await bus.call(Rpc.registry.fileList, { limit: 2 }, { ctx: fresh });
      expect(first.items).toHaveLength(2);
      const rest = await bus.call(
        Rpc.registry.fileList,
        { limit: 2, cursor: first.nextCursor as string },
        { ctx: fresh },
      );
      expect([...first.items, ...rest.items].map((f) => f.id).sort()).toEqual([...ids].sort());
      expect(rest.nextCursor).toBeNull();
    });

    it("answers another owner's file as not found, for get, delete and as a run ref", async () => {
      const file = await upload(alice, 'secret.csv', 'x');
      expect((await err(bus.call(Rpc.registry.fileGet, { id: file.id }, { ctx: bob }))).code).toBe(
        'not_found',
      );
      expect((await err(bus.call(Rpc.registry.fileDelete, { id: file.id }, { ctx: bob }))).code).toBe(
        'not_found',
      );
      expect((await err(grant(bob, [{ name: 'in', refs: [file.id] }]))).code).toBe('not_found');
      expect((await err(grant(alice, [{ name: 'in', refs: [randomUUID()] }]))).code).toBe('not_found');
      // Still Alice's, untouched.
      expect((await bus.call(Rpc.registry.fileGet, { id: file.id }, { ctx: alice })).id).toBe(file.id);
    });

    it('refuses an upload over the limit and past the quota with payload_too_large', async () => {
      expect((await err(upload(alice, 'big.bin', Buffer.alloc(LIMIT + 1)))).code).toBe('payload_too_large');
      const quota = {
        ...alice,
        ownerId: (await new IdentityRepository(prisma).ensureOwner('quota', 'user')).owner.id,
      };
      for (let i = 0; i < 3; i++) await upload(quota, `q${i}.bin`, Buffer.alloc(LIMIT));
      const over = await err(upload(quota, 'q3.bin', Buffer.alloc(1)));
      expect(over.code).toBe('payload_too_large');
      expect(over.message).toMatch(/quota/);
    });

    it('refuses to adopt a staged upload that is not there (no path from the caller is used)', async () => {
      const res = await err(
        bus.call(
          Rpc.registry.fileAdopt,
          { stagedId: randomUUID(), name: 'x', contentType: 'text/plain', size: 1, sha256: 'a'.repeat(64) },
          { ctx: alice },
        ),
      );
      expect(res.code).toBe('validation_failed');
    });

    it('deletes a file: row and bytes', async () => {
      const file = await upload(alice, 'gone.txt', 'bye');
      await bus.call(Rpc.registry.fileDelete, { id: file.id }, { ctx: alice });
      expect(existsSync(join(filesDir, 'blobs', alice.ownerId as string, file.id))).toBe(false);
      expect((await err(bus.call(Rpc.registry.fileGet, { id: file.id }, { ctx: alice }))).code).toBe(
        'not_found',
      );
    });
  });

  describe('run grants', () => {
    const area = () => join(ws, 'owners', alice.ownerId as string);
    const byName = (gs: ResolvedGrant[]) => Object.fromEntries(gs.map((g) => [g.name, g]));

    it('copies uploads into the run’s directory in the workspace and makes shared directories', async () => {
      const a = await upload(alice, 'north.csv', 'n');
      const b = await upload(alice, 'south.csv', 's');
      const { runId, grants } = await grant(alice, [
        { name: 'book', refs: [a.id] },
        { name: 'parts', refs: [a.id, b.id] },
        { name: 'out', createSharedDirectory: true },
      ]);
      const g = byName(grants);
      const runDir = join(area(), '.switchyard', 'runs', runId);
      expect(g['book']).toMatchObject({
        kind: 'refs',
        hostPath: join(runDir, 'book'),
        viewPath: join(ws, '.switchyard', 'runs', runId, 'book'),
        files: ['north.csv'],
        directory: false,
        writable: false,
      });
      expect(readFileSync(join(runDir, 'book', 'north.csv'), 'utf8')).toBe('n');
      expect(g['parts']?.files).toEqual(['north.csv', 'south.csv']);
      expect(g['out']).toMatchObject({ kind: 'shared', directory: true, writable: true, files: [] });
      // A copy, not a link: writing the grant's file does not change the upload.
      writeFileSync(join(runDir, 'book', 'north.csv'), 'changed');
      expect(readFileSync(join(filesDir, 'blobs', alice.ownerId as string, a.id), 'utf8')).toBe('n');
    });

    it('lets one built-in step write into a shared directory and the next read it (the bound view path)', async () => {
      const { grants } = await grant(alice, [{ name: 'out', createSharedDirectory: true }]);
      const out = byName(grants)['out'] as ResolvedGrant;
      const write = await bus.call(
        Rpc.registry.invoke,
        { tool: 'write_file', arguments: { filePath: `${out.viewPath}/part-1.csv`, content: 'a,b\n' } },
        { ctx: alice },
      );
      expect(write.isError).toBe(false);
      const read = await bus.call(
        Rpc.registry.invoke,
        { tool: 'read_file', arguments: { filePath: `${out.viewPath}/part-1.csv` } },
        { ctx: alice },
      );
      expect(textOf(read)).toContain('a,b');
      // Bob's file tools cannot reach Alice's run directory under the same view path.
      const bobs = await bus.call(
        Rpc.registry.invoke,
        { tool: 'read_file', arguments: { filePath: `${out.viewPath}/part-1.csv` } },
        { ctx: bob },
      );
      expect(bobs.isError).toBe(true);
      expect(textOf(bobs)).not.toContain('a,b');
    });

    it('checks a native path with the workspace guard; inside it is granted at its real path', async () => {
      mkdirSync(join(area(), 'data'), { recursive: true });
      writeFileSync(join(area(), 'data', 'in.csv'), 'x');
      const { grants } = await grant(alice, [
        { name: 'src', nativePath: 'data/in.csv' },
        { name: 'dir', nativePath: `${ws}/data`, writable: true },
      ]);
      const g = byName(grants);
      expect(g['src']).toMatchObject({
        kind: 'native',
        hostPath: join(area(), 'data', 'in.csv'),
        viewPath: join(ws, 'data', 'in.csv'),
        directory: false,
        writable: false,
      });
      expect(g['dir']).toMatchObject({ directory: true, writable: true });
    });

    describe('refuses native paths outside the workspace (422 validation_failed, path_outside_workspace)', () => {
      beforeAll(() => {
        writeFileSync(join(outside, 'canary.txt'), 'canary');
        mkdirSync(area(), { recursive: true });
        symlinkSync(outside, join(area(), 'escape'));
      });

      it.each([
        ['a parent step', '../../etc/passwd'],
        ['an absolute path outside', '/etc/passwd'],
        ['a symlink leading out', 'escape/canary.txt'],
        ['percent-encoded dots', '%2e%2e/%2e%2e/etc/passwd'],
        ['a backslash', '..\\..\\etc\\passwd'],
        ["another owner's area", '../owners/someone/x'],
      ])('%s', async (_, nativePath) => {
        const res = await err(grant(alice, [{ name: 'x', nativePath }]));
        expect(res.code).toBe('validation_failed');
        expect(res.details?.['reason']).toBe('path_outside_workspace');
      });

      it('a NUL byte (refused where the request enters)', async () => {
        const res = await err(grant(alice, [{ name: 'x', nativePath: 'data/in.csv\0.txt' }]));
        expect(res.code).toBe('validation_failed');
      });

      it('a very long path', async () => {
        const res = await err(grant(alice, [{ name: 'x', nativePath: 'a/'.repeat(3_000) }]));
        expect(res.code).toBe('validation_failed');
      });

      it('a path that does not exist', async () => {
        const res = await err(grant(alice, [{ name: 'x', nativePath: 'nope/missing.csv' }]));
        expect(res.code).toBe('validation_failed');
        expect(res.details?.['reason']).toBe('path_missing');
      });
    });

    it('gives a fork copies of the source’s grants (what a shared directory holds too), not the same directories', async () => {
      const a = await upload(alice, 'in.csv', 'v1');
      const source = await grant(alice, [
        { name: 'book', refs: [a.id] },
        { name: 'out', createSharedDirectory: true },
      ]);
      const out = byName(source.grants)['out'] as ResolvedGrant;
      writeFileSync(join(out.hostPath, 'part.csv'), 'written by the source');
      // The upload is gone by the time of the fork: the source run's copy is used.
      await bus.call(Rpc.registry.fileDelete, { id: a.id }, { ctx: alice });
      const fork = await grant(
        alice,
        source.grants.map((g) => g.request),
        randomUUID(),
        source.runId,
      );
      const forked = byName(fork.grants);
      expect(readFileSync(join((forked['out'] as ResolvedGrant).hostPath, 'part.csv'), 'utf8')).toBe(
        'written by the source',
      );
      expect(forked['book']?.files).toEqual(['in.csv']);
      writeFileSync(join((forked['out'] as ResolvedGrant).hostPath, 'part.csv'), 'the fork');
      expect(readFileSync(join(out.hostPath, 'part.csv'), 'utf8')).toBe('written by the source');
    });
  });

  describe('plugin binds (the seam the sandbox launcher uses)', () => {
    const files = () => service.app.get(FilesService);

    it('binds a run’s grants at /run/switchyard/files/<name>, at their real paths', async () => {
      const { runId, grants } = await grant(alice, [{ name: 'out', createSharedDirectory: true }]);
      const out = grants[0] as ResolvedGrant;
      const binds = await files().pluginBinds(
        runId,
        [{ name: 'out', hostPath: out.hostPath, sandboxPath: '/run/switchyard/files/out', writable: true }],
        alice,
      );
      expect(binds).toEqual([
        { hostPath: out.hostPath, sandboxPath: '/run/switchyard/files/out', writable: true },
      ]);
      expect(await files().pluginBinds(runId, undefined, alice)).toEqual([]);
    });

    it.each([
      ['a host path outside the workspace', { hostPath: '/etc', sandboxPath: '/run/switchyard/files/x' }],
      ['a sandbox path elsewhere', { hostPath: 'RUN/out', sandboxPath: '/usr/bin' }],
      ['a sandbox path under another name', { hostPath: 'RUN/out', sandboxPath: '/run/switchyard/files/y' }],
      [
        'a symlink in the run directory leading out',
        { hostPath: 'RUN/link', sandboxPath: '/run/switchyard/files/x' },
      ],
      ["another owner's area", { hostPath: 'BOB', sandboxPath: '/run/switchyard/files/x' }],
    ])('refuses %s', async (_, f) => {
      const { runId, grants } = await grant(alice, [{ name: 'out', createSharedDirectory: true }]);
      const out = grants[0] as ResolvedGrant;
      const runDir = join(out.hostPath, '..');
      symlinkSync(outside, join(runDir, 'link'));
      const bobArea = join(ws, 'owners', bob.ownerId as string);
      mkdirSync(bobArea, { recursive: true });
      const hostPath = f.hostPath.replace('RUN', runDir).replace('BOB', bobArea);
      const res = await err(
        files().pluginBinds(
          runId,
          [{ name: 'x', hostPath, sandboxPath: f.sandboxPath, writable: false }],
          alice,
        ),
      );
      expect(res.code).toBe('forbidden');
    });

    it('refuses grants without the run they belong to', async () => {
      const res = await err(
        files().pluginBinds(
          undefined,
          [{ name: 'x', hostPath: ws, sandboxPath: '/run/switchyard/files/x', writable: false }],
          alice,
        ),
      );
      expect(res.code).toBe('forbidden');
    });

    it('makes a plugin eligible only with the manifest’s ask, an admin’s grant and the plugin enabled', () => {
      const manifest = { permissions: { files: true, network: false } };
      expect(pluginFileAccess({ manifest, filesGranted: true, enabled: true }, 'sandboxed')).toBe('sandbox');
      expect(pluginFileAccess({ manifest, filesGranted: true, enabled: true }, 'unsandboxed')).toBe('host');
      expect(pluginFileAccess({ manifest, filesGranted: false, enabled: true }, 'sandboxed')).toBeUndefined();
      expect(pluginFileAccess({ manifest, filesGranted: true, enabled: false }, 'sandboxed')).toBeUndefined();
      expect(
        pluginFileAccess(
          { manifest: { permissions: { files: false, network: false } }, filesGranted: true, enabled: true },
          'sandboxed',
        ),
      ).toBeUndefined();
    });
  });
});
