import { connect, ErrorCode, NatsError, type NatsConnection } from 'nats';
import { Events } from '@switchyard/contracts';
import { Bus } from './bus';
import { coalesceWrites, natsErrorsWithoutStacks } from './connection';

const SERVER = 'nats://127.0.0.1:4222';

/** Counts the socket writes of a connection (its transport's `send`). */
function countWrites(nc: NatsConnection): () => number {
  const transport = (nc as unknown as { protocol: { transport: { send(frame: Uint8Array): void } } }).protocol
    .transport;
  const send = transport.send.bind(transport);
  let writes = 0;
  transport.send = (frame) => {
    writes++;
    send(frame);
  };
  return () => writes;
}

describe('coalesceWrites (real NATS)', () => {
  let sender: NatsConnection;
  let receiver: NatsConnection;
  const subject = `coalesce.${process.pid}.${Date.now()}`;

  beforeAll(async () => {
    [sender, receiver] = await Promise.all([connect({ servers: SERVER }), connect({ servers: SERVER })]);
  });

  afterAll(async () => {
    await Promise.all([sender?.close(), receiver?.close()]);
  });

  it('sends what one turn publishes across awaits in one write, in order; the messages all arrive', async () => {
    const heard: string[] = [];
    const done = new Promise<void>((resolve) =>
      receiver.subscribe(subject, {
        callback: (_err, msg) => {
          heard.push(msg.string());
          if (heard.length === 6) resolve();
        },
      }),
    );
    await receiver.flush();
    const plain = countWrites(sender);
    // Without coalescing: a publish after an await is a write of its own.
    sender.publish(subject, 'a1');
    await Promise.resolve();
    await Promise.resolve();
    sender.publish(subject, 'a2');
    await new Promise((r) => setImmediate(r));
    const uncoalesced = plain();

    expect(coalesceWrites(sender)).toBe(true);
    expect(coalesceWrites(sender)).toBe(true); // once only
    const before = plain();
    sender.publish(subject, 'b1');
    await Promise.resolve();
    await Promise.resolve();
    sender.publish(subject, 'b2');
    await Promise.resolve();
    sender.publish(subject, 'b3');
    await new Promise((r) => setImmediate(r));
    const coalescedWrites = plain() - before;
    sender.publish(subject, 'c1');
    await done;

    expect(uncoalesced).toBe(2);
    expect(coalescedWrites).toBe(1);
    expect(heard).toEqual(['a1', 'a2', 'b1', 'b2', 'b3', 'c1']);
  });

  it('leaves a client whose internals it does not know as it is', () => {
    expect(coalesceWrites({})).toBe(false);
    expect(coalesceWrites({ protocol: { sendCommand: () => undefined } })).toBe(false);
    expect(coalesceWrites(null)).toBe(false);
  });
});

describe('natsErrorsWithoutStacks', () => {
  it('makes the client errors without a stack trace, keeping their code and message', () => {
    natsErrorsWithoutStacks();
    natsErrorsWithoutStacks();
    const err = NatsError.errorForCode(ErrorCode.Timeout);
    expect(err).toBeInstanceOf(NatsError);
    expect(err.code).toBe(ErrorCode.Timeout);
    expect(err.message).toBe('TIMEOUT');
    expect(err.stack?.split('\n')).toHaveLength(1);
    expect(new Error('x').stack?.split('\n').length).toBeGreaterThan(1);
  });
});

describe('Bus.emit with validateEvents off (production)', () => {
  it('sends the payload as given, without parsing it; with it on (the default) a misfit is refused', async () => {
    const subjectPrefix = `emit${process.pid}${Date.now()}.`;
    const make = (validateEvents?: boolean) =>
      Bus.connect({
        servers: [SERVER],
        name: 'emit-test',
        subjectPrefix,
        defaultTimeoutMs: 5_000,
        ...(validateEvents === undefined ? {} : { validateEvents }),
      });
    const [trusting, checking] = await Promise.all([make(false), make()]);
    try {
      const heard: unknown[] = [];
      checking.subscribe(Events.toolCancel.subject, (p) => heard.push(p));
      await checking.flush();
      const misfit = { invocationId: '' };
      expect(() => checking.emit(Events.toolCancel, misfit)).toThrow(/does not fit its contract/);
      trusting.emit(Events.toolCancel, misfit);
      trusting.emit(Events.toolCancel, { invocationId: 'call-1' });
      await trusting.flush();
      for (let i = 0; i < 1000 && heard.length < 2; i++) await new Promise((r) => setTimeout(r, 5));
      expect(heard).toEqual([misfit, { invocationId: 'call-1' }]);
    } finally {
      await Promise.all([trusting.close(), checking.close()]);
    }
  });
});
