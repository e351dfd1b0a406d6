import { AppError, Events, type CancelInvocation } from '@switchyard/contracts';
import { Bus, type BusPort } from '@switchyard/server-bus';
import { uniquePrefix } from './database';
import { InMemoryBus } from './in-memory-bus';
import { waitFor } from './wait';

/** A driver of the bus port, and how to wait until what it sent so far has been delivered. */
interface Driver {
  readonly bus: BusPort;
  readonly flush: () => Promise<void>;
  readonly close: () => Promise<void>;
}

async function nats(): Promise<Driver> {
  const bus = await Bus.connect({
    servers: ['nats://127.0.0.1:4222'],
    name: 'bus-events-test',
    subjectPrefix: uniquePrefix('events'),
    defaultTimeoutMs: 5_000,
  });
  return { bus, flush: () => bus.flush(), close: () => bus.close() };
}

async function inMemory(): Promise<Driver> {
  const bus = new InMemoryBus();
  return { bus, flush: () => bus.flush(), close: async () => undefined };
}

// The same events behaviour from both drivers: the unit tests on the in-memory bus hold on NATS.
describe.each([
  ['real NATS', nats],
  ['in memory', inMemory],
])('bus events (%s)', (_name, connect) => {
  let driver: Driver;

  beforeAll(async () => {
    driver = await connect();
  });

  afterAll(async () => {
    await driver?.close();
  });

  it('parses a payload when it is sent, and refuses one that does not fit its contract', async () => {
    const { bus } = driver;
    const heard: unknown[] = [];
    const stop = bus.subscribe(Events.toolCancel.subject, (p) => heard.push(p));
    await driver.flush();
    // What a caller outside the type system could send.
    const bad: CancelInvocation = { invocationId: '' };
    expect(() => bus.emit(Events.toolCancel, bad)).toThrow(AppError);
    expect(() => bus.emit(Events.toolCancel, bad)).toThrow(
      /invocation\.cancel: the payload does not fit its contract: invocationId/,
    );
    bus.emit(Events.toolCancel, { invocationId: 'call-1' });
    await waitFor(() => heard.length === 1, 60_000, 10);
    expect(heard).toEqual([{ invocationId: 'call-1' }]);
    stop();
  });

  it('hands subscribers typed payloads and drops messages that do not fit', async () => {
    const { bus } = driver;
    const heard: string[] = [];
    const stop = bus.on(Events.taskKill, (kill) => heard.push(kill.id));
    await driver.flush();
    bus.publish(Events.taskKill.subject, { id: 'not-a-uuid' });
    bus.publish(Events.taskKill.subject, 'not even an object');
    const id = '00000000-0000-4000-8000-000000000001';
    bus.emit(Events.taskKill, { id });
    await waitFor(() => heard.length > 0, 60_000, 10);
    await driver.flush();
    expect(heard).toEqual([id]);
    stop();
  });
});
