import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { AppError, type ToolResult } from '@switchyard/contracts';
import { BuiltinTool, text, textOutput, type BuiltinToolHandler, type ToolRunContext } from './builtin-tool';
import { WorkspaceGuard } from './workspace.guard';

const READ_LIMIT = 32 * 1024;
const LIST_LIMIT = 1_000;
const FilePath = z
  .string()
  .min(1)
  .max(4096)
  .describe('a path in your workspace: absolute under the workspace root, or relative to it');

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException)?.code;
}

function notFound(path: string): ToolResult {
  return text(`no such file or directory: ${path}`, true);
}

const ReadFileParams = z.object({ filePath: FilePath }).strict();

@BuiltinTool({
  name: 'read_file',
  description:
    'Read a UTF-8 text file in the workspace. Content past 32 KiB is cut, and file information is appended.',
  params: ReadFileParams,
  effect: 'read',
  idempotent: true,
  outputSchema: textOutput(
    'the file\'s text, then a line "[file: <path>; size <n> bytes; modified <time>]" (and "; truncated: …" past 32 KiB)',
    ['Buy milk\n\n\n[file: notes/todo.txt; size 9 bytes; modified 2026-12-03T09:00:00.000Z]'],
  ),
})
export class ReadFileTool implements BuiltinToolHandler<typeof ReadFileParams> {
  constructor(private readonly guard: WorkspaceGuard) {}

  async run(args: z.infer<typeof ReadFileParams>, ctx: ToolRunContext): Promise<ToolResult> {
    const p = await this.guard.resolve(args.filePath, 'read', ctx.caller);
    let handle;
    try {
      handle = await open(p.real, constants.O_RDONLY);
    } catch (err) {
      if (errno(err) === 'ENOENT') return notFound(args.filePath);
      if (errno(err) === 'EISDIR') return text(`${args.filePath} is a directory; use list_directory`, true);
      throw err;
    }
    try {
      const st = await handle.stat();
      if (!st.isFile()) return text(`${args.filePath} is not a regular file`, true);
      const buf = Buffer.alloc(Math.min(st.size, READ_LIMIT));
      const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
      const bytes = buf.subarray(0, bytesRead);
      if (bytes.includes(0))
        return text(`${args.filePath} looks binary (contains NUL bytes); read_file reads text only`, true);
      const truncated = st.size > READ_LIMIT;
      const info = `\n\n[file: ${args.filePath}; size ${st.size} bytes; modified ${st.mtime.toISOString()}${
        truncated ? `; truncated: showing the first ${READ_LIMIT} bytes` : ''
      }]`;
      return { content: [{ type: 'text', text: bytes.toString('utf8') + info }], isError: false, truncated };
    } finally {
      await handle.close();
    }
  }
}

const ListDirectoryParams = z
  .object({
    filePath: FilePath,
    recursive: z.boolean().default(false),
    maxDepth: z.number().int().min(1).max(10).default(3).describe('with recursive: how deep, 1–10'),
  })
  .strict();

@BuiltinTool({
  name: 'list_directory',
  description:
    'List a workspace directory: one entry per line with type and size; recursive down to maxDepth (1–10).',
  params: ListDirectoryParams,
  effect: 'read',
  idempotent: true,
  outputSchema: textOutput(
    'one entry per line: "dir   <path>/", "file  <path> (<n> bytes)" or "link  <path>"; "(empty directory)" when empty',
    ['dir   notes/\nfile  notes/todo.txt (9 bytes)\nfile  README.md (120 bytes)'],
  ),
})
export class ListDirectoryTool implements BuiltinToolHandler<typeof ListDirectoryParams> {
  constructor(private readonly guard: WorkspaceGuard) {}

  async run(args: z.infer<typeof ListDirectoryParams>, ctx: ToolRunContext): Promise<ToolResult> {
    const p = await this.guard.resolve(args.filePath, 'read', ctx.caller);
    try {
      if (!(await stat(p.real)).isDirectory()) return text(`${args.filePath} is not a directory`, true);
    } catch (err) {
      if (errno(err) === 'ENOENT') return notFound(args.filePath);
      throw err;
    }
    const lines: string[] = [];
    let truncated = false;
    const depth = args.recursive ? args.maxDepth : 1;
    const view = await this.guard.view(ctx.caller);
    const walk = async (dir: string, prefix: string, level: number): Promise<void> => {
      const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
        a.name.localeCompare(b.name),
      );
      for (const e of entries) {
        if (lines.length >= LIST_LIMIT) {
          truncated = true;
          return;
        }
        const rel = prefix ? `${prefix}/${e.name}` : e.name;
        if (e.isSymbolicLink()) lines.push(`link  ${rel}`);
        else if (e.isDirectory()) {
          lines.push(`dir   ${rel}/`);
          // Links are listed, never followed; a shared folder's mount point leads into the folder.
          if (level < depth)
            await walk(this.guard.hostPath(view, join(p.relative, rel)).real, rel, level + 1);
        } else {
          const size = (await lstat(join(dir, e.name)).catch(() => undefined))?.size ?? 0;
          lines.push(`file  ${rel} (${size} bytes)`);
        }
      }
    };
    await walk(p.real, '', 1);
    if (truncated) lines.push(`[listing stopped at ${LIST_LIMIT} entries]`);
    return {
      content: [{ type: 'text', text: lines.length ? lines.join('\n') : '(empty directory)' }],
      isError: false,
      truncated,
    };
  }
}

