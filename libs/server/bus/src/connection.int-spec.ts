import { connect, ErrorCode, NatsError, type NatsConnection } from 'nats';
import { Events } from '@switchyard/contracts';
import { Bus } from './bus';
import { coalesceWrites, confirmSent, natsErrorsWithoutStacks } from './connection';

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

  it('confirmSent: subscriptions made in one turn share one PING, written with them; each is live once confirmed', async () => {
    const subjects = Array.from({ length: 5 }, (_, i) => `${subject}.live.${i}`);
    const heard = new Set<string>();
    let allHeard!: () => void;
    const all = new Promise<void>((r) => (allHeard = r));
    const writes = countWrites(sender);
    const before = writes();
    const confirmations = subjects.map((s) => {
      sender.subscribe(s, {
        callback: (_err, msg) => {
          heard.add(msg.subject);
          if (heard.size === subjects.length) allHeard();
        },
      });
      return confirmSent(sender);
    });
    expect(new Set(confirmations).size).toBe(1); // one shared confirmation
    await Promise.all(confirmations);
    expect(writes() - before).toBe(1); // the five SUBs and one PING, together
    // Confirmed means the server has them: a message sent now from elsewhere reaches every one.
    for (const s of subjects) receiver.publish(s, 'x');
    await all;
    expect([...heard].sort()).toEqual(subjects);

    // A later turn is confirmed by a PING of its own, after its own subscription.
    const later = `${subject}.later`;
    const got = new Promise<string>((r) => sender.subscribe(later, { callback: (_e, m) => r(m.string()) }));
    await confirmSent(sender);
    receiver.publish(later, 'late');
    expect(await got).toBe('late');
  });

  it('confirmSent falls back to a flush of its own on a client whose writes are not coalesced', async () => {
    const plain = await connect({ servers: SERVER });
    try {
      const writes = countWrites(plain);
      await Promise.all([confirmSent(plain), confirmSent(plain)]);
      expect(writes()).toBe(2);
    } finally {
      await plain.close();
    }
    await expect(confirmSent(plain)).rejects.toThrow();
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
