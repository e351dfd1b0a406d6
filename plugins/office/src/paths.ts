import { isAbsolute, normalize, sep } from 'node:path';
import { stat } from 'node:fs/promises';
import { ToolError } from './errors';

/** The plugin's own directories: its bundle and its data (staged batches of every owner). */
function ownDirectories(): string[] {
  return [process.env['SWITCHYARD_PLUGIN_DATA'], process.env['SWITCHYARD_PLUGIN_ROOT']]
    .filter((d): d is string => !!d && isAbsolute(d))
    .map((d) => normalize(d).replace(/[\\/]+$/, ''));
}

/**
 * Paths arrive from run inputs and earlier steps: only absolute paths, never with a `..` segment
 * (even one that would normalise away), never with a NUL byte, never inside the plugin's own
 * directories (the data directory holds every owner's staged batches). The sandbox confines the
 * server to its grants anyway; this refuses the attempt with a sentence instead of an I/O error.
 */
export function checkPath(path: string, what: string): string {
  if (path.includes('\0')) throw new ToolError(`${what} contains a NUL byte`);
  if (!isAbsolute(path)) throw new ToolError(`${what} must be an absolute path; got ${JSON.stringify(path)}`);
  if (path.split(/[\\/]+/).includes('..'))
    throw new ToolError(`${what} may not contain ".." segments; got ${JSON.stringify(path)}`);
  const normal = normalize(path);
  if (ownDirectories().some((d) => normal === d || normal.startsWith(d + sep)))
    throw new ToolError(
      `${what} ${normal} is inside the plugin's own directories; give a file or folder of the run`,
    );
  return normal;
}

/** The data directory itself is checked like any path, except against itself. */
export function checkDataDir(path: string): string {
  if (!isAbsolute(path) || path.split(/[\\/]+/).includes('..'))
    throw new ToolError('SWITCHYARD_PLUGIN_DATA must be an absolute path without ".." segments');
  return normalize(path);
}

/** A regular file at a checked path, at most `maxBytes`; its size. */
export async function checkFile(path: string, what: string, maxBytes: number): Promise<number> {
  const checked = checkPath(path, what);
  let info;
  try {
    info = await stat(checked);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new ToolError(`${what} ${checked} does not exist`);
    if (code === 'EACCES') throw new ToolError(`${what} ${checked} is not readable here`);
    throw new ToolError(`${what} ${checked} cannot be read: ${(err as Error).message}`);
  }
  if (!info.isFile()) throw new ToolError(`${what} ${checked} is not a file`);
  if (info.size > maxBytes)
    throw new ToolError(`${what} ${checked} is ${info.size} bytes; at most ${maxBytes} are accepted`);
  return info.size;
}
