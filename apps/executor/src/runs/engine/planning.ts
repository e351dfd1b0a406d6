import {
  AppError,
  Events,
  Rpc,
  type AgentPlan,
  type RunConfig,
  type ResolvedGrant,
  type RunFailed,
  type ToolDescriptor,
} from '@switchyard/contracts';
import { validatePlan } from '@switchyard/plan';
import type { BusPort } from '@switchyard/server-bus';
import { storableText } from '@switchyard/server-db';
import type { CallContext } from '@switchyard/server-observability';
import type { RunWriter } from './run-writer';

/** What every part of the engine knows of the run it works on. */
export interface RunBasics {
  readonly runId: string;
  readonly ctx: CallContext;
  readonly goal: string;
  readonly config: RunConfig;
  readonly inputs: Record<string, unknown>;
  readonly files: readonly string[];
  /** The run's file grants (told to the planner by name and kind, never by path). */
  readonly grants?: readonly ResolvedGrant[];
  readonly tools: ReadonlyMap<string, ToolDescriptor>;
  readonly bus: BusPort;
  readonly writer: RunWriter;
}

export interface DraftRequest extends RunBasics {
  readonly timeoutMs: number;
  /** The run's agent's system prompt, for the planner to put first. */
  readonly agentPrompt?: string;
  /** Tokens the run may still spend on drafts. */
  readonly maxTokens?: number;
  /** Tokens arriving after the run closed are not written. */
  readonly closed: () => boolean;
}

/** A drafted plan, validated; or why there is none, as the run's failure. `tokens`: what the drafts spent. */
export type Draft =
  | { readonly ok: true; readonly plan: AgentPlan; readonly attempts: number; readonly tokens: number }
  | { readonly ok: false; readonly failure: RunFailed; readonly tokens: number };

/** Tokens are written in batches this far apart: a live view, not one row per token. */
const TOKEN_FLUSH_MS = 25;

/**
 * Asks the planner for a plan, relaying its tokens as plan_token events, and checks the plan it
 * returns. Never throws: a refusal, an invalid plan or a failed call is a `Draft` with the failure.
 */
export async function draftPlan(req: DraftRequest): Promise<Draft> {
  const { bus, writer, runId, ctx, config } = req;
  let buffered = '';
  let attempt = 1;
  let timer: NodeJS.Timeout | undefined;
  const flushTokens = () => {
    timer = undefined;
    if (!buffered || req.closed()) return;
    // Tokens are a live view (the plan travels in the reply): what the log cannot store is shown as U+FFFD.
    const text = storableText(buffered);
    buffered = '';
    writer.emit('plan_token', { text, attempt }).catch(() => undefined);
  };
  const unsubscribe = bus.on(Events.planTokens(runId), (tokens) => {
    if (tokens.runId !== runId) return;
    if (tokens.attempt !== attempt) {
      flushTokens();
      attempt = tokens.attempt;
    }
    buffered += tokens.text;
    timer ??= setTimeout(flushTokens, TOKEN_FLUSH_MS);
  });
  try {
    const tools = [...req.tools.values()].filter(
      (t) => config.capabilityMode !== 'read-only' || t.effect === 'read',
    );
    const result = await bus.call(
      Rpc.planner.draft,
      {
        runId,
        goal: req.goal,
        tools,
        inputNames: Object.keys(req.inputs),
        ...(config.model ? { model: config.model } : {}),
        ...(req.files.length ? { files: [...req.files] } : {}),
        ...(req.grants?.length
          ? {
              grants: req.grants.map((g) => ({
                name: g.name,
                kind: g.kind,
                directory: g.directory,
                writable: g.writable,
              })),
            }
          : {}),
        ...(req.agentPrompt ? { agentPrompt: req.agentPrompt } : {}),
        ...(req.maxTokens !== undefined ? { maxTokens: req.maxTokens } : {}),
      },
      { ctx, timeoutMs: req.timeoutMs },
    );
    unsubscribe();
    if (timer) clearTimeout(timer);
    flushTokens();
    const tokens = result.tokens ?? 0;
    // What of the owner's memory the prompt carried, for a person reading the log (before plan_ready).
    if (result.memories?.length && !req.closed()) {
      await writer.emit('memory_injected', { memories: result.memories });
    }
    if (!result.ok) {
      return {
        ok: false,
        tokens,
        failure: {
          message: result.message,
          code: 'validation_failed',
          issues: result.issues,
          attempts: result.attempts,
        },
      };
    }
    // The planner validated against the same catalog; a read-only run re-checks its own rule.
    const checked = validatePlan(result.plan, {
      tools: req.tools,
      inputNames: Object.keys(req.inputs),
      readOnly: config.capabilityMode === 'read-only',
    });
    if (!checked.ok) {
      return {
        ok: false,
        tokens,
        failure: {
          message: 'the drafted plan is not valid',
          code: 'validation_failed',
          issues: checked.issues,
        },
      };
    }
    return { ok: true, plan: checked.plan, attempts: result.attempts, tokens };
  } catch (err) {
    unsubscribe();
    if (timer) clearTimeout(timer);
    return {
      ok: false,
      tokens: 0,
      failure:
        err instanceof AppError
          ? { message: err.message, code: err.code }
          : { message: `planning failed: ${(err as Error).message}`, code: 'internal' },
    };
  }
}
