import { Inject, Injectable, Optional, type OnModuleInit } from '@nestjs/common';
import { delimiter } from 'node:path';
import type { AppConfig } from '@switchyard/server-config';
import type { Logger } from '@switchyard/server-observability';
import { APP_CONFIG, HealthService, LOGGER } from '@switchyard/server-runtime';
import { BwrapArgs, probeBwrap, visibleInSandbox, type SandboxStatus } from '../sandbox/bwrap';
import type { WorkspaceView } from './workspace.guard';

export { findProgram } from '../sandbox/bwrap';

export const HOW_TO_ENABLE =
  'An admin can enable it: install bubblewrap (Debian: apt-get install bubblewrap), make sure the host ' +
  'allows user namespaces (sysctl kernel.unprivileged_userns_clone=1; in a container, a seccomp profile ' +
  'that permits clone/unshare of namespaces), keep COMMAND_SANDBOX=bwrap, and restart the tool registry.';

/**
 * Confines execute_command with bubblewrap: new PID, IPC, UTS, cgroup, user and network
 * namespaces, uid nobody with no capabilities, the system's program directories read-only, a
 * private /tmp and /proc, and nothing else of the host but the owner's view of the workspace (bound
 * read-write at the workspace's own path, shared folders as their mode says). The repository, `.env`,
 * other owners' areas and other processes' environments are simply not there.
 *
 * Whether the host can sandbox is probed once at start (a real bwrap run of `true`).
 */
@Injectable()
export class CommandSandbox implements OnModuleInit {
  private current: SandboxStatus = { available: false, reason: 'not probed yet' };

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Optional() private readonly health?: HealthService,
  ) {}

  get status(): SandboxStatus {
    return this.current;
  }

  async onModuleInit(): Promise<void> {
    this.current = await this.probe();
    this.health?.addFeature('commandSandbox', () =>
      this.current.available
        ? { status: 'available', detail: `execute_command runs inside bubblewrap (${this.current.bin})` }
        : {
            status: 'unavailable',
            detail: `execute_command is refused to non-admins: ${this.current.reason}. ${HOW_TO_ENABLE}`,
          },
    );
    if (this.current.available) this.logger.info({ bwrap: this.current.bin }, 'command sandbox available');
    else
      this.logger.warn(
        { reason: this.current.reason },
        'command sandbox unavailable: execute_command is refused to non-admins',
      );
  }

  /** PATH inside the sandbox: the configured PATH's entries that the sandbox shows (system dirs). */
  get path(): string {
    return this.config.tools.commandPath
      .split(delimiter)
      .filter((d) => d && visibleInSandbox(d))
      .join(delimiter);
  }

  private readonly bwrap = new BwrapArgs();

  probe(): Promise<SandboxStatus> {
    const { kind, bin } = this.config.tools.sandbox;
    return probeBwrap({
      off: kind === 'none' ? 'COMMAND_SANDBOX=none' : undefined,
      configured: bin,
      path: this.config.tools.commandPath,
    });
  }

  /** bwrap's arguments to run `command` with the owner's view of the workspace. */
  async argsFor(view: WorkspaceView, command: readonly string[]): Promise<string[]> {
    return this.args({
      cwd: view.root,
      binds: [
        { host: view.area, at: view.root, writable: true },
        ...view.mounts.map((m) => ({ host: m.hostPath, at: m.viewPath, writable: m.writable })),
      ],
      command,
    });
  }

  private args(opts: {
    cwd: string;
    binds: readonly { host: string; at: string; writable: boolean }[];
    command: readonly string[];
  }): Promise<string[]> {
    return this.bwrap.build({
      network: this.config.tools.sandbox.network,
      cwd: opts.cwd,
      binds: opts.binds,
      command: opts.command,
      setenv: {
        PATH: this.path,
        HOME: opts.cwd,
        TMPDIR: '/tmp',
        LANG: 'C.UTF-8',
        TERM: 'dumb',
        CI: 'true',
      },
    });
  }
}
