import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, cp, lstat, mkdir, readdir, realpath, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import {
  AppError,
  grantKindOf,
  RUN_FILES_DIR,
  sandboxMountOf,
  sanitizeFileName,
  type AdoptUpload,
  type FileGrantRequest,
  type FilePage,
  type GrantFilesRequest,
  type InvocationFile,
  type ResolvedGrant,
  type StoredFile,
} from '@switchyard/contracts';
import { fileBlobPath, stagedUploadPath, type AppConfig } from '@switchyard/server-config';
import { FilesRepository } from '@switchyard/server-db-tools';
import { requireOwner, type CallContext } from '@switchyard/server-observability';
import { APP_CONFIG } from '@switchyard/server-runtime';
import { inside, WorkspaceGuard, type WorkspaceView } from '../builtin/workspace.guard';
import type { ExtraBind } from '../plugins/plugin-sandbox';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** `name`, or `name (2)`, `name (3)` … before the extension, whichever is not taken yet. */
function unique(name: string, taken: Set<string>): string {
  let candidate = name;
  const dot = name.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  for (let n = 2; taken.has(candidate); n++) candidate = `${stem} (${n})${ext}`;
  taken.add(candidate);
  return candidate;
}

/**
 * Owners' uploaded files and the file grants of runs. The registry is the only writer of both: the
 * gateway stages an upload's bytes under FILES_DIR/incoming and hands it over here; a run's grants
 * are materialised in the owner's workspace area under `.switchyard/runs/<runId>/<grant>`, so the
 * built-in file tools (bound to that area by the WorkspaceGuard) and eligible plugins (through
 * sandbox binds) see the same directories: a file one step writes is there for the next.
 */
