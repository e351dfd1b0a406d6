import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '@switchyard/contracts';
import { testConfig } from '@switchyard/testing';
import { WorkspaceGuard } from './workspace.guard';

/** Real files and symlinks in a temp directory: the attack corpus must all be refused. */
describe('WorkspaceGuard (real filesystem)', () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'sy-guard-')));
  const ws = join(base, 'ws');
  const outside = join(base, 'outside');
  let guard: WorkspaceGuard;

  beforeAll(() => {
    mkdirSync(join(ws, 'docs'), { recursive: true });
    mkdirSync(outside, { recursive: true });
    mkdirSync(join(base, 'ws-evil'), { recursive: true });
    writeFileSync(join(ws, 'docs', 'a.txt'), 'inside');
    writeFileSync(join(outside, 'secret.txt'), 'secret');
    writeFileSync(join(base, 'ws-evil', 'x.txt'), 'sibling');
    symlinkSync(outside, join(ws, 'escape-dir'));
    symlinkSync(join(outside, 'secret.txt'), join(ws, 'escape-file'));
    symlinkSync(join(ws, 'docs', 'a.txt'), join(ws, 'inner-link'));
    symlinkSync(join(ws, 'missing-target'), join(ws, 'dangling'));
    guard = new WorkspaceGuard(testConfig('tool-registry', { WORKSPACE_DIR: ws }));
  });

  afterAll(() => rmSync(base, { recursive: true, force: true }));

  const refused = async (path: unknown, mode: 'read' | 'write' = 'read') => {
    const err = await guard.resolve(path, mode).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  };

  it.each([
    ['a relative path', 'docs/a.txt'],
    ['dot-dot out of the workspace', `${ws}/../outside/secret.txt`],
    ['dot-dot deep', `${ws}/docs/../../outside/secret.txt`],
    ['a prefix sibling', `${base}/ws-evil/x.txt`],
    ['the parent of the workspace', base],
    ['an absolute path elsewhere', '/etc/passwd'],
    ['percent-encoded dot-dot', `${ws}/%2e%2e/outside/secret.txt`],
    ['percent-encoded slash', `${ws}/..%2foutside`],
    ['a backslash traversal', `${ws}\\..\\outside`],
    ['a NUL byte', `${ws}/docs/a.txt\0.png`],
    ['a symlinked directory leading out', `${ws}/escape-dir/secret.txt`],
    ['a symlinked file leading out', `${ws}/escape-file`],
    ['a new file under a symlinked parent leading out', `${ws}/escape-dir/new/file.txt`],
    ['a dangling symlink', `${ws}/dangling`],
  ])('refuses %s', async (_, path) => {
    const err = await refused(path);
    expect(err.code).toBe('forbidden');
    expect(err.message).toMatch(/is refused: /);
  });

  it('refuses non-strings and empty paths as validation errors', async () => {
    expect((await refused('')).code).toBe('validation_failed');
    expect((await refused(42)).code).toBe('validation_failed');
  });

  it('refuses writing through a symlink even when it stays inside', async () => {
    expect((await refused(`${ws}/inner-link`, 'write')).message).toContain('writes never follow links');
    await expect(guard.resolve(`${ws}/inner-link`, 'read')).resolves.toMatchObject({
      relative: 'inner-link',
    });
  });

  it('accepts paths inside, existing or not, and normalises them', async () => {
    await expect(guard.resolve(`${ws}/docs/a.txt`, 'read')).resolves.toMatchObject({
      real: join(ws, 'docs', 'a.txt'),
      relative: 'docs/a.txt',
    });
    await expect(guard.resolve(`${ws}/docs/./new/../b.txt`, 'write')).resolves.toMatchObject({
      relative: 'docs/b.txt',
    });
    await expect(guard.resolve(`${ws}/brand/new/dir/file.txt`, 'write')).resolves.toMatchObject({
      relative: 'brand/new/dir/file.txt',
    });
    await expect(guard.resolve(ws, 'read')).resolves.toMatchObject({ relative: '' });
  });
});
