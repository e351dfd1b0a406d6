import { AppError, type ChatControlReply } from '@switchyard/contracts';
import { InMemoryBus } from '@switchyard/testing';
import { ActiveChats, type DrivenTurn } from './active-chats';
import type { InputWaits } from '../inputs/input-waits';

/** The replica's waits, as far as ActiveChats uses them (an answer settles one). */
const waits = {
  answer: (id: string) => Promise.resolve({ id, status: 'accepted' as const }),
} as unknown as InputWaits;

/** A turn stand-in that records what reached it. */
function fakeTurn(sessionId: string) {
  const heard: string[] = [];
  const turn: DrivenTurn = {
    sessionId,
    approve: (callId, args): ChatControlReply => {
      if (callId !== 'c1') throw new AppError('conflict', `call ${callId} is not waiting for approval`);
      heard.push(`approve ${callId} ${JSON.stringify(args ?? null)}`);
      return { accepted: true, status: 'running' };
    },
    deny: (callId, reason) => {
      heard.push(`deny ${callId} ${reason ?? ''}`);
      return { accepted: true, status: 'running' };
    },
    cancel: (reason) => {
      heard.push(`cancel ${reason}`);
      return { accepted: true, status: 'cancelled' };
    },
    abandon: (reason) => heard.push(`abandon ${reason}`),
    setMode: (mode) => {
      heard.push(`mode ${mode}`);
      return { accepted: true, status: 'running' };
    },
    input: (ask) => {
      heard.push(`input ${ask.invocationId} ${ask.request.message}`);
      return Promise.resolve({ action: 'accept', content: { name: 'Ada' } });
    },
  };
  return { turn, heard };
}

describe('ActiveChats', () => {
  const id = '6f1c2b1e-5a43-4c0e-9a53-0d6f3b7c2a10';

  it('forwards approve, deny and cancel from another replica to the one driving the turn', async () => {
    const bus = new InMemoryBus();
    const driving = new ActiveChats(bus, waits);
    const other = new ActiveChats(bus, waits);
    const { turn, heard } = fakeTurn(id);
    await driving.register(turn, Promise.resolve());

    expect(await other.control(id, { action: 'approve', callId: 'c1', arguments: { ms: 1 } })).toEqual({
      accepted: true,
      status: 'running',
    });
    await other.control(id, { action: 'deny', callId: 'c1', reason: 'no' });
    expect(await other.control(id, { action: 'cancel', reason: 'stop' })).toEqual({
      accepted: true,
      status: 'cancelled',
    });
    await other.control(id, { action: 'mode', permissionMode: 'full-access' });
    expect(heard).toEqual(['approve c1 {"ms":1}', 'deny c1 no', 'cancel stop', 'mode full-access']);
    // The turn's refusal crosses with its code.
    await expect(other.control(id, { action: 'approve', callId: 'c9' })).rejects.toMatchObject({
      code: 'conflict',
    });
    expect(await other.alive(id)).toBe(true);
  });

  it("relays a server's input request and its answer to the replica driving the turn", async () => {
    const bus = new InMemoryBus();
    const driving = new ActiveChats(bus, waits);
    const other = new ActiveChats(bus, waits);
    const { turn, heard } = fakeTurn(id);
    await driving.register(turn, Promise.resolve());
    const reply = await other.control(id, {
      action: 'elicit',
      invocationId: 'chat:1',
      asker: { kind: 'chat', sessionId: id, callId: 'c1' },
      tool: 'mcp__x__ask',
      server: 'x',
      request: { mode: 'form', message: 'Who?', requestedSchema: { type: 'object', properties: {} } },
    });
    expect(reply).toEqual({ action: 'accept', content: { name: 'Ada' } });
    expect(heard).toEqual(['input chat:1 Who?']);
    const answered = await other.control(id, {
      action: 'input',
      elicitationId: '0c1f3a52-2b7e-4d7e-9a0b-2f1d1c9b7e11',
      reply: { action: 'decline' },
    });
    expect(answered).toEqual({ id: '0c1f3a52-2b7e-4d7e-9a0b-2f1d1c9b7e11', status: 'accepted' });
  });

  it('says a session is not driven once its turn closed (nobody answers its subject)', async () => {
    const bus = new InMemoryBus();
    const driving = new ActiveChats(bus, waits);
    const other = new ActiveChats(bus, waits);
    await driving.register(fakeTurn(id).turn, Promise.resolve());
    driving.closed(id);
    expect(await other.alive(id)).toBe(false);
    await expect(other.control(id, { action: 'cancel', reason: 'x' })).rejects.toMatchObject({
      code: 'unavailable',
      details: { reason: 'no_responders' },
    });
  });

  it('abandons the turns it drives when the replica shuts down', async () => {
    const bus = new InMemoryBus();
    const active = new ActiveChats(bus, waits);
    const { turn, heard } = fakeTurn(id);
    await active.register(turn, Promise.resolve());
    await active.beforeApplicationShutdown();
    expect(heard).toEqual([expect.stringMatching(/^abandon /)]);
  });
});
