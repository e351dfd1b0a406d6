import { Inject, Injectable } from '@nestjs/common';
import { lstat, mkdir, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { AppError } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import { requireOwner, type CallContext } from '@switchyard/server-observability';
import { APP_CONFIG } from '@switchyard/server-runtime';

/** A shared folder as one owner sees it. */
export interface WorkspaceMount {
  readonly name: string;
  /** Where it appears: `<root>/shared/<name>`. */
  readonly viewPath: string;
  /** The folder on the host (real path). */
  readonly hostPath: string;
  readonly writable: boolean;
}

/**
 * What one owner's tools see: their own area (`<WORKSPACE_DIR>/owners/<ownerId>`) shown at the
 * workspace root, and the shared folders an admin mounted for them under `<root>/shared/`. File
 * tools and sandboxed commands present the same view at the same paths.
 */
export interface WorkspaceView {
  readonly ownerId: string;
  /** The path owners use: WORKSPACE_DIR as configured. */
  readonly root: string;
  /** The owner's area on the host (real path). */
  readonly area: string;
  readonly mounts: readonly WorkspaceMount[];
}

export interface WorkspacePath {
  /** The path the caller gave, normalised, in the owner's view. */
  readonly requested: string;
  /** The same place on the host: what file operations use. */
  readonly real: string;
  /** Relative to the view's root ("" for the root itself). */
  readonly relative: string;
  /** The root of the owner's area or of a shared folder: never written to or deleted as a file. */
  readonly isRoot: boolean;
}

const ENCODED_SEPARATOR = /%(2e|2f|5c|00)/i;
/** Owner ids are uuids; anything else must never become a path segment. */
const OWNER_ID = /^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/;
export const SHARED_DIR = 'shared';

function refuse(path: string, why: string): AppError {
  return new AppError('forbidden', `path ${JSON.stringify(path)} is refused: ${why}`, {
    details: { path, reason: why },
  });
}

/** `candidate` is `root` or lies under it (both absolute and normalised: real paths). */
export function inside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * Keeps each owner's file tools inside that owner's view of WORKSPACE_DIR. A path is absolute
 * under the workspace root, or relative to it; once normalised it must stay under the root, and the
 * real path (symlinks resolved) of the deepest part that exists must stay inside the owner's area or
 * the shared folder it names. So `..`, prefix siblings (`/ws` vs `/ws-evil`), other owners' areas
 * and symlinks pointing out, including a symlinked parent of a file not yet created, are refused,
 * and another owner's file answers exactly like a missing one. Writes additionally refuse a target
 * that is a symlink, and anything in a read-only shared folder.
 */
@Injectable()
export class WorkspaceGuard {
  private rootReal: string | undefined;
  private readonly views = new Map<string, WorkspaceView>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  get root(): string {
    return resolve(this.config.tools.workspaceDir);
  }

  /** The caller's view, creating their area (and the mount points of their shared folders) on first use. */
  async view(caller: CallContext): Promise<WorkspaceView> {
    const ownerId = requireOwner(caller, 'workspace files');
    if (!OWNER_ID.test(ownerId)) throw new AppError('forbidden', 'this caller has no usable owner id');
    const known = this.views.get(ownerId);
    if (known) return known;
    if (!this.rootReal) {
      await mkdir(this.root, { recursive: true });
      this.rootReal = await realpath(this.root);
    }
    const areaPath = join(this.rootReal, 'owners', ownerId);
    await mkdir(areaPath, { recursive: true, mode: 0o700 });
    const mounts: WorkspaceMount[] = [];
    for (const folder of this.config.tools.sharedFolders) {
      if (!folder.owners.includes('*') && !folder.owners.includes(ownerId)) continue;
      await mkdir(folder.path, { recursive: true });
      // The mount point exists in the area too, so listings and the sandbox agree.
      await mkdir(join(areaPath, SHARED_DIR, folder.name), { recursive: true });
      mounts.push({
        name: folder.name,
        viewPath: join(this.root, SHARED_DIR, folder.name),
        hostPath: await realpath(folder.path),
        writable: folder.mode === 'rw',
      });
    }
    const view: WorkspaceView = { ownerId, root: this.root, area: await realpath(areaPath), mounts };
    this.views.set(ownerId, view);
    return view;
  }

  /** Where a view-relative path lives on the host, without any checks (listings map directories). */
  hostPath(view: WorkspaceView, rel: string): { base: string; real: string; mount?: WorkspaceMount } {
    const parts = rel.split(sep).filter(Boolean);
    const mount =
      parts[0] === SHARED_DIR && parts.length >= 2 ? view.mounts.find((m) => m.name === parts[1]) : undefined;
    if (mount) return { base: mount.hostPath, real: join(mount.hostPath, ...parts.slice(2)), mount };
    return { base: view.area, real: join(view.area, ...parts) };
  }

  async resolve(path: unknown, mode: 'read' | 'write', caller: CallContext): Promise<WorkspacePath> {
    if (typeof path !== 'string' || path.length === 0)
      throw new AppError('validation_failed', 'filePath must be a non-empty string');
    if (path.includes('\0')) throw refuse(path, 'contains a NUL byte');
    if (path.includes('\\')) throw refuse(path, 'backslashes are not path separators here');
    if (ENCODED_SEPARATOR.test(path))
      throw refuse(path, 'percent-encoded dots or separators are not accepted');
    const view = await this.view(caller);
    const rootReal = this.rootReal ?? this.root;
    const requested = isAbsolute(path) ? resolve(path) : resolve(this.root, path);
    // Accept the workspace under its configured name or its real name.
    const base = inside(this.root, requested)
      ? this.root
      : inside(rootReal, requested)
        ? rootReal
        : undefined;
    if (!base) throw refuse(path, `outside the workspace ${this.root}`);
    const rel = relative(base, requested);
    if (rel.startsWith('..') || isAbsolute(rel)) throw refuse(path, `outside the workspace ${this.root}`);
    const target = this.hostPath(view, rel);
    if (mode === 'write' && target.mount && !target.mount.writable)
      throw refuse(path, `the shared folder "${target.mount.name}" is read-only`);

    // The deepest existing part decides where we really are.
    let existing = target.real;
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
    if (!inside(target.base, resolvedExisting))
      throw refuse(path, 'a symbolic link on the way leads outside the workspace');
    if (existing === target.real) {
      const st = await lstat(target.real);
      if (st.isSymbolicLink() && mode === 'write')
        throw refuse(path, 'it is a symbolic link; writes never follow links');
    }
    return {
      requested: join(this.root, rel),
      real: target.real,
      relative: rel,
      isRoot: target.real === target.base,
    };
  }
}
