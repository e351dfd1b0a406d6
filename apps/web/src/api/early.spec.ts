import { routeIndexOf, Routes } from '@switchyard/contracts';
import { routePath } from './routes';
import { earlyReadsOf, runIdOfPath, startEarlyReads, takeEarly } from './early';

const runId = '00000000-0000-4000-8000-000000000001';
const index = routeIndexOf(Routes);

describe('the reads a page sends as it arrives', () => {
  const sent: string[] = [];
  const store = new Map<string, string>();
  beforeAll(() => {
    Object.assign(globalThis, {
      sessionStorage: {
        getItem: (k: string) => store.get(k) ?? null,
        setItem: (k: string, v: string) => store.set(k, v),
        removeItem: (k: string) => store.delete(k),
      },
    });
  });
  beforeEach(() => {
    sent.length = 0;
    store.clear();
    jest.spyOn(globalThis, 'fetch').mockImplementation((url) => {
      sent.push(String(url));
      return Promise.resolve(new Response('{}'));
    });
  });
  afterEach(() => jest.restoreAllMocks());

  it('asks for exactly the paths of the contract table the pages then ask for', () => {
    expect(runIdOfPath(`/runs/${runId}`)).toBe(runId);
    expect(runIdOfPath(`/runs/${runId}/x`)).toBeUndefined();
    expect(earlyReadsOf(`/runs/${runId}`)).toEqual([routePath(index.me), routePath(index.runGet, { runId })]);
    expect(earlyReadsOf('/tasks')).toEqual([routePath(index.me)]);
  });

  it('sends nothing signed out, and hands each answer over once, to the same token only', async () => {
    startEarlyReads(`/runs/${runId}`);
    expect(sent).toEqual([]);

    store.set('switchyard.token', 'tok-a');
    startEarlyReads(`/runs/${runId}`);
    expect(sent).toEqual(['/api/me', `/api/agent/runs/${runId}`]);
    const me = takeEarly('/api/me', 'tok-a');
    expect(me).toBeDefined();
    expect((await me)?.status).toBe(200);
    expect(takeEarly('/api/me', 'tok-a')).toBeUndefined();
    // Signed in as someone else since: that answer is not theirs.
    expect(takeEarly(`/api/agent/runs/${runId}`, 'tok-b')).toBeUndefined();
    expect(takeEarly(`/api/agent/runs/${runId}`, 'tok-a')).toBeUndefined();
  });

  it('lets a page ask again once an early answer is too old to stand for a fresh read', () => {
    store.set('switchyard.token', 'tok-a');
    const now = jest.spyOn(performance, 'now').mockReturnValue(1_000);
    startEarlyReads('/tasks');
    now.mockReturnValue(1_000 + 10_001);
    expect(takeEarly('/api/me', 'tok-a')).toBeUndefined();
  });
});
