import { Inject, Injectable } from '@nestjs/common';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';
import type { z } from 'zod';
import {
  AppError,
  Events,
  memoryPrompt,
  type CheckModelResult,
  type DraftPlanRequest,
  type DraftPlanResult,
  type InjectedMemory,
  type ModelSettings,
  type PlanIssue,
} from '@switchyard/contracts';
import { validatePlan, type ValidationResult } from '@switchyard/plan';
import type { Bus } from '@switchyard/server-bus';
import type { AppConfig } from '@switchyard/server-config';
import { createChatModel, effectiveModel } from '@switchyard/server-agents';
import type { Logger } from '@switchyard/server-observability';
import { APP_CONFIG, BUS, LOGGER } from '@switchyard/server-runtime';
import { extractJsonObject } from './extract-json';
import { correctionPrompt, systemPrompt, userPrompt, withAgentPrompt } from './prompt';
import { TokenBatcher } from './token-batcher';

/** The first answer plus two corrections: a model that misses three times rarely gets it on a fourth. */
export const MAX_DRAFT_ATTEMPTS = 3;

/** How many issues the failure message quotes; the result carries all of them. */
const QUOTED_ISSUES = 3;

const firstLine = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';

/**
 * Any failure of the model call: HTTP errors, refused connections, timeouts. Clients wrap network
 * errors ("Connection error.") around the one that says what happened, so that one is quoted too.
 */
export function modelFailure(err: unknown): AppError {
  if (err instanceof AppError) return err;
  let root = err;
  while (root instanceof Error && root.cause !== undefined) root = root.cause;
  const reason = root !== err && firstLine(root) ? ` (${firstLine(root)})` : '';
  return new AppError('unavailable', `the language model failed: ${firstLine(err)}${reason}`, { cause: err });
}

/**
 * Drafts plans with the configured chat model: the model writes the plan as JSON (no tools bound),
 * its tokens stream to `planTokensSubject(runId)` as they arrive, and an invalid draft goes back to
 * the model with every issue until it is valid or the attempts are spent.
 */
@Injectable()
export class PlanDrafter {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** The provider and model a draft with these overrides would use, or `model_not_configured`. */
  checkModel(overrides?: ModelSettings): z.infer<typeof CheckModelResult> {
    createChatModel(this.config.llm, overrides);
    const { provider, model } = effectiveModel(this.config.llm, overrides);
    // createChatModel has refused already when either is missing.
    return { provider: provider ?? '', model: model ?? '' };
  }

  /** `memories`: the owner's memories relevant to the goal, added after it (none while memory is off). */
  async draft(req: DraftPlanRequest, memories: readonly InjectedMemory[] = []): Promise<DraftPlanResult> {
    const model = createChatModel(this.config.llm, req.model);
    const user = memories.length ? `${userPrompt(req)}\n\n${memoryPrompt(memories)}` : userPrompt(req);
    const messages: BaseMessage[] = [
      new SystemMessage(withAgentPrompt(systemPrompt(req.tools), req.agentPrompt)),
      new HumanMessage(user),
    ];
    const injected = memories.length ? { memories: [...memories] } : {};
    let issues: PlanIssue[] = [];
    // What the drafts spent, from the model's usage metadata (the run's budget counts it).
    let tokens = 0;
    let attempts = 0;
    try {
      for (let attempt = 1; attempt <= MAX_DRAFT_ATTEMPTS; attempt++) {
        attempts = attempt;
        const { text: answer, tokens: spent } = await this.stream(model, messages, req.runId, attempt);
        tokens += spent;
        const checked = this.check(answer, req);
        if (checked.ok) {
          this.logger.info({ runId: req.runId, attempt, steps: checked.plan.steps.length }, 'plan drafted');
          return { ok: true, plan: checked.plan, attempts: attempt, tokens, ...injected };
        }
        issues = checked.issues;
        this.logger.info(
          { runId: req.runId, attempt, issues: issues.slice(0, 10) },
          `draft ${attempt} of ${MAX_DRAFT_ATTEMPTS} is not a valid plan`,
        );
        // Over the run's token budget: no repair is asked for (the run ends with budget_exceeded).
        if (req.maxTokens !== undefined && tokens > req.maxTokens) break;
        messages.push(new AIMessage(answer), new HumanMessage(correctionPrompt(issues)));
      }
    } finally {
      await this.flushTokens();
    }
    const quoted = issues
      .slice(0, QUOTED_ISSUES)
      .map((i) => `${i.path}: ${i.message}`)
      .join('; ');
    const more = issues.length > QUOTED_ISSUES ? ` (and ${issues.length - QUOTED_ISSUES} more)` : '';
    return {
      ok: false,
      issues,
      attempts,
      message: `the model did not produce a valid plan after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${quoted}${more}`,
      tokens,
      ...injected,
    };
  }

  private check(answer: string, req: DraftPlanRequest): ValidationResult {
    const json = extractJsonObject(answer);
    if (!json.ok) return { ok: false, issues: [{ path: '$', code: 'invalid', message: json.error }] };
    return validatePlan(json.value, {
      tools: req.tools,
      ...(req.inputNames ? { inputNames: req.inputNames } : {}),
    });
  }

  /**
   * One completion, published in order as it arrives; the whole text once it has ended, with the
   * tokens the model reported (0 from a model that reports none).
   */
  private async stream(
    model: BaseChatModel,
    messages: BaseMessage[],
    runId: string,
    attempt: number,
  ): Promise<{ text: string; tokens: number }> {
    const subject = Events.planTokens(runId);
    const tokens = new TokenBatcher((text) => {
      try {
        this.bus.emit(subject, { runId, attempt, text });
      } catch (err) {
        // Tokens are a live view; the plan itself travels in the reply.
        this.logger.warn({ err, runId }, 'could not publish plan tokens');
      }
    });
    let answer = '';
    let spent = 0;
    try {
      for await (const chunk of await model.stream(messages)) {
        const text = chunk.text;
        answer += text;
        tokens.push(text);
        spent += chunk.usage_metadata?.total_tokens ?? 0;
      }
    } catch (err) {
      throw modelFailure(err);
    } finally {
      tokens.end();
    }
    return { text: answer, tokens: spent };
  }

  /**
   * Tokens leave on the service's client connection and the reply on the server's: a round trip on
   * the client connection first means the server has routed every token before the reply exists.
   */
  private async flushTokens(): Promise<void> {
    await this.bus.ping().catch(() => undefined);
  }
}