@Injectable()
export class FilesService {
  constructor(
    private readonly repo: FilesRepository,
    private readonly guard: WorkspaceGuard,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private get dir(): string {
    return this.config.files.dir;
  }

  async adopt(req: AdoptUpload, caller: CallContext): Promise<StoredFile> {
    const ownerId = requireOwner(caller, 'files');
    const staged = stagedUploadPath(this.dir, req.stagedId);
    try {
      const st = await stat(staged).catch(() => undefined);
      if (!st?.isFile() || st.size !== req.size)
        throw new AppError('validation_failed', 'the staged upload is missing or incomplete');
      const { uploadLimitBytes, quotaBytes } = this.config.files;
      if (req.size > uploadLimitBytes)
        throw new AppError('payload_too_large', `a file may have at most ${uploadLimitBytes} bytes`, {
          details: { limitBytes: uploadLimitBytes },
        });
      if (quotaBytes > 0) {
        const used = await this.repo.totalBytes(ownerId);
        if (used + req.size > quotaBytes)
          throw new AppError(
            'payload_too_large',
            `your files would take ${used + req.size} bytes; your quota is ${quotaBytes} (delete some first)`,
            { details: { quotaBytes, usedBytes: used } },
          );
      }
      const id = randomUUID();
      const blob = fileBlobPath(this.dir, ownerId, id);
      await mkdir(dirname(blob), { recursive: true, mode: 0o700 });
      await rename(staged, blob);
      try {
        return await this.repo.create(ownerId, {
          id,
          name: sanitizeFileName(req.name),
          contentType: req.contentType || 'application/octet-stream',
          size: req.size,
          sha256: req.sha256,
        });
      } catch (err) {
        await rm(blob, { force: true });
        throw err;
      }
    } finally {
      await rm(staged, { force: true });
    }
  }

  async list(q: { limit: number; cursor?: string | undefined }, caller: CallContext): Promise<FilePage> {
    return this.repo.page(requireOwner(caller, 'files'), q.limit, q.cursor);
  }

  get(id: string, caller: CallContext): Promise<StoredFile> {
    return this.repo.get(requireOwner(caller, 'files'), id);
  }

  async delete(id: string, caller: CallContext): Promise<StoredFile> {
    const ownerId = requireOwner(caller, 'files');
    const file = await this.repo.delete(ownerId, id);
    await rm(fileBlobPath(this.dir, ownerId, id), { force: true });
    return file;
  }

  /** `<area>/.switchyard/runs/<runId>`: everything a run was granted, except native paths. */
  private runDir(view: WorkspaceView, runId: string): string {
    if (!UUID.test(runId)) throw new AppError('validation_failed', 'runId must be a uuid');
    return join(view.area, RUN_FILES_DIR, runId);
  }

  /**
   * Materialises a run's grants. Uploaded files are copied (never linked: a writable plugin must not
   * change the upload), native paths are checked by the workspace guard like any file tool's path,
   * shared directories start empty. With `copyFrom` (fork, rewind) the source run's copies and
   * shared directories are copied, so steps taken over from the source find what they wrote.
   */
  async grant(req: GrantFilesRequest, caller: CallContext): Promise<ResolvedGrant[]> {
    const ownerId = requireOwner(caller, 'files');
    const view = await this.guard.view(caller);
    const runDir = this.runDir(view, req.runId);
    const source = req.copyFrom ? this.runDir(view, req.copyFrom) : undefined;
    const refs = [...new Set(req.grants.flatMap((g) => ('refs' in g ? g.refs : [])))];
    const known = refs.length ? await this.repo.many(ownerId, refs) : new Map<string, StoredFile>();
    const copied = source
      ? new Set(
          (
            await Promise.all(
              req.grants.map(async (g) => ((await exists(join(source, g.name))) ? g.name : undefined)),
            )
          ).filter((n): n is string => n !== undefined),
        )
      : new Set<string>();
    for (const id of refs) {
      if (!known.has(id) && !req.grants.some((g) => 'refs' in g && g.refs.includes(id) && copied.has(g.name)))
        throw new AppError('not_found', `file ${id} does not exist`, { details: { fileId: id } });
    }
    await mkdir(runDir, { recursive: true, mode: 0o700 });
    const out: ResolvedGrant[] = [];
    for (const g of req.grants) {
      const viewPath = join(this.guard.root, RUN_FILES_DIR, req.runId, g.name);
      const hostPath = join(runDir, g.name);
      if ('nativePath' in g) {
        out.push(await this.native(g, caller));
        continue;
      }
      if (source && copied.has(g.name)) {
        await cp(join(source, g.name), hostPath, { recursive: true, errorOnExist: false, force: true });
      } else {
        await mkdir(hostPath, { recursive: true, mode: 0o700 });
      }
      if ('refs' in g) {
        const taken = new Set<string>();
        const files: string[] = [];
        for (const id of g.refs) {
          const f = known.get(id);
          const name = unique(f ? f.name : id, taken);
          files.push(name);
          if (source && copied.has(g.name)) continue;
          await copyFile(
            fileBlobPath(this.dir, ownerId, id),
            join(hostPath, name),
            constants.COPYFILE_FICLONE,
          );
        }
        // After a copy from the source run, the names are what the source listed.
        const listed = source && copied.has(g.name) ? ((await this.listed(hostPath)) ?? files) : files;
        out.push({
          name: g.name,
          kind: 'refs',
          request: g,
          hostPath,
          viewPath,
          files: listed,
          directory: listed.length !== 1,
          writable: false,
        });
      } else {
        out.push({
          name: g.name,
          kind: 'shared',
          request: g,
          hostPath,
          viewPath,
          files: [],
          directory: true,
          writable: true,
        });
      }
    }
    return out;
  }

  private async listed(dir: string): Promise<string[] | undefined> {
    try {
      return (await readdir(dir)).sort();
    } catch {
      return undefined;
    }
  }

  /** A native path: the workspace guard's rules, refused as 422 `validation_failed` with the reason. */
  private async native(
    g: Extract<FileGrantRequest, { nativePath: string }>,
    caller: CallContext,
  ): Promise<ResolvedGrant> {
    let resolved;
    try {
      resolved = await this.guard.resolve(g.nativePath, g.writable ? 'write' : 'read', caller);
    } catch (err) {
      if (err instanceof AppError && err.code === 'forbidden')
        throw new AppError('validation_failed', `file grant "${g.name}": ${err.message}`, {
          details: {
            ...err.details,
            grant: g.name,
            reason: 'path_outside_workspace',
            why: err.details?.['reason'],
          },
          issues: [{ path: `files.${g.name}.nativePath`, message: err.message }],
        });
      throw err;
    }
    const st = await stat(resolved.real).catch(() => undefined);
    if (!st)
      throw new AppError('validation_failed', `file grant "${g.name}": ${g.nativePath} does not exist`, {
        details: { grant: g.name, reason: 'path_missing' },
        issues: [{ path: `files.${g.name}.nativePath`, message: 'does not exist' }],
      });
    return {
      name: g.name,
      kind: grantKindOf(g),
      request: g,
      hostPath: await realpath(resolved.real),
      viewPath: resolved.requested,
      files: [],
      directory: st.isDirectory(),
      writable: g.writable,
    };
  }

  /**
   * The binds to ask the plugin sandbox for, given an invocation's `files` (set by the executor).
   * Nothing is taken on trust: each grant must be mounted at `<SANDBOX_FILES_ROOT>/<name>`, and its
   * host path (symlinks resolved) must lie in this run's files directory or, for a native grant, in
   * the caller's own workspace view (what the caller's file tools could reach anyway, read-only
   * shared folders staying read-only). Anything else is `forbidden`.
   */
  async pluginBinds(
    runId: string | undefined,
    files: readonly InvocationFile[] | undefined,
    caller: CallContext,
  ): Promise<ExtraBind[]> {
    if (!files?.length) return [];
    if (!runId) throw new AppError('forbidden', 'file grants come with the run they belong to');
    const view = await this.guard.view(caller);
    const runDir = this.runDir(view, runId);
    const runReal = await realpath(runDir).catch(() => runDir);
    const binds: ExtraBind[] = [];
    const names = new Set<string>();
    for (const f of files) {
      if (names.has(f.name)) throw new AppError('forbidden', `file grant "${f.name}" is given twice`);
      names.add(f.name);
      if (f.sandboxPath !== sandboxMountOf(f))
        throw new AppError('forbidden', `file grant "${f.name}" must be mounted at ${sandboxMountOf(f)}`);
      let real: string;
      try {
        real = await realpath(f.hostPath);
      } catch {
        throw new AppError('forbidden', `file grant "${f.name}": its path does not exist`);
      }
      const inRun = inside(runReal, real) && real !== runReal;
      const mount = view.mounts.find((m) => inside(m.hostPath, real));
      const inView = inside(view.area, real) || mount !== undefined;
      if (!inRun && !inView)
        throw new AppError(
          'forbidden',
          `file grant "${f.name}" is outside this run's files and your workspace`,
        );
      if (f.writable && mount && !mount.writable)
        throw new AppError(
          'forbidden',
          `file grant "${f.name}" is in the read-only shared folder "${mount.name}"`,
        );
      binds.push({ hostPath: real, sandboxPath: f.sandboxPath, writable: f.writable });
    }
    return binds;
  }
}
