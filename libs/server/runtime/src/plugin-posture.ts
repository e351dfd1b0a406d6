import { Inject, Injectable } from '@nestjs/common';
import { Rpc, type PluginPosture } from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { BUS } from './tokens';

/**
 * Where a service learns the plugin sandbox posture: the tool registry (`registry.plugins.posture`),
 * a fake in unit tests. The executor (runs) and the scheduler (schedules, triggers) both ask it.
 */
export interface PostureSource {
  current(): Promise<PluginPosture>;
}
export const POSTURE_SOURCE = Symbol('POSTURE_SOURCE');

/** Asks the tool registry. */
@Injectable()
export class RegistryPosture implements PostureSource {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  current(): Promise<PluginPosture> {
    return this.bus.call(Rpc.registry.pluginPosture, {});
  }
}
