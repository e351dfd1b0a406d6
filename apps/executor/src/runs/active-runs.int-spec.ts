import { randomUUID } from 'node:crypto';
import { RunConfig, type RunEventBody } from '@switchyard/contracts';
import { Bus } from '@switchyard/server-bus';
import { createPrisma, type PrismaClient } from '@switchyard/server-db';
import { IdentityRepository } from '@switchyard/server-db-identity';
import { InputRequestsRepository, RunsRepository, type NewRun } from '@switchyard/server-db-runs';
import { createLogger } from '@switchyard/server-observability';
import { OwnerFeedOutbox } from '@switchyard/server-runtime';
import {
  createTestDatabase,
  testConfig,
  uniquePrefix,
  waitFor,
  type TestDatabase,
} from '@switchyard/testing';
import type { PermissionsService } from '../permissions/permissions.service';
import { ActiveRuns, type DrivenRun } from './active-runs';
import { RunLauncher } from './run-launcher';
import type { RunPosture } from './sandbox-posture';
import { RunEventOutbox } from './engine/run-event-outbox';
import { InputWaits } from '../inputs/input-waits';

const created: RunEventBody = {
  type: 'run_created',
  data: { goal: 'lease test', config: RunConfig.parse({}), source: 'goal' },
};

/** Leases per run, on the real Postgres and NATS: a run its driver dropped is not kept alive. */
describe('ActiveRuns leases', () => {
  let db: TestDatabase;
  let prisma: PrismaClient;
  let bus: Bus;
  let repo: RunsRepository;
  let active: ActiveRuns;
  let config: ReturnType<typeof testConfig>;
  let ownerId: string;
  const abandoned: string[] = [];

  const driven = (runId: string): DrivenRun => ({
    runId,
    approve: async () => ({ released: [], status: 'running' }),
    cancel: async () => ({ released: [], status: 'cancelled' }),
    abandon: () => void abandoned.push(runId),
    writerFailed: () => undefined,
    input: async () => ({ action: 'decline' }),
  });

  const newRun = (replica: string, leaseMs: number): NewRun => ({
    id: randomUUID(),
    ownerId,
    status: 'running',
    goal: 'lease test',
    config: { permissionMode: 'ask' },
    inputs: {},
    files: [],
    plan: { steps: [] },
    replica,
    leaseMs,
  });

  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrisma({ url: db.url, poolSize: 3, applicationName: 'test-leases' });
    repo = new RunsRepository(prisma);
    ownerId = (await new IdentityRepository(prisma).ensureOwner('lease-owner', 'user')).owner.id;
    const prefix = uniquePrefix('lease');
    bus = await Bus.connect({
      servers: ['nats://127.0.0.1:4222'],
      name: 'lease-test',
      subjectPrefix: prefix,
      defaultTimeoutMs: 5_000,
    });
    config = testConfig('executor', {
      DATABASE_URL: db.url,
      NATS_SUBJECT_PREFIX: prefix,
      RUN_LEASE_MS: '10000',
      RUN_SWEEP_MS: '200',
    });
    const logger = createLogger({ level: 'silent', service: 'executor', instanceId: 't' });
    active = new ActiveRuns(
      repo,
      bus,
      config,
      logger,
      { instanceId: `lease-test-${process.pid}` },
      new InputWaits(new InputRequestsRepository(prisma), bus, config, logger),
      new RunEventOutbox(bus, 0),
    );
  });

  afterAll(async () => {
    await active?.beforeApplicationShutdown();
    await bus?.close();
    await prisma?.$disconnect();
    await db?.drop();
  });

  it('interrupts a run whose driver dropped it while the replica keeps its other runs alive', async () => {
    // Timing-free: the dropped run's first lease is short, the kept one's as long as the replica's.
    const kept = newRun(active.replica, 10_000);
    const dropped = newRun(active.replica, 300);
    await repo.create(kept, [created]);
    await repo.create(dropped, [created]);
    const keptLease = Date.parse(String((await repo.get(kept.id))?.leaseUntil));
    await active.register(driven(kept.id));
    await active.register(driven(dropped.id));
    active.onApplicationBootstrap();
    // A driver bug: it lets go of the run without writing an end.
    active.closed(dropped.id);

    // The old per-replica renewal kept the dropped run alive as long as its sibling was driven.
    await waitFor(async () => (await repo.get(dropped.id))?.status === 'interrupted', 60_000, 100);
    expect((await repo.get(dropped.id))?.error).toContain('stopped responding');
    // The run still driven is renewed (its lease moves past the one it started with) and stays running.
    await waitFor(
      async () => Date.parse(String((await repo.get(kept.id))?.leaseUntil)) > keptLease,
      60_000,
      100,
    );
    const still = await repo.get(kept.id);
    expect(still?.status).toBe('running');
    expect(still?.ownerReplica).toBe(active.replica);
    expect(abandoned).toEqual([]);
  });

  it('a run written while its control subject could not be subscribed is failed, and its start refused', async () => {
    const logger = createLogger({ level: 'silent', service: 'executor', instanceId: 't' });
    const launcher = new RunLauncher(
      repo,
      active,
      { warm: async () => undefined } as unknown as PermissionsService,
      { forNewRun: async () => null } as unknown as RunPosture,
      new InputWaits(new InputRequestsRepository(prisma), bus, config, logger),
      new RunEventOutbox(bus, 0),
      bus,
      config,
      logger,
      new OwnerFeedOutbox(bus, logger),
    );
    // NATS refuses the subscription while Postgres writes the row (they go side by side).
    const register = jest.spyOn(active, 'register').mockRejectedValueOnce(new Error('NATS is away'));
    const runId = randomUUID();
    await expect(
      launcher.launch(
        {
          runId,
          goal: 'unreachable',
          config: RunConfig.parse({}),
          inputs: {},
          files: [],
          tools: new Map(),
          plan: { steps: [] },
          created: { source: 'goal' },
        },
        { correlationId: 'c', ownerId, role: 'user' },
      ),
    ).rejects.toThrow('NATS is away');
    register.mockRestore();
    const run = await repo.get(runId);
    expect(run).toMatchObject({ status: 'failed', ownerReplica: null });
    expect(run?.error).toBe('the run could not be started: NATS is away');
    expect(active.get(runId)).toBeUndefined();
  });
});
