import { Inject, Injectable } from '@nestjs/common';
import { lstat, mkdir, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { AppError } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import { APP_CONFIG } from '@switchyard/server-runtime';

export interface WorkspacePath {
  /** The path the caller gave, normalised. */
  readonly requested: string;
  /** The same place under the workspace's real path: what file operations use. */
  readonly real: string;
  /** Relative to the workspace root ("" for the root itself). */
  readonly relative: string;
}

const ENCODED_SEPARATOR = /%(2e|2f|5c|00)/i;

function refuse(path: string, why: string): AppError {
  return new AppError('forbidden', `path ${JSON.stringify(path)} is refused: ${why}`, {
    details: { path, reason: why },
  });
}

function inside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * Keeps the file tools inside WORKSPACE_DIR. A path must be absolute and, once normalised, lie under
 * the workspace; then the real path (symlinks resolved) of the deepest part that exists must too, so
 * `..`, prefix siblings (`/ws` vs `/ws-evil`) and symlinks pointing out, including a symlinked parent
 * of a file not yet created, are refused. Writes additionally refuse a target that is a symlink.
 */
@Injectable()
export class WorkspaceGuard {
  private realRoot: string | undefined;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  get root(): string {
    return resolve(this.config.tools.workspaceDir);
  }

  private async rootReal(): Promise<string> {
    if (!this.realRoot) {
      await mkdir(this.root, { recursive: true });
      this.realRoot = await realpath(this.root);
    }
    return this.realRoot;
  }

  async resolve(path: unknown, mode: 'read' | 'write'): Promise<WorkspacePath> {
    if (typeof path !== 'string' || path.length === 0)
      throw new AppError('validation_failed', 'filePath must be a non-empty string');
    if (path.includes('\0')) throw refuse(path, 'contains a NUL byte');
    if (path.includes('\\')) throw refuse(path, 'backslashes are not path separators here');
    if (ENCODED_SEPARATOR.test(path))
      throw refuse(path, 'percent-encoded dots or separators are not accepted');
    if (!isAbsolute(path)) throw refuse(path, `must be an absolute path inside the workspace ${this.root}`);
    const realRoot = await this.rootReal();
    const requested = resolve(path);
    // Accept the workspace under its configured name or its real name.
    const base = inside(this.root, requested)
      ? this.root
      : inside(realRoot, requested)
        ? realRoot
        : undefined;
    if (!base) throw refuse(path, `outside the workspace ${this.root}`);
    const rel = relative(base, requested);
    if (rel.startsWith('..') || isAbsolute(rel)) throw refuse(path, `outside the workspace ${this.root}`);
    const real = rel ? join(realRoot, rel) : realRoot;

    // The deepest existing part decides where we really are.
    let existing = real;
    for (;;) {
      try {
        await lstat(existing);
        break;
      } catch {
        const parent = dirname(existing);
        if (parent === existing) throw refuse(path, 'no part of it exists');
        existing = parent;
      }
    }
    let resolvedExisting: string;
    try {
      resolvedExisting = await realpath(existing);
    } catch {
      throw refuse(path, 'it goes through a broken symbolic link');
    }
    if (!inside(realRoot, resolvedExisting))
      throw refuse(path, 'a symbolic link on the way leads outside the workspace');
    if (existing === real) {
      const st = await lstat(real);
      if (st.isSymbolicLink() && mode === 'write')
        throw refuse(path, 'it is a symbolic link; writes never follow links');
    }
    return { requested, real, relative: rel };
  }
}
