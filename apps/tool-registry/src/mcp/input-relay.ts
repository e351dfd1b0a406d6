import { Inject, Injectable } from '@nestjs/common';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import {
  chatControlSubject,
  ElicitationParams,
  ElicitationReply,
  runControlSubject,
  type ElicitationAsk,
  type InputAsker,
} from '@switchyard/contracts';
import type { BusPort } from '@switchyard/server-bus';
import type { AppConfig } from '@switchyard/server-config';
import type { CallContext, Logger } from '@switchyard/server-observability';
import { APP_CONFIG, BUS, LOGGER } from '@switchyard/server-runtime';
import type { InputRelay } from './mcp-connection';

/** How much longer than the executor's own wait the registry waits for its answer. */
const RELAY_GRACE_MS = 30_000;

/** The call a relay answers for (set by the executor on the invocation). */
export interface AskingCall {
  readonly asker: InputAsker;
  readonly invocationId: string;
  readonly ctx: CallContext;
  /** Stops the call's deadline while the person is asked; the returned function starts it again. */
  readonly pause: () => () => void;
}

/** Where the replica driving the run or chat listens. */
export function askerSubject(asker: InputAsker): string {
  return asker.kind === 'run' ? runControlSubject(asker.runId) : chatControlSubject(asker.sessionId);
}

/** The server's request as the platform keeps it; undefined when it cannot be shown (then declined). */
export function requestOf(params: ElicitRequest['params']): ElicitationParams | undefined {
  const p = params as Record<string, unknown>;
  const message = typeof p['message'] === 'string' ? p['message'].slice(0, 10_000) : '';
  const parsed = ElicitationParams.safeParse({ ...p, mode: p['mode'] ?? 'form', message });
  return parsed.success ? parsed.data : undefined;
}

/**
 * Relays a server's input request to the replica driving the run or chat the call is for (its
 * control subject), which records it, shows it to the person or declines it (an unattended run),
 * waits (ELICITATION_TIMEOUT_MS at most) and answers; the call's deadline stands still meanwhile.
 */
@Injectable()
export class InputRelays {
  constructor(
    @Inject(BUS) private readonly bus: BusPort,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  relay(call: AskingCall, tool: string, server: string): InputRelay {
    return async (params): Promise<ElicitResult> => {
      const request = requestOf(params);
      if (!request) {
        this.logger.warn(
          { tool, server, mode: (params as { mode?: unknown }).mode },
          'mcp server asked for input the platform cannot show (not a form of the spec, or a URL that is not http/https); declined',
        );
        return { action: 'decline' };
      }
      const ask: ElicitationAsk = {
        action: 'elicit',
        invocationId: call.invocationId,
        asker: call.asker,
        ...(call.ctx.ownerId ? { ownerId: call.ctx.ownerId } : {}),
        tool,
        server,
        request,
      };
      const resume = call.pause();
      try {
        const reply = ElicitationReply.parse(
          await this.bus.request(askerSubject(call.asker), ask, {
            ctx: call.ctx,
            timeoutMs: this.config.elicitation.timeoutMs + RELAY_GRACE_MS,
          }),
        );
        return reply.action === 'accept'
          ? { action: 'accept', ...(reply.content ? { content: reply.content } : {}) }
          : { action: reply.action };
      } catch (err) {
        // The run or chat stopped, its replica is gone, or it did not answer: nobody chose.
        this.logger.warn(
          { tool, server, asker: call.asker, err: (err as Error).message },
          'input request could not reach the person; answered cancel',
        );
        return { action: 'cancel' };
      } finally {
        resume();
      }
    };
  }
}
