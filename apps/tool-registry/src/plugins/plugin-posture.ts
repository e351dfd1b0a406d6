import { Controller, Inject, Injectable } from '@nestjs/common';
import { Rpc, type PluginPosture } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import { APP_CONFIG, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { CommandSandbox } from '../builtin/command-sandbox';

/*
 * plug-trust's stand-in for the plugin sandbox's posture: plug-core serves the same RPC from the
 * plugin sandbox itself. Keep one of the two at merge (the contract is the same).
 */

/**
 * How plugin servers run on this registry: sandboxed when PLUGIN_SANDBOX=bwrap and bubblewrap works
 * here (the command sandbox's start-up probe), otherwise unsandboxed with the reason.
 */
@Injectable()
export class PluginPostureProvider {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sandbox: CommandSandbox,
  ) {}

  current(): PluginPosture {
    if (this.config.plugins.sandbox === 'none')
      return { posture: 'unsandboxed', reason: 'the plugin sandbox is switched off (PLUGIN_SANDBOX=none)' };
    const status = this.sandbox.status;
    return status.available
      ? { posture: 'sandboxed' }
      : { posture: 'unsandboxed', reason: `bubblewrap cannot sandbox here: ${status.reason}` };
  }
}

/** `registry.plugins.posture`. */
@Controller()
export class PluginPostureHandler {
  constructor(private readonly posture: PluginPostureProvider) {}

  @RpcHandler(Rpc.registry.pluginsPosture)
  get(@RpcPayload(Rpc.registry.pluginsPosture) _: unknown): PluginPosture {
    return this.posture.current();
  }
}
