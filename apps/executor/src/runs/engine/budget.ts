import type { Budget, BudgetLimit, BudgetUsage, RunFailed } from '@switchyard/contracts';

export const NO_USAGE: BudgetUsage = { tokens: 0, toolCalls: 0, wallMs: 0 };

const LIMIT_NAMES: Record<BudgetLimit, string> = {
  maxTokens: 'model tokens',
  maxToolCalls: 'tool calls',
  maxWallMs: 'wall time (ms)',
};

/**
 * What one run spends against its budget: planning tokens, tool calls (each attempt is one) and
 * working wall time. The clock runs while the run works and stops while it only waits for a person
 * (a plan or step gate with nothing else in flight) and after it ends: a budget limits what the
 * machine spends, and a run waiting overnight for an approval has spent nothing. Pure: the run's
 * driver says when it pauses, and the clock is injected.
 */
export class BudgetMeter {
  private tokens: number;
  private toolCalls: number;
  private wallMs: number;
  /** When the clock last started, while it runs. */
  private since: number | undefined;

  constructor(
    readonly budget: Budget | undefined,
    spent: BudgetUsage = NO_USAGE,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = spent.tokens;
    this.toolCalls = spent.toolCalls;
    this.wallMs = spent.wallMs;
  }

  get running(): boolean {
    return this.since !== undefined;
  }

  /** Starts the wall clock (no-op when it runs). */
  start(): void {
    this.since ??= this.now();
  }

  /** Stops the wall clock, keeping what it counted (no-op when it is stopped). */
  stop(): void {
    if (this.since === undefined) return;
    this.wallMs += this.now() - this.since;
    this.since = undefined;
  }

  usage(): BudgetUsage {
    const wall = this.wallMs + (this.since === undefined ? 0 : this.now() - this.since);
    return { tokens: this.tokens, toolCalls: this.toolCalls, wallMs: Math.round(wall) };
  }

  /** Adds the tokens a model call spent; answers `maxTokens` once they cross the limit. */
  addTokens(n: number): BudgetLimit | undefined {
    this.tokens += n;
    const max = this.budget?.maxTokens;
    return max !== undefined && this.tokens > max ? 'maxTokens' : undefined;
  }

  /** Counts a tool call about to be made, or answers `maxToolCalls` (not counted) when it would cross the limit. */
  admitToolCall(): BudgetLimit | undefined {
    const max = this.budget?.maxToolCalls;
    if (max !== undefined && this.toolCalls >= max) return 'maxToolCalls';
    this.toolCalls++;
    return undefined;
  }

  /** Milliseconds of working time left, or undefined without a wall-time limit. */
  wallLeftMs(): number | undefined {
    const max = this.budget?.maxWallMs;
    return max === undefined ? undefined : Math.max(0, max - this.usage().wallMs);
  }

  /** Tokens the run may still spend, or undefined without a token limit. */
  tokensLeft(): number | undefined {
    const max = this.budget?.maxTokens;
    return max === undefined ? undefined : Math.max(0, max - this.tokens);
  }

  /**
   * A limit the figures have used up already, so that the run could do nothing more (resume asks
   * before taking a run on again): tokens over, every tool call or all the wall time spent.
   */
  spentLimit(): BudgetLimit | undefined {
    const b = this.budget;
    const u = this.usage();
    if (b?.maxTokens !== undefined && u.tokens > b.maxTokens) return 'maxTokens';
    if (b?.maxToolCalls !== undefined && u.toolCalls >= b.maxToolCalls) return 'maxToolCalls';
    if (b?.maxWallMs !== undefined && u.wallMs >= b.maxWallMs) return 'maxWallMs';
    return undefined;
  }

  /** The run's failure for a crossed limit: code budget_exceeded, the limit and the figures. */
  exceeded(limit: BudgetLimit): RunFailed {
    const budget = this.budget ?? {};
    const usage = this.usage();
    return {
      message: budgetMessage(limit, budget, usage),
      code: 'budget_exceeded',
      details: { limit, budget, usage },
    };
  }
}

function budgetMessage(limit: BudgetLimit, budget: Budget, usage: BudgetUsage): string {
  const spent =
    limit === 'maxTokens' ? usage.tokens : limit === 'maxToolCalls' ? usage.toolCalls : usage.wallMs;
  return `budget exceeded: ${limit} is ${budget[limit] ?? '?'} ${LIMIT_NAMES[limit]}; the run spent ${spent}${limit === 'maxToolCalls' ? ' and needed another' : ''}`;
}
