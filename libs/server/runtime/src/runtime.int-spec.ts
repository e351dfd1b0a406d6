import { Controller, Module } from '@nestjs/common';
import { z } from 'zod';
import { AppError, MAX_MESSAGE_DEPTH, Rpc, rpc } from '@switchyard/contracts';
import { Bus, decodeJson } from '@switchyard/server-bus';
import type { CallContext } from '@switchyard/server-observability';
import {
  createTestDatabase,
  testConfig,
  uniquePrefix,
  waitFor,
  type TestDatabase,
} from '@switchyard/testing';
import { bootstrapService, type RunningService } from './bootstrap';
import { Caller, RpcHandler, RpcPayload } from './rpc';

const Whoami = rpc('planner.test.whoami', z.object({ ownerId: z.string().optional() }), z.unknown());
const Slow = rpc(
  'planner.test.slow',
  z.object({ ms: z.number().int().min(0).max(10_000) }),
  z.object({ slept: z.number() }),
);
/** How many Slow calls a handler of this file has taken in hand (the replicas run in this process). */
let slowTaken = 0;
const Fail = rpc('planner.test.fail', z.object({ kind: z.enum(['app', 'bug']) }), z.never());
const Deep = rpc('planner.test.deep', z.object({ levels: z.number().int() }), z.unknown());

/** `levels` nested arrays, built without recursion (as JSON.parse would hand them over). */
const nestedArrays = (levels: number): unknown => JSON.parse('['.repeat(levels) + ']'.repeat(levels));

@Controller()
class TestHandlers {
  @RpcHandler(Whoami)
  whoami(@RpcPayload(Whoami) body: z.infer<typeof Whoami.request>, @Caller() caller: CallContext): unknown {
    return { caller, bodyOwnerIgnored: body.ownerId };
  }

  @RpcHandler(Slow)
  async slow(@RpcPayload(Slow) body: z.infer<typeof Slow.request>): Promise<{ slept: number }> {
    slowTaken++;
    await new Promise((r) => setTimeout(r, body.ms));
    return { slept: body.ms };
  }

  @RpcHandler(Fail)
  fail(@RpcPayload(Fail) body: z.infer<typeof Fail.request>): never {
    if (body.kind === 'app')
      throw new AppError('conflict', 'revision 7 is stale; current is 8', { details: { current: 8 } });
    throw new Error('secret-internal-detail');
  }

  /** A value a tool might produce: too deep for JSON.stringify. */
  @RpcHandler(Deep)
  deep(@RpcPayload(Deep) body: z.infer<typeof Deep.request>): unknown {
    return nestedArrays(body.levels);
  }
}

@Module({ controllers: [TestHandlers] })
class TestModule {}

