import { Controller, Inject, Req } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  AppError,
  PLUGIN_UPLOAD_LIMIT_BYTES,
  Routes,
  Rpc,
  type DeletedPlugin,
  type Plugin,
  type PluginList,
} from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { pluginIncomingDir, type AppConfig } from '@switchyard/server-config';
import { APP_CONFIG, BUS } from '@switchyard/server-runtime';
import { asCaller, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';
import { streamUpload } from '../http/stream-upload';

const tooLarge = () =>
  new AppError(
    'payload_too_large',
    `a plugin bundle may be at most ${PLUGIN_UPLOAD_LIMIT_BYTES} bytes (${PLUGIN_UPLOAD_LIMIT_BYTES / 1024 / 1024} MiB)`,
  );

/**
 * Plugins (admin only: the route table's permission, and the registry checks the role again). An
 * upload is streamed, after authentication, into the plugins directory the registry shares, then
 * installed from there like a bundle on the server: NATS carries the path, never the bytes.
 */
@Controller()
export class PluginsController {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Installing unpacks, copies and may start nothing; still more than a plain call. */
  private get installTimeoutMs(): number {
    return Math.max(this.config.rpc.timeoutMs, 60_000);
  }

  @Endpoint(Routes.pluginList)
  list(@Req() req: GatewayRequest): Promise<PluginList> {
    return this.bus.call(Rpc.registry.pluginList, {}, { ...asCaller(req), timeoutMs: 30_000 });
  }

  @Endpoint(Routes.pluginInstall)
  install(@In() input: Input<typeof Routes.pluginInstall>, @Req() req: GatewayRequest): Promise<Plugin> {
    return this.bus.call(
      Rpc.registry.pluginInstall,
      { path: input.body.path, upload: false },
      { ...asCaller(req), timeoutMs: this.installTimeoutMs },
    );
  }

  @Endpoint(Routes.pluginUpload)
  async upload(@Req() req: GatewayRequest): Promise<Plugin> {
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/gzip' && type !== 'application/x-gzip' && type !== 'application/octet-stream')
      throw new AppError(
        'validation_failed',
        'send the .tgz bundle as the body, Content-Type: application/gzip',
        {
          issues: [{ path: 'body', message: 'Content-Type must be application/gzip' }],
        },
      );
    const file = join(pluginIncomingDir(this.config), `upload-${randomUUID()}.tgz`);
    const { size } = await streamUpload(req, file, PLUGIN_UPLOAD_LIMIT_BYTES, tooLarge);
    if (size === 0) {
      await rm(file, { force: true });
      throw new AppError('validation_failed', 'the upload is empty: send the .tgz bundle as the body', {
        issues: [{ path: 'body', message: 'empty' }],
      });
    }
    // The registry removes the staged file once it has answered; when no registry answers, we do.
    try {
      return await this.bus.call(
        Rpc.registry.pluginInstall,
        { path: file, upload: true },
        { ...asCaller(req), timeoutMs: this.installTimeoutMs },
      );
    } catch (err) {
      if (err instanceof AppError && (err.code === 'unavailable' || err.code === 'timeout'))
        await rm(file, { force: true });
      throw err;
    }
  }

  @Endpoint(Routes.pluginGet)
  get(@In() input: Input<typeof Routes.pluginGet>, @Req() req: GatewayRequest): Promise<Plugin> {
    return this.bus.call(
      Rpc.registry.pluginGet,
      { id: input.params.id },
      { ...asCaller(req), timeoutMs: 30_000 },
    );
  }

  @Endpoint(Routes.pluginEnable)
  enable(@In() input: Input<typeof Routes.pluginEnable>, @Req() req: GatewayRequest): Promise<Plugin> {
    return this.bus.call(
      Rpc.registry.pluginEnable,
      { id: input.params.id },
      { ...asCaller(req), timeoutMs: 30_000 },
    );
  }

  @Endpoint(Routes.pluginDisable)
  disable(@In() input: Input<typeof Routes.pluginDisable>, @Req() req: GatewayRequest): Promise<Plugin> {
    return this.bus.call(Rpc.registry.pluginDisable, { id: input.params.id }, asCaller(req));
  }

  @Endpoint(Routes.pluginDelete)
  delete(@In() input: Input<typeof Routes.pluginDelete>, @Req() req: GatewayRequest): Promise<DeletedPlugin> {
    return this.bus.call(Rpc.registry.pluginDelete, { id: input.params.id }, asCaller(req));
  }

  @Endpoint(Routes.pluginGrants)
  grants(@In() input: Input<typeof Routes.pluginGrants>, @Req() req: GatewayRequest): Promise<Plugin> {
    return this.bus.call(Rpc.registry.pluginGrants, { id: input.params.id, body: input.body }, asCaller(req));
  }

  @Endpoint(Routes.pluginSettings)
  settings(@In() input: Input<typeof Routes.pluginSettings>, @Req() req: GatewayRequest): Promise<Plugin> {
    return this.bus.call(
      Rpc.registry.pluginSettings,
      { id: input.params.id, body: input.body },
      asCaller(req),
    );
  }
}
