import { isAbsolute, normalize } from 'node:path';
import { stat } from 'node:fs/promises';
import { ToolError } from './errors';

/**
 * Paths arrive from run inputs and earlier steps: only absolute paths, never with a `..` segment
 * (even one that would normalise away), never with a NUL byte. The sandbox confines the server to
 * its grants anyway; this refuses the attempt with a sentence instead of an obscure I/O error.
 */
export function checkPath(path: string, what: string): string {
  if (path.includes('\0')) throw new ToolError(`${what} contains a NUL byte`);
  if (!isAbsolute(path)) throw new ToolError(`${what} must be an absolute path; got ${JSON.stringify(path)}`);
  if (path.split(/[\\/]+/).includes('..'))
    throw new ToolError(`${what} may not contain ".." segments; got ${JSON.stringify(path)}`);
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
