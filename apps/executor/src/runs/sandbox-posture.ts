import { Inject, Injectable } from '@nestjs/common';
import {
  AppError,
  sandboxWeakenedMessage,
  type PluginPosture,
  type SandboxPosture,
} from '@switchyard/contracts';
import type { Logger } from '@switchyard/server-observability';
import { LOGGER, POSTURE_SOURCE, type PostureSource } from '@switchyard/server-runtime';

/** How long a posture read for a new run is reused (derived runs always ask afresh). */
const POSTURE_TTL_MS = 1_000;

/**
 * The plugin sandbox posture runs are created under and checked against. A new run records the
 * posture of the moment (null when the registry cannot say: nothing is held for it later). Resume,
 * fork and rewind of a run created sandboxed are refused while plugins run unsandboxed: the run was
 * approved and planned under isolation that no longer holds.
 */
@Injectable()
export class RunPosture {
  private recent: { value: PluginPosture; at: number } | undefined;
  private asking: Promise<SandboxPosture | null> | undefined;

  constructor(
    @Inject(POSTURE_SOURCE) private readonly source: PostureSource,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** For a new run: the current posture, or null when it cannot be learned now. */
  async forNewRun(): Promise<SandboxPosture | null> {
    if (this.recent && Date.now() - this.recent.at <= POSTURE_TTL_MS) return this.recent.value.posture;
    // Concurrent starts (a batch) share one call.
    this.asking ??= this.ask().finally(() => (this.asking = undefined));
    return this.asking;
  }

  private async ask(): Promise<SandboxPosture | null> {
    try {
      const value = await this.source.current();
      this.recent = { value, at: Date.now() };
      return value.posture;
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message },
        'plugin sandbox posture unknown: the run records none',
      );
      return null;
    }
  }

  /** Refuses to derive from a run created sandboxed while plugins run unsandboxed (or unknown). */
  async assertDerivable(runId: string, createdUnder: string | null, what: string): Promise<void> {
    if (createdUnder !== 'sandboxed') return;
    let now: PluginPosture;
    try {
      now = await this.source.current();
    } catch (err) {
      throw new AppError(
        'unavailable',
        `cannot ${what} run ${runId}: it was created sandboxed and the tool registry cannot confirm plugins still are (${(err as Error).message}); try again`,
      );
    }
    this.recent = { value: now, at: Date.now() };
    if (now.posture === 'sandboxed') return;
    throw new AppError(
      'sandbox_weakened',
      `cannot ${what}: ${sandboxWeakenedMessage(`run ${runId}`, now.reason)}`,
      {
        details: { createdUnder, posture: now.posture, ...(now.reason ? { reason: now.reason } : {}) },
      },
    );
  }
}
