import { AppError, Events, type CancelInvocation } from '@switchyard/contracts';
import { uniquePrefix, waitFor } from '@switchyard/testing';
import { Bus } from './bus';

describe('bus events (real NATS)', () => {
  let bus: Bus;

  beforeAll(async () => {
    bus = await Bus.connect({
      servers: ['nats://127.0.0.1:4222'],
      name: 'bus-events-test',
      subjectPrefix: uniquePrefix('events'),
      defaultTimeoutMs: 5_000,
    });
  });

  afterAll(async () => {
    await bus?.close();
  });

  it('parses a payload when it is sent, and refuses one that does not fit its contract', async () => {
    const heard: unknown[] = [];
    const stop = bus.subscribe(Events.toolCancel.subject, (p) => heard.push(p));
    await bus.flush();
    // What a caller outside the type system could send.
    const bad: CancelInvocation = { invocationId: '' };
    expect(() => bus.emit(Events.toolCancel, bad)).toThrow(AppError);
    expect(() => bus.emit(Events.toolCancel, bad)).toThrow(
      /invocation\.cancel: the payload does not fit its contract: invocationId/,
    );
    bus.emit(Events.toolCancel, { invocationId: 'call-1' });
    await waitFor(() => heard.length === 1, 5_000, 10);
    expect(heard).toEqual([{ invocationId: 'call-1' }]);
    stop();
  });

  it('hands subscribers typed payloads and drops messages that do not fit', async () => {
    const heard: string[] = [];
    const stop = bus.on(Events.taskKill, (kill) => heard.push(kill.id));
    await bus.flush();
    bus.publish(Events.taskKill.subject, { id: 'not-a-uuid' });
    bus.publish(Events.taskKill.subject, 'not even an object');
    const id = '00000000-0000-4000-8000-000000000001';
    bus.emit(Events.taskKill, { id });
    await waitFor(() => heard.length > 0, 5_000, 10);
    await bus.flush();
    expect(heard).toEqual([id]);
    stop();
  });
});
