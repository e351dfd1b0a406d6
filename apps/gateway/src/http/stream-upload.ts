import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '@switchyard/contracts';
import type { GatewayRequest } from './endpoint';

export interface StreamedUpload {
  readonly size: number;
  readonly sha256: string;
}

/**
 * A body refused by its Content-Length is read and dropped up to this size, so the client (which is
 * still sending) gets its 413 cleanly; past it, the connection is closed instead of reading on.
 */
const DRAIN_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Streams a request body into `file` (created 0600, never over an existing one), counted and hashed
 * on the way and cut off past `limitBytes`. A Content-Length already over the limit is refused before
 * a byte is stored; a body cut off midway closes the connection. Nothing of a refused upload is kept.
 */
export async function streamUpload(
  req: GatewayRequest,
  file: string,
  limitBytes: number,
  tooLarge: () => AppError,
): Promise<StreamedUpload> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) {
    if (declared <= DRAIN_MAX_BYTES) req.resume();
    else req.res?.setHeader('connection', 'close');
    throw tooLarge();
  }
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > limitBytes) return done(tooLarge());
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(req, meter, createWriteStream(file, { flags: 'wx', mode: 0o600 }));
  } catch (err) {
    await rm(file, { force: true });
    if (err instanceof AppError) {
      req.res?.setHeader('connection', 'close');
      throw err;
    }
    throw new AppError('validation_failed', `the upload did not complete: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return { size, sha256: hash.digest('hex') };
}
