import { BudgetMeter, NO_USAGE } from './budget';

/** A clock the test moves by hand. */
function clock() {
  let t = 1_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('BudgetMeter', () => {
  it('counts tool calls and refuses the one that would cross maxToolCalls, without counting it', () => {
    const meter = new BudgetMeter({ maxToolCalls: 2 });
    expect(meter.admitToolCall()).toBeUndefined();
    expect(meter.admitToolCall()).toBeUndefined();
    expect(meter.admitToolCall()).toBe('maxToolCalls');
    expect(meter.usage().toolCalls).toBe(2);
  });

  it('answers maxTokens once the tokens go over the limit, not when they reach it', () => {
    const meter = new BudgetMeter({ maxTokens: 100 });
    expect(meter.addTokens(60)).toBeUndefined();
    expect(meter.tokensLeft()).toBe(40);
    expect(meter.addTokens(40)).toBeUndefined();
    expect(meter.addTokens(1)).toBe('maxTokens');
    expect(meter.usage().tokens).toBe(101);
    expect(meter.tokensLeft()).toBe(0);
  });

  it('counts nothing against limits the budget does not set', () => {
    const meter = new BudgetMeter(undefined);
    for (let i = 0; i < 50; i++) expect(meter.admitToolCall()).toBeUndefined();
    expect(meter.addTokens(1e9)).toBeUndefined();
    expect(meter.wallLeftMs()).toBeUndefined();
    expect(meter.tokensLeft()).toBeUndefined();
    expect(meter.spentLimit()).toBeUndefined();
  });

  it('counts wall time only while the clock runs (not while the run waits for a person)', () => {
    const c = clock();
    const meter = new BudgetMeter({ maxWallMs: 1_000 }, NO_USAGE, c.now);
    expect(meter.usage().wallMs).toBe(0);
    meter.start();
    c.advance(300);
    meter.stop(); // parked at a gate
    c.advance(60_000);
    expect(meter.usage().wallMs).toBe(300);
    meter.start();
    meter.start(); // starting a running clock changes nothing
    c.advance(200);
    expect(meter.usage().wallMs).toBe(500);
    expect(meter.wallLeftMs()).toBe(500);
    c.advance(600);
    expect(meter.wallLeftMs()).toBe(0);
    expect(meter.spentLimit()).toBe('maxWallMs');
  });

  it('carries on from the figures of an earlier stretch (a resumed run)', () => {
    const c = clock();
    const meter = new BudgetMeter(
      { maxToolCalls: 3, maxWallMs: 1_000, maxTokens: 50 },
      { tokens: 40, toolCalls: 2, wallMs: 900 },
      c.now,
    );
    expect(meter.spentLimit()).toBeUndefined();
    expect(meter.admitToolCall()).toBeUndefined();
    expect(meter.admitToolCall()).toBe('maxToolCalls');
    expect(meter.spentLimit()).toBe('maxToolCalls');
    meter.start();
    c.advance(50);
    expect(meter.wallLeftMs()).toBe(50);
    expect(meter.usage()).toEqual({ tokens: 40, toolCalls: 3, wallMs: 950 });
  });

  it('names the limit and the figures in the failure', () => {
    const meter = new BudgetMeter({ maxToolCalls: 1, maxWallMs: 5_000 });
    meter.admitToolCall();
    expect(meter.exceeded('maxToolCalls')).toEqual({
      code: 'budget_exceeded',
      message: 'budget exceeded: maxToolCalls is 1 tool calls; the run spent 1 and needed another',
      details: {
        limit: 'maxToolCalls',
        budget: { maxToolCalls: 1, maxWallMs: 5_000 },
        usage: { tokens: 0, toolCalls: 1, wallMs: 0 },
      },
    });
  });
});
