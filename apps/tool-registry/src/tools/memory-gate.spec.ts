import { Events, Rpc } from '@switchyard/contracts';
import { createLogger } from '@switchyard/server-observability';
import { InMemoryBus, waitFor } from '@switchyard/testing';
import { MemoryGate } from './memory-gate';

const OWNER = '00000000-0000-4000-8000-0000000000a1';
const OTHER = '00000000-0000-4000-8000-0000000000b2';
const caller = (ownerId?: string) => ({
  correlationId: 'c',
  ...(ownerId ? { ownerId, role: 'user' as const } : {}),
});
const logger = createLogger({ service: 'tool-registry', level: 'silent', instanceId: 'test' });

/**
 * The registry's view of each owner's memory setting (the planner's): asked once and cached, replaced
 * by the change event at once, and never overwritten by an answer that was already stale.
 */
describe('MemoryGate', () => {
  let bus: InMemoryBus;
  let gate: MemoryGate;
  let stored: Map<string, boolean>;
  let asked: string[];
  let unanswer: () => void;

  beforeEach(() => {
    bus = new InMemoryBus();
    stored = new Map();
    asked = [];
    unanswer = bus.answer(Rpc.memory.settingsGet, (_req, ctx) => {
      asked.push(ctx?.ownerId ?? '');
      return { enabled: stored.get(ctx?.ownerId ?? '') ?? false };
    });
    gate = new MemoryGate(bus, logger);
    gate.onModuleInit();
  });

  afterEach(() => gate.onModuleDestroy());

  it('asks the planner once per owner and answers from the cache after that', async () => {
    stored.set(OWNER, true);
    expect(await gate.enabled(caller(OWNER))).toBe(true);
    expect(await gate.enabled(caller(OWNER))).toBe(true);
    expect(await gate.enabled(caller(OTHER))).toBe(false);
    expect(asked).toEqual([OWNER, OTHER]);
  });

  it('is off for a call without an owner, without asking', async () => {
    expect(await gate.enabled(caller())).toBe(false);
    expect(asked).toEqual([]);
  });

  it('takes a change from the event at once, for that owner only', async () => {
    expect(await gate.enabled(caller(OWNER))).toBe(false);
    expect(await gate.enabled(caller(OTHER))).toBe(false);
    stored.set(OWNER, true);
    bus.emit(Events.memorySettingChanged, { ownerId: OWNER, enabled: true });
    await waitFor(async () => (await gate.enabled(caller(OWNER))) === true, 1_000, 1);
    expect(await gate.enabled(caller(OTHER))).toBe(false);
    expect(asked).toEqual([OWNER, OTHER]);
  });

  it('does not cache an answer that was in flight when the setting changed', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    unanswer();
    bus.answer(Rpc.memory.settingsGet, async () => {
      await held;
      return { enabled: false }; // what the planner had before the switch
    });
    const lookup = gate.enabled(caller(OWNER));
    await waitFor(() => bus.traffic.requests.length > 0, 1_000, 1);
    bus.emit(Events.memorySettingChanged, { ownerId: OWNER, enabled: true });
    // Events are delivered in a microtask: past this macrotask turn the gate has heard it, and only
    // then does the stale answer arrive.
    await new Promise<void>((r) => setImmediate(r));
    release();
    expect(await lookup).toBe(true);
    expect(await gate.enabled(caller(OWNER))).toBe(true);
  });

  it('leaves memory off, uncached, while the planner does not answer', async () => {
    const silent = new InMemoryBus();
    const g = new MemoryGate(silent, logger);
    expect(await g.enabled(caller(OWNER))).toBe(false);
    silent.answer(Rpc.memory.settingsGet, () => ({ enabled: true }));
    expect(await g.enabled(caller(OWNER))).toBe(true);
  });
});
