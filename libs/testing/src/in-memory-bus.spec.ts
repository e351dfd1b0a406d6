import { AppError, Events, Rpc, type ToolResult } from '@switchyard/contracts';
import { InMemoryBus } from './in-memory-bus';

const result: ToolResult = { content: [{ type: 'text', text: 'hi' }], isError: false, truncated: false };
const invoke = { tool: 'reader', arguments: {}, invocationId: 'i1', timeoutMs: 1_000 };

describe('InMemoryBus', () => {
  it('answers a call with the typed reply, the payloads crossing as JSON', async () => {
    const bus = new InMemoryBus();
    bus.answer(Rpc.registry.invoke, (req) => {
      expect(req.arguments).toEqual({ when: '2026-01-01T00:00:00.000Z' });
      return result;
    });
    const reply = await bus.call(Rpc.registry.invoke, {
      ...invoke,
      arguments: { when: new Date('2026-01-01T00:00:00.000Z') },
    });
    expect(reply).toEqual(result);
    expect(bus.traffic.requests.map((r) => r.subject)).toEqual([Rpc.registry.invoke.subject]);
  });

  it('refuses a request that does not fit the contract as validation_failed, before the fake sees it', async () => {
    const bus = new InMemoryBus();
    const heard = jest.fn(() => result);
    bus.answer(Rpc.registry.invoke, heard);
    const bad = { ...invoke, timeoutMs: 'soon' } as unknown as typeof invoke;
    await expect(bus.call(Rpc.registry.invoke, bad)).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(
      bus.call(Rpc.registry.invoke, { ...invoke, arguments: { text: 'a\u0000b' } }),
    ).rejects.toMatchObject({ code: 'validation_failed' });
    expect(heard).not.toHaveBeenCalled();
  });

  it("fails a test whose fake replies outside the contract's response schema", async () => {
    const bus = new InMemoryBus();
    bus.answer(Rpc.registry.invoke, () => ({ content: 'not a list' }) as unknown as ToolResult);
    await expect(bus.call(Rpc.registry.invoke, invoke)).rejects.toMatchObject({
      code: 'internal',
      message: expect.stringContaining('does not fit its contract'),
    });
  });

  it('keeps an AppError code across the bus, and says nobody answers as unavailable/no_responders', async () => {
    const bus = new InMemoryBus();
    await expect(bus.call(Rpc.registry.invoke, invoke)).rejects.toMatchObject({
      code: 'unavailable',
      details: { reason: 'no_responders' },
    });
    bus.answer(Rpc.registry.invoke, () => {
      throw new AppError('timeout', 'too slow');
    });
    await expect(bus.call(Rpc.registry.invoke, invoke)).rejects.toMatchObject({
      code: 'timeout',
      message: 'too slow',
    });
  });

  it('delivers events after the sender returns, parsed against their contract; refuses a bad one when sent', async () => {
    const bus = new InMemoryBus();
    const heard: string[] = [];
    const stop = bus.on(Events.toolCancel, (e) => heard.push(e.invocationId));
    bus.emit(Events.toolCancel, { invocationId: 'a' });
    expect(heard).toEqual([]);
    await Promise.resolve();
    expect(heard).toEqual(['a']);
    expect(() =>
      bus.emit(Events.toolCancel, { invocationId: 7 } as unknown as { invocationId: string }),
    ).toThrow(expect.objectContaining({ code: 'internal' }));
    stop();
    bus.emit(Events.toolCancel, { invocationId: 'b' });
    await Promise.resolve();
    expect(heard).toEqual(['a']);
    expect(bus.sent(Events.toolCancel)).toEqual([{ invocationId: 'a' }, { invocationId: 'b' }]);
  });
});