/** Opens for writing without following a symlink in the last component (O_NOFOLLOW). */
async function writeNoFollow(path: string, content: string, create: boolean): Promise<void> {
  const flags =
    constants.O_WRONLY | constants.O_TRUNC | constants.O_NOFOLLOW | (create ? constants.O_CREAT : 0);
  const handle = await open(path, flags, 0o644);
  try {
    await handle.writeFile(content, 'utf8');
  } finally {
    await handle.close();
  }
}

const WriteFileParams = z.object({ filePath: FilePath, content: z.string().max(10 * 1024 * 1024) }).strict();

@BuiltinTool({
  name: 'write_file',
  description: 'Create or overwrite a whole file in the workspace (UTF-8), creating parent directories.',
  params: WriteFileParams,
  effect: 'write',
  idempotent: true,
  outputSchema: textOutput('what was written, and where', ['wrote 9 bytes to notes/todo.txt']),
})
export class WriteFileTool implements BuiltinToolHandler<typeof WriteFileParams> {
  constructor(private readonly guard: WorkspaceGuard) {}

  async run(args: z.infer<typeof WriteFileParams>, ctx: ToolRunContext): Promise<ToolResult> {
    const p = await this.guard.resolve(args.filePath, 'write', ctx.caller);
    if (p.isRoot) throw new AppError('forbidden', `${args.filePath} is a directory, not a file`);
    await mkdir(dirname(p.real), { recursive: true });
    // Re-check after creating parents: a parent may have been swapped for a link in between.
    await this.guard.resolve(args.filePath, 'write', ctx.caller);
    try {
      await writeNoFollow(p.real, args.content, true);
    } catch (err) {
      if (errno(err) === 'ELOOP')
        throw new AppError('forbidden', `${args.filePath} is a symbolic link; writes never follow links`);
      if (errno(err) === 'EISDIR') return text(`${args.filePath} is a directory`, true);
      throw err;
    }
    return text(`wrote ${Buffer.byteLength(args.content)} bytes to ${args.filePath}`);
  }
}

const EditFileParams = z
  .object({
    filePath: FilePath,
    diff: z
      .string()
      .max(10 * 1024 * 1024)
      .describe('the complete new content (not a patch)'),
  })
  .strict();

@BuiltinTool({
  name: 'edit_file',
  description:
    'Replace the whole content of an existing workspace file. `diff` is the complete new content, not patch syntax.',
  params: EditFileParams,
  effect: 'write',
  idempotent: true,
  outputSchema: textOutput('what was replaced', ['replaced the content of notes/todo.txt (12 bytes)']),
})
export class EditFileTool implements BuiltinToolHandler<typeof EditFileParams> {
  constructor(private readonly guard: WorkspaceGuard) {}

  async run(args: z.infer<typeof EditFileParams>, ctx: ToolRunContext): Promise<ToolResult> {
    const p = await this.guard.resolve(args.filePath, 'write', ctx.caller);
    try {
      if (!(await lstat(p.real)).isFile()) return text(`${args.filePath} is not a regular file`, true);
      await writeNoFollow(p.real, args.diff, false);
    } catch (err) {
      if (errno(err) === 'ENOENT')
        return text(`no such file: ${args.filePath}; use write_file to create it`, true);
      if (errno(err) === 'ELOOP')
        throw new AppError('forbidden', `${args.filePath} is a symbolic link; writes never follow links`);
      throw err;
    }
    return text(`replaced the content of ${args.filePath} (${Buffer.byteLength(args.diff)} bytes)`);
  }
}

const DeleteFileParams = z.object({ filePath: FilePath, recursive: z.boolean().default(false) }).strict();

@BuiltinTool({
  name: 'delete_file',
  description: 'Delete a workspace file or directory; a non-empty directory needs recursive=true.',
  params: DeleteFileParams,
  effect: 'write',
  idempotent: true,
  outputSchema: textOutput('what was deleted', ['deleted notes/todo.txt', 'deleted directory notes']),
})
export class DeleteFileTool implements BuiltinToolHandler<typeof DeleteFileParams> {
  constructor(private readonly guard: WorkspaceGuard) {}

  async run(args: z.infer<typeof DeleteFileParams>, ctx: ToolRunContext): Promise<ToolResult> {
    const p = await this.guard.resolve(args.filePath, 'write', ctx.caller);
    if (p.isRoot)
      throw new AppError(
        'forbidden',
        `${args.filePath} is the root of a workspace or shared folder; it cannot be deleted`,
      );
    let st;
    try {
      st = await lstat(p.real);
    } catch (err) {
      if (errno(err) === 'ENOENT') return notFound(args.filePath);
      throw err;
    }
    if (st.isDirectory()) {
      if (args.recursive) await rm(p.real, { recursive: true });
      else {
        try {
          await rmdir(p.real);
        } catch (err) {
          if (errno(err) === 'ENOTEMPTY')
            return text(
              `${args.filePath} is not empty; pass recursive=true to delete it with its content`,
              true,
            );
          throw err;
        }
      }
      return text(`deleted directory ${args.filePath}`);
    }
    await rm(p.real);
    return text(`deleted ${args.filePath}`);
  }
}
