import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Controller, Inject, Req, Res } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { AppError, Routes, Rpc, type FilePage, type StoredFile } from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { fileBlobPath, stagedUploadPath, type AppConfig } from '@switchyard/server-config';
import { APP_CONFIG, BUS } from '@switchyard/server-runtime';
import { asCaller, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';
import { streamUpload } from '../http/stream-upload';

const UPLOAD_PATH = '/api/files';

/** The upload's own Content-Type, put aside by `installUploadBodyBypass`. */
const UPLOAD_TYPE = Symbol('upload content type');
type UploadRequest = Request & { [UPLOAD_TYPE]?: string };

/**
 * Uploads are streamed by their handler, never parsed: the JSON body parser (body-parser 2 decides
 * by content type alone) would swallow an `application/json` upload, so the type is put aside and
 * the request shown to the parsers as opaque bytes.
 */
export function installUploadBodyBypass(app: NestExpressApplication): void {
  app.use(UPLOAD_PATH, (req: UploadRequest, _res: Response, next: NextFunction) => {
    if (req.method === 'POST' && (req.path === '/' || req.path === '')) {
      req[UPLOAD_TYPE] = req.headers['content-type'] ?? '';
      req.headers['content-type'] = 'application/octet-stream';
    }
    next();
  });
}

function tooLarge(limit: number): AppError {
  return new AppError('payload_too_large', `a file may have at most ${limit} bytes`, {
    details: { limitBytes: limit },
  });
}

/**
 * `/api/files`. The tool registry owns the files; the gateway only moves bytes: an upload is
 * streamed to FILES_DIR/incoming (counted and hashed on the way, cut off at the limit), then handed
 * to the registry; a download streams the blob once the registry has said it is the caller's.
 */
@Controller()
export class FilesController {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Endpoint(Routes.fileUpload)
  async upload(
    @In() input: Input<typeof Routes.fileUpload>,
    @Req() req: GatewayRequest,
  ): Promise<StoredFile> {
    const limit = this.config.files.uploadLimitBytes;
    const stagedId = randomUUID();
    const staged = stagedUploadPath(this.config.files.dir, stagedId);
    const { size, sha256 } = await streamUpload(req, staged, limit, () => tooLarge(limit));
    const declaredType = (req as UploadRequest)[UPLOAD_TYPE] ?? req.headers['content-type'] ?? '';
    const type = declaredType.split(';')[0]?.trim().slice(0, 255) ?? '';
    try {
      return await this.bus.call(
        Rpc.registry.fileAdopt,
        {
          stagedId,
          name: input.query.name,
          contentType: type || 'application/octet-stream',
          size,
          sha256,
        },
        asCaller(req),
      );
    } finally {
      // The registry moves it on success; whatever is left is an abandoned upload.
      await rm(staged, { force: true });
    }
  }

  @Endpoint(Routes.fileList)
  list(@In() input: Input<typeof Routes.fileList>, @Req() req: GatewayRequest): Promise<FilePage> {
    return this.bus.call(Rpc.registry.fileList, input.query, asCaller(req));
  }

  @Endpoint(Routes.fileGet)
  get(@In() input: Input<typeof Routes.fileGet>, @Req() req: GatewayRequest): Promise<StoredFile> {
    return this.bus.call(Rpc.registry.fileGet, { id: input.params.id }, asCaller(req));
  }

  @Endpoint(Routes.fileContent)
  async content(
    @In() input: Input<typeof Routes.fileContent>,
    @Req() req: GatewayRequest,
    @Res() res: Response,
  ): Promise<void> {
    const caller = asCaller(req);
    const file = await this.bus.call(Rpc.registry.fileGet, { id: input.params.id }, caller);
    const ownerId = caller.ctx.ownerId as string;
    const blob = fileBlobPath(this.config.files.dir, ownerId, file.id);
    // An attachment that is never sniffed: an uploaded page cannot run as this origin's script.
    res.attachment(file.name);
    res.setHeader('content-type', file.contentType);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('content-security-policy', "sandbox; default-src 'none'");
    res.setHeader('content-length', String(file.size));
    await pipeline(createReadStream(blob), res);
  }

  @Endpoint(Routes.fileDelete)
  delete(@In() input: Input<typeof Routes.fileDelete>, @Req() req: GatewayRequest): Promise<StoredFile> {
    return this.bus.call(Rpc.registry.fileDelete, { id: input.params.id }, asCaller(req));
  }
}