describe('service runtime over real NATS and Postgres', () => {
  let db: TestDatabase;
  let prefix: string;
  let service: RunningService;
  let bus: Bus;

  beforeAll(async () => {
    db = await createTestDatabase();
    prefix = uniquePrefix();
    service = await bootstrapService({
      config: testConfig('planner', {
        DATABASE_URL: db.url,
        NATS_SUBJECT_PREFIX: prefix,
        // A check slower than this counts as down: on a busy machine 1 s is not "never answers".
        HEALTH_TIMEOUT_MS: '30000',
      }),
      modules: [TestModule],
      uses: { postgres: true, redis: false },
    });
    bus = await Bus.connect({
      servers: ['nats://127.0.0.1:4222'],
      name: 'test',
      subjectPrefix: prefix,
      defaultTimeoutMs: 60_000,
    });
  });

  afterAll(async () => {
    await service?.close();
    await bus?.close();
    await db?.drop();
  });

  it('answers the health RPC with its dependency checks', async () => {
    const h = await bus.call(Rpc.health.planner, {});
    expect(h).toMatchObject({
      service: 'planner',
      status: 'up',
      checks: { nats: { status: 'up' }, postgres: { status: 'up' } },
    });
    expect(h.checks.redis).toBeUndefined();
  });

  it('serves probes and Prometheus metrics over HTTP', async () => {
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${service.url}/readyz`);
    expect(ready.status).toBe(200);
    await bus.call(Rpc.health.planner, {});
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    expect(metrics).toMatch(
      /switchyard_rpc_requests_total\{subject="planner\.health\.check",outcome="ok",service="planner"\} [1-9]/,
    );
    expect(metrics).toContain('switchyard_http_requests_total');
    expect(service.metricsUrl).toBe(service.url);
  });

  it('carries identity in headers, never from the body', async () => {
    const res = (await bus.call(
      Whoami,
      { ownerId: 'forged' },
      { ctx: { correlationId: 'corr-1', ownerId: 'owner-1', role: 'user' } },
    )) as {
      caller: CallContext;
    };
    expect(res.caller).toEqual({ correlationId: 'corr-1', ownerId: 'owner-1', role: 'user' });
    const anonymous = (await bus.call(Whoami, { ownerId: 'forged' })) as { caller: CallContext };
    expect(anonymous.caller.ownerId).toBeUndefined();
  });

  it('sends AppErrors back as data with their code', async () => {
    await expect(bus.call(Fail, { kind: 'app' })).rejects.toMatchObject({
      code: 'conflict',
      message: 'revision 7 is stale; current is 8',
      details: { current: 8 },
    });
  });

  it('turns a bug into `internal` with a correlation id and no detail', async () => {
    const err = await bus
      .call(Fail, { kind: 'bug' }, { ctx: { correlationId: 'corr-bug' } })
      .catch((e: AppError) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('internal');
    expect((err as AppError).message).toContain('corr-bug');
    expect((err as AppError).message).not.toContain('secret-internal-detail');
  });

  it('validates payloads against the contract', async () => {
    await expect(bus.request(Slow.subject, { ms: 'soon' })).rejects.toMatchObject({
      code: 'validation_failed',
      issues: [{ path: 'ms' }],
    });
  });

  describe('hostile messages', () => {
    it('refuses NUL, lone surrogates and over-deep nesting before the schema, naming the path', async () => {
      for (const text of ['a\u0000b', 'a\ud800', '\udc00']) {
        await expect(bus.request(Whoami.subject, { ownerId: 'x', note: { text } })).rejects.toMatchObject({
          code: 'validation_failed',
          issues: [{ path: 'note.text' }],
        });
      }
      await expect(
        bus.request(Whoami.subject, { args: nestedArrays(MAX_MESSAGE_DEPTH + 10) }),
      ).rejects.toMatchObject({
        code: 'validation_failed',
        issues: [{ path: `args${'.0'.repeat(MAX_MESSAGE_DEPTH - 1)}` }],
      });
      expect(await bus.call(Whoami, { ownerId: 'still-answering' })).toMatchObject({
        bodyOwnerIgnored: 'still-answering',
      });
    });

    it('answers a request that is not JSON with validation_failed, and keeps serving', async () => {
      const reply = await bus.connection.request(
        prefix + Whoami.subject,
        new TextEncoder().encode('{"pattern": "planner.test.whoami", "id": "1", "data": {'),
        { timeout: 2000 },
      );
      expect(decodeJson(reply.data, 'reply')).toMatchObject({ err: { code: 'validation_failed' } });
      expect(await bus.call(Rpc.health.planner, {})).toMatchObject({ status: 'up' });
    });

    it('refuses to send a payload too deep to encode: validation_failed, not a transport failure', async () => {
      await expect(bus.request(Whoami.subject, { args: nestedArrays(200_000) })).rejects.toMatchObject({
        code: 'validation_failed',
        message: expect.stringContaining('too deeply'),
      });
    });

    it('answers `internal` at once when its own reply cannot be encoded, instead of going silent', async () => {
      await expect(bus.call(Deep, { levels: 200_000 }, { timeoutMs: 5_000 })).rejects.toMatchObject({
        code: 'internal',
      });
      expect(await bus.call(Deep, { levels: 3 })).toEqual([[[]]]);
    });

    it('refuses hostile messages on per-entity subjects (Bus.respond) too', async () => {
      const seen: unknown[] = [];
      const stop = await bus.respond('planner.test.entity.1', async (payload) => {
        seen.push(payload);
        return { ok: true };
      });
      try {
        await expect(bus.request('planner.test.entity.1', { goal: 'x\u0000' })).rejects.toMatchObject({
          code: 'validation_failed',
          issues: [{ path: 'goal' }],
        });
        expect(await bus.request('planner.test.entity.1', { goal: 'fine' })).toEqual({ ok: true });
        expect(seen).toEqual([{ goal: 'fine' }]);
      } finally {
        stop();
      }
    });
  });

  it('reports nobody answering as `unavailable` at once, not after the timeout', async () => {
    // A timeout longer than the test may take: an answer at all was not a timeout's.
    await expect(bus.request('scheduler.nothing.here', {}, { timeoutMs: 600_000 })).rejects.toMatchObject({
      code: 'unavailable',
      details: { reason: 'no_responders' },
    });
  });

  it('reports a slow answer as `unavailable` after the timeout', async () => {
    await expect(bus.call(Slow, { ms: 1500 }, { timeoutMs: 200 })).rejects.toMatchObject({
      code: 'unavailable',
      details: { reason: 'timeout' },
    });
  });

  it('spreads requests across replicas of the queue group', async () => {
    const second = await bootstrapService({
      config: testConfig('planner', { DATABASE_URL: db.url, NATS_SUBJECT_PREFIX: prefix }),
      modules: [TestModule],
      uses: { postgres: true, redis: false },
    });
    try {
      const seen = new Set<string>();
      for (let i = 0; i < 40 && seen.size < 2; i++)
        seen.add((await bus.call(Rpc.health.planner, {})).instanceId);
      expect(seen.size).toBe(2);
    } finally {
      await second.close();
    }
  });

  it('finishes in-flight requests on shutdown and takes no new ones', async () => {
    const drainPrefix = uniquePrefix('drain');
    const replica = await bootstrapService({
      config: testConfig('planner', { DATABASE_URL: db.url, NATS_SUBJECT_PREFIX: drainPrefix }),
      modules: [TestModule],
      uses: { postgres: true, redis: false },
    });
    const client = await Bus.connect({
      servers: ['nats://127.0.0.1:4222'],
      name: 'drain',
      subjectPrefix: drainPrefix,
      defaultTimeoutMs: 60_000,
    });
    try {
      const taken = slowTaken;
      const inFlight = client.call(Slow, { ms: 800 });
      // Wait until the replica has the request in hand, then ask it to stop.
      await waitFor(() => slowTaken > taken);
      const closing = replica.close();
      await expect(inFlight).resolves.toEqual({ slept: 800 });
      await closing;
      await expect(client.call(Slow, { ms: 1 }, { timeoutMs: 1000 })).rejects.toMatchObject({
        code: 'unavailable',
      });
    } finally {
      await client.close();
    }
  });
});
