import { randomUUID } from 'node:crypto';
import {
  createPrisma,
  createScratchDatabase,
  type PrismaClient,
  type ScratchDatabase,
} from '@switchyard/server-db';
import { IdentityRepository } from '@switchyard/server-db-identity';
import { InputRequestsRepository, type NewInputRequest } from './input-requests.repository';

const SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';

describe('InputRequestsRepository (real Postgres)', () => {
  let db: ScratchDatabase;
  let prisma: PrismaClient;
  let repo: InputRequestsRepository;
  let ownerId: string;
  let otherOwner: string;

  const ask = (runId: string, over: Partial<NewInputRequest> = {}): NewInputRequest => ({
    id: randomUUID(),
    ownerId,
    target: { runId, stepId: 'ask' },
    label: 'a run’s goal',
    invocationId: randomUUID(),
    tool: 'everything_elicit',
    server: 'everything',
    request: {
      mode: 'form',
      message: 'Which colour?',
      // Field order is the server's: kept as given (json, not jsonb).
      requestedSchema: {
        type: 'object',
        properties: { zeta: { type: 'string' }, alpha: { type: 'number', minimum: 1 } },
        required: ['zeta'],
      },
    },
    expiresAt: new Date(Date.now() + 60_000),
    ...over,
  });

  beforeAll(async () => {
    db = await createScratchDatabase(SERVER, { label: 'inputs' });
    prisma = createPrisma({ url: db.url, poolSize: 3, applicationName: 'test-inputs' });
    repo = new InputRequestsRepository(prisma);
    const identity = new IdentityRepository(prisma);
    ownerId = (await identity.ensureOwner('inputs-owner', 'user')).owner.id;
    otherOwner = (await identity.ensureOwner('inputs-other', 'user')).owner.id;
  });

  afterAll(async () => {
    await prisma.$disconnect();
    await db.drop();
  });

  it("reads a run's pending requests (raw SQL) exactly as the model reads one, oldest first", async () => {
    const runId = randomUUID();
    const first = await repo.create(ask(runId));
    const url = await repo.create(
      ask(runId, {
        request: {
          mode: 'url',
          message: 'Sign in there',
          url: 'https://example.com/a?b=c',
          elicitationId: 'e-1',
        },
      }),
    );
    // Not pending: settled, expired, or another run's.
    const settled = await repo.create(ask(runId));
    await repo.settle(settled.id, {
      status: 'declined',
      reason: 'no',
      answeredBy: 'person',
      answeredByOwner: ownerId,
    });
    await repo.create(ask(runId, { expiresAt: new Date(Date.now() - 1_000) }));
    await repo.create(ask(randomUUID()));

    const pending = await repo.pendingOfRun(runId);
    expect(pending.map((r) => r.id)).toEqual([first.id, url.id]);
    expect(pending[0]).toEqual(await repo.findForCaller(first.id, ownerId, false));
    expect(pending[1]).toEqual(await repo.findForCaller(url.id, ownerId, false));
    expect(Object.keys(pending[0]?.requestedSchema?.properties ?? {})).toEqual(['zeta', 'alpha']);
    expect(pending[1]).toMatchObject({
      mode: 'url',
      url: 'https://example.com/a?b=c',
      requestedSchema: null,
    });
  });

  it("lists an owner's pending requests, of a run or a chat, never another owner's", async () => {
    const runId = randomUUID();
    const sessionId = randomUUID();
    const ofRun = await repo.create(ask(runId));
    const ofChat = await repo.create(ask(runId, { target: { sessionId, callId: 'c1' } }));
    const theirs = await repo.create(ask(runId, { ownerId: otherOwner }));
    const ids = (rs: ReadonlyArray<{ id: string }>) => rs.map((r) => r.id);
    expect(ids(await repo.pendingOf(ownerId, { runId }))).toEqual([ofRun.id]);
    expect(ids(await repo.pendingOf(ownerId, { sessionId }))).toEqual([ofChat.id]);
    const all = ids(await repo.pendingOf(ownerId));
    expect(all).toEqual(expect.arrayContaining([ofRun.id, ofChat.id]));
    expect(all).not.toContain(theirs.id);
    expect(ids(await repo.pendingOf(otherOwner))).toEqual([theirs.id]);
    expect(ids(await repo.pendingOf(ownerId, {}, 1))).toHaveLength(1);
    expect((await repo.pendingOf(ownerId, { sessionId }))[0]).toEqual(
      await repo.findForCaller(ofChat.id, ownerId, false),
    );
  });

  it('answers nothing for a run without pending requests', async () => {
    expect(await repo.pendingOfRun(randomUUID())).toEqual([]);
  });
});
