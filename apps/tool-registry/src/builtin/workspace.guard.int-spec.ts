import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '@switchyard/contracts';
import { testConfig } from '@switchyard/testing';
import { WorkspaceGuard } from './workspace.guard';

const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';
const as = (ownerId: string) => ({ correlationId: 't', ownerId, role: 'user' as const });

/** Real files and symlinks in a temp directory: the attack corpus must all be refused. */
describe('WorkspaceGuard (real filesystem)', () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'sy-guard-')));
  const ws = join(base, 'ws');
  const areaA = join(ws, 'owners', A);
  const areaB = join(ws, 'owners', B);
  const outside = join(base, 'outside');
  const team = join(base, 'team');
  const drop = join(base, 'drop');
  let guard: WorkspaceGuard;

  beforeAll(() => {
    mkdirSync(join(areaA, 'docs'), { recursive: true });
    mkdirSync(areaB, { recursive: true });
    mkdirSync(outside, { recursive: true });
    mkdirSync(team, { recursive: true });
    mkdirSync(join(base, 'ws-evil'), { recursive: true });
    writeFileSync(join(areaA, 'docs', 'a.txt'), 'inside');
    writeFileSync(join(areaB, 'b-secret.txt'), 'B only');
    writeFileSync(join(ws, 'legacy.txt'), 'from before owner areas');
    writeFileSync(join(outside, 'secret.txt'), 'secret');
    writeFileSync(join(team, 'handbook.txt'), 'shared');
    writeFileSync(join(base, 'ws-evil', 'x.txt'), 'sibling');
    // Links "planted by A" in A's own area: none may lead anywhere but A's area.
    symlinkSync(outside, join(areaA, 'escape-dir'));
    symlinkSync(join(outside, 'secret.txt'), join(areaA, 'escape-file'));
    symlinkSync(join(areaB, 'b-secret.txt'), join(areaA, 'to-b-absolute'));
    symlinkSync(`../${B}/b-secret.txt`, join(areaA, 'to-b-relative'));
    symlinkSync(team, join(areaA, 'to-team'));
    symlinkSync(join(areaA, 'docs', 'a.txt'), join(areaA, 'inner-link'));
    symlinkSync(join(areaA, 'missing-target'), join(areaA, 'dangling'));
    guard = new WorkspaceGuard(
      testConfig('tool-registry', {
        WORKSPACE_DIR: ws,
        WORKSPACE_SHARED_FOLDERS: JSON.stringify([
          { name: 'team', path: team, mode: 'ro', owners: ['*'] },
          { name: 'drop', path: drop, mode: 'rw', owners: [A] },
        ]),
      }),
    );
  });

  afterAll(() => rmSync(base, { recursive: true, force: true }));

  const refused = async (path: unknown, mode: 'read' | 'write' = 'read', owner = A) => {
    const err = await guard.resolve(path, mode, as(owner)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  };

  it.each([
    ['dot-dot out of the workspace', `${ws}/../outside/secret.txt`],
    ['dot-dot deep', `${ws}/docs/../../outside/secret.txt`],
    ['a relative dot-dot', '../outside/secret.txt'],
    ['a prefix sibling', `${base}/ws-evil/x.txt`],
    ['the parent of the workspace', base],
    ['an absolute path elsewhere', '/etc/passwd'],
    ['the repository .env', join(process.cwd(), '.env')],
    ['percent-encoded dot-dot', `${ws}/%2e%2e/outside/secret.txt`],
    ['percent-encoded slash', `${ws}/..%2foutside`],
    ['a backslash traversal', `${ws}\\..\\outside`],
    ['a NUL byte', `${ws}/docs/a.txt\0.png`],
    ['a symlinked directory leading out', `${ws}/escape-dir/secret.txt`],
    ['a symlinked file leading out', `${ws}/escape-file`],
    ['a new file under a symlinked parent leading out', `${ws}/escape-dir/new/file.txt`],
    ['a dangling symlink', `${ws}/dangling`],
    ["an absolute link into another owner's area", `${ws}/to-b-absolute`],
    ["a relative link into another owner's area", `${ws}/to-b-relative`],
    ['a link into a shared folder (use the folder itself)', `${ws}/to-team/handbook.txt`],
  ])('refuses %s', async (_, path) => {
    const err = await refused(path);
    expect(err.code).toBe('forbidden');
    expect(err.message).toMatch(/is refused: /);
  });

  it('refuses non-strings and empty paths as validation errors', async () => {
    expect((await refused('')).code).toBe('validation_failed');
    expect((await refused(42)).code).toBe('validation_failed');
  });

  it('refuses a caller without an owner', async () => {
    const err = await guard.resolve(`${ws}/x`, 'read', { correlationId: 't' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'forbidden' });
  });

  it('refuses writing through a symlink even when it stays inside', async () => {
    expect((await refused(`${ws}/inner-link`, 'write')).message).toContain('writes never follow links');
    await expect(guard.resolve(`${ws}/inner-link`, 'read', as(A))).resolves.toMatchObject({
      relative: 'inner-link',
    });
  });

  it("maps every path into the caller's own area, absolute or relative", async () => {
    await expect(guard.resolve(`${ws}/docs/a.txt`, 'read', as(A))).resolves.toMatchObject({
      requested: join(ws, 'docs', 'a.txt'),
      real: join(areaA, 'docs', 'a.txt'),
      relative: 'docs/a.txt',
    });
    await expect(guard.resolve('docs/a.txt', 'read', as(A))).resolves.toMatchObject({
      real: join(areaA, 'docs', 'a.txt'),
    });
    await expect(guard.resolve(`${ws}/docs/./new/../b.txt`, 'write', as(A))).resolves.toMatchObject({
      relative: 'docs/b.txt',
    });
    await expect(guard.resolve(ws, 'read', as(A))).resolves.toMatchObject({ relative: '', isRoot: true });
    // B asking for A's file, by any spelling, lands in B's own area, where there is nothing.
    for (const path of [`${ws}/docs/a.txt`, `${ws}/owners/${A}/docs/a.txt`, `owners/${A}/docs/a.txt`]) {
      const p = await guard.resolve(path, 'read', as(B));
      expect(p.real.startsWith(areaB + '/')).toBe(true);
    }
    // Files left at the workspace root by earlier versions belong to nobody until an admin moves them.
    await expect(guard.resolve(`${ws}/legacy.txt`, 'read', as(A))).resolves.toMatchObject({
      real: join(areaA, 'legacy.txt'),
    });
  });

  it('mounts shared folders for the owners an admin chose, read-only or read-write', async () => {
    await expect(guard.resolve(`${ws}/shared/team/handbook.txt`, 'read', as(B))).resolves.toMatchObject({
      real: join(team, 'handbook.txt'),
    });
    expect((await refused(`${ws}/shared/team/handbook.txt`, 'write', B)).message).toContain('read-only');
    expect((await refused(`${ws}/shared/team/new.txt`, 'write', A)).message).toContain('read-only');
    await expect(guard.resolve(`${ws}/shared/drop/out.txt`, 'write', as(A))).resolves.toMatchObject({
      real: join(realpathSync(drop), 'out.txt'),
    });
    await expect(guard.resolve(`${ws}/shared/drop`, 'read', as(A))).resolves.toMatchObject({ isRoot: true });
    // `drop` is not mounted for B: the path is an ordinary folder of B's own area.
    const forB = await guard.resolve(`${ws}/shared/drop/out.txt`, 'write', as(B));
    expect(forB.real).toBe(join(areaB, 'shared', 'drop', 'out.txt'));
    expect((await guard.view(as(B))).mounts.map((m) => m.name)).toEqual(['team']);
  });
});
