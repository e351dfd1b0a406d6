import { Inject, Injectable } from '@nestjs/common';
import {
  AppError,
  sandboxWeakenedMessage,
  type PluginPosture,
  type SandboxPosture,
} from '@switchyard/contracts';
import type { Logger } from '@switchyard/server-observability';
import { LOGGER, POSTURE_SOURCE, type PostureSource } from '@switchyard/server-runtime';

/** How long the scheduler reuses a posture it learned (ticks run every 200 ms). */
const POSTURE_TTL_MS = 1_000;

/**
 * Schedules and webhook triggers record the plugin sandbox posture they are created under; one
 * created sandboxed is held while plugins run unsandboxed (or while the registry cannot say: fail
 * closed) and goes on when the sandbox is back. A new one whose posture cannot be learned records
 * none, and nothing holds it.
 */
@Injectable()
export class TriggerPosture {
  private recent: { value: PluginPosture | undefined; at: number } | undefined;
  private asking: Promise<PluginPosture | undefined> | undefined;

  constructor(
    @Inject(POSTURE_SOURCE) private readonly source: PostureSource,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** The current posture; undefined when the registry does not answer. Concurrent askers share one call. */
  async now(): Promise<PluginPosture | undefined> {
    if (this.recent && Date.now() - this.recent.at <= POSTURE_TTL_MS) return this.recent.value;
    this.asking ??= this.ask().finally(() => (this.asking = undefined));
    return this.asking;
  }

  private async ask(): Promise<PluginPosture | undefined> {
    let value: PluginPosture | undefined;
    try {
      value = await this.source.current();
    } catch (err) {
      // Once per outage, not once a tick.
      if (!this.recent || this.recent.value)
        this.logger.warn(
          { err: (err as Error).message },
          'plugin sandbox posture unknown: schedules and triggers created sandboxed are held',
        );
    }
    this.recent = { value, at: Date.now() };
    return value;
  }

  async forNew(): Promise<SandboxPosture | null> {
    return (await this.now())?.posture ?? null;
  }

  /** True while things created sandboxed must not fire. */
  async holdSandboxed(): Promise<boolean> {
    return (await this.now())?.posture !== 'sandboxed';
  }

  /** Why something created under `createdUnder` is held now, or null. */
  async heldReason(createdUnder: SandboxPosture | null, what: string): Promise<string | null> {
    if (createdUnder !== 'sandboxed') return null;
    const now = await this.now();
    if (now?.posture === 'sandboxed') return null;
    return now
      ? sandboxWeakenedMessage(what, now.reason)
      : `${what} was created while plugins ran sandboxed, and the tool registry cannot confirm they still do; it waits until it can`;
  }

  /** Refuses (409 sandbox_weakened) while something created sandboxed is held. */
  async assertNotHeld(createdUnder: SandboxPosture | null, what: string): Promise<void> {
    const reason = await this.heldReason(createdUnder, what);
    if (reason) throw new AppError('sandbox_weakened', reason, { details: { createdUnder } });
  }
}
