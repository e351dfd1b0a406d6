import { Inject, Injectable, Optional, type OnModuleInit } from '@nestjs/common';
import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { AppError, PluginEnv, type PluginManifest, type PluginSandboxStatus } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import type { Logger } from '@switchyard/server-observability';
import { APP_CONFIG, HealthService, LOGGER } from '@switchyard/server-runtime';
import type { ProcessLaunch } from '../mcp/mcp-connection';
import { BwrapArgs, findProgram, probeBwrap, visibleInSandbox, type SandboxStatus } from '../sandbox/bwrap';

/** A host path a caller shows one launch of a plugin server (e.g. a run's granted files). */
export interface ExtraBind {
  readonly hostPath: string;
  /** Where the server sees it; ignored when unsandboxed (the server then sees `hostPath`). */
  readonly sandboxPath: string;
  readonly writable: boolean;
}

/** What one launch of a plugin server needs to know of the plugin. */
export interface PluginLaunchSpec {
  readonly id: string;
  readonly manifest: PluginManifest;
  readonly installDir: string;
  readonly dataDir: string;
  /** The manifest asks for network access and an admin granted it. */
  readonly network: boolean;
  /** SWITCHYARD_PLUGIN_CONFIG: the admin's settings as JSON, secrets decrypted. */
  readonly configJson: string;
  readonly binds: readonly ExtraBind[];
}

const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';
/** The SDK's default variables a sandboxed server must not inherit (it gets ours only). */
const SDK_DEFAULTS = ['LOGNAME', 'USER', 'SHELL', 'TERM'];

export const HOW_TO_SANDBOX =
  'Install bubblewrap (Debian: apt-get install bubblewrap), allow user namespaces on the host, keep ' +
  'PLUGIN_SANDBOX=bwrap and restart the tool registry.';

/**
 * Where plugin servers run: inside bubblewrap when the host can (probed once at start), else, as
 * the documented fallback, as plain child processes (`unsandboxed`, with the reason). Sandboxed, a
 * server sees the system's program directories and Node read-only, its bundle read-only at its own
 * path, its data directory read-write, a private /tmp, the binds of its launch and nothing else;
 * it gets a network only when the manifest asks and an admin granted it.
 */
@Injectable()
export class PluginSandbox implements OnModuleInit {
  private current: SandboxStatus = { available: false, reason: 'not probed yet' };
  private readonly bwrap = new BwrapArgs();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Optional() private readonly health?: HealthService,
  ) {}

  async onModuleInit(): Promise<void> {
    this.current = await probeBwrap({
      off: this.config.plugins.sandbox === 'none' ? 'PLUGIN_SANDBOX=none' : undefined,
      configured: this.config.tools.sandbox.bin,
      path: this.config.tools.commandPath,
    });
    this.health?.addFeature('pluginSandbox', () =>
      this.current.available
        ? { status: 'available', detail: `plugin servers run inside bubblewrap (${this.current.bin})` }
        : {
            status: 'unavailable',
            detail: `plugin servers run unsandboxed: ${this.current.reason}. ${HOW_TO_SANDBOX}`,
          },
    );
    if (this.current.available) this.logger.info({ bwrap: this.current.bin }, 'plugin sandbox available');
    else this.logger.warn({ reason: this.current.reason }, 'plugin servers run unsandboxed');
  }

  /** The posture plugin servers started now run under, and why when unsandboxed. */
  status(): PluginSandboxStatus {
    return this.current.available
      ? { posture: 'sandboxed' }
      : { posture: 'unsandboxed', reason: this.current.reason };
  }

  /** The platform's Node (`node` in a manifest means it): its real file, shown read-only. */
  private async nodeBinary(): Promise<{ path: string; real: string }> {
    return { path: process.execPath, real: await realpath(process.execPath) };
  }

  private async command(spec: PluginLaunchSpec): Promise<string> {
    const c = spec.manifest.server.command;
    if (c === 'node') return process.execPath;
    if (c.startsWith('${root}/')) return join(spec.installDir, c.slice('${root}/'.length));
    if (isAbsolute(c)) return c;
    const found = await findProgram(c, SYSTEM_PATH);
    if (!found) throw new AppError('unavailable', `plugin ${spec.id}: no program ${c} on ${SYSTEM_PATH}`);
    return found;
  }

  /** How to start one server of a plugin: through bwrap, or (unsandboxed) directly. */
  async launch(spec: PluginLaunchSpec): Promise<ProcessLaunch> {
    const command = await this.command(spec);
    const args = spec.manifest.server.args.map((a) => a.split('${root}').join(spec.installDir));
    const node = await this.nodeBinary();
    const nodeDir = dirname(node.path);
    const path = visibleInSandbox(nodeDir) ? SYSTEM_PATH : `${nodeDir}:${SYSTEM_PATH}`;
    // Through the process environment, not bwrap's argv: settings may hold secrets, and a command
    // line is readable by every user of the host.
    const env: Record<string, string> = {
      PATH: path,
      HOME: spec.dataDir,
      TMPDIR: '/tmp',
      LANG: 'C.UTF-8',
      [PluginEnv.root]: spec.installDir,
      [PluginEnv.data]: spec.dataDir,
      [PluginEnv.config]: spec.configJson,
    };
    if (!this.current.available) return { command, args, env, cwd: spec.installDir };
    const binds = [
      ...(visibleInSandbox(nodeDir) && visibleInSandbox(dirname(node.real))
        ? []
        : [{ host: node.real, at: node.path, writable: false }]),
      { host: spec.installDir, at: spec.installDir, writable: false },
      { host: spec.dataDir, at: spec.dataDir, writable: true },
      ...spec.binds.map((b) => ({ host: b.hostPath, at: b.sandboxPath, writable: b.writable })),
    ];
    const bwrapArgs = await this.bwrap.build({
      network: spec.network,
      cwd: spec.installDir,
      binds,
      command: [command, ...args],
      unsetenv: SDK_DEFAULTS,
    });
    return { command: this.current.bin, args: bwrapArgs, env, cwd: '/' };
  }
}
