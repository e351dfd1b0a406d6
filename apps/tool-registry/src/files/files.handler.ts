import { Controller } from '@nestjs/common';
import {
  Rpc,
  type AdoptUpload,
  type FileIdParam,
  type FileListQuery,
  type FilePage,
  type GrantFilesRequest,
  type GrantFilesResult,
  type StoredFile,
} from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';
import { Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { FilesService } from './files.service';

/** registry.files.*: uploads (adopted from the gateway's staging area) and run file grants. */
@Controller()
export class FilesHandler {
  constructor(private readonly files: FilesService) {}

  @RpcHandler(Rpc.registry.fileAdopt)
  adopt(@RpcPayload(Rpc.registry.fileAdopt) req: AdoptUpload, @Caller() c: CallContext): Promise<StoredFile> {
    return this.files.adopt(req, c);
  }

  @RpcHandler(Rpc.registry.fileList)
  list(@RpcPayload(Rpc.registry.fileList) q: FileListQuery, @Caller() c: CallContext): Promise<FilePage> {
    return this.files.list(q, c);
  }

  @RpcHandler(Rpc.registry.fileGet)
  get(@RpcPayload(Rpc.registry.fileGet) p: FileIdParam, @Caller() c: CallContext): Promise<StoredFile> {
    return this.files.get(p.id, c);
  }

  @RpcHandler(Rpc.registry.fileDelete)
  delete(@RpcPayload(Rpc.registry.fileDelete) p: FileIdParam, @Caller() c: CallContext): Promise<StoredFile> {
    return this.files.delete(p.id, c);
  }

  @RpcHandler(Rpc.registry.fileGrant)
  async grant(
    @RpcPayload(Rpc.registry.fileGrant) req: GrantFilesRequest,
    @Caller() c: CallContext,
  ): Promise<GrantFilesResult> {
    return { grants: await this.files.grant(req, c) };
  }
}
