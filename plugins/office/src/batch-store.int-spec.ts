import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BatchStore,
  newBatchId,
  RECORD_TTL_MS,
  UNSENT_TTL_MS,
  type MessageState,
  type StoredBatch,
} from './batch-store';

const NOW = new Date('2026-12-03T12:00:00Z');
const DAY = 24 * 60 * 60_000;

function batch(ageMs: number, states: MessageState[]): StoredBatch {
  return {
    version: 1,
    id: newBatchId(),
    createdAt: new Date(NOW.getTime() - ageMs).toISOString(),
    contentHash: 'h',
    account: 'reports',
    from: 'reports@example.com',
    replyTo: null,
    group: 'managers',
    messages: states.map((state, index) => ({
      index,
      value: `r${index}`,
      to: ['x@example.com'],
      cc: [],
      bcc: [],
      subject: 's',
      body: 'b',
      rows: 1,
      attachment: { name: 'a.xlsx', bytes: 1, sha256: '0', stored: `${index}-a.xlsx` },
      messageId: `<m${index}@office.switchyard>`,
      state,
      sentAt: state === 'sent' ? NOW.toISOString() : null,
      error: null,
    })),
  };
}

describe('staged batch retention', () => {
  let dir: string;
  let store: BatchStore;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'office-batches-'));
    store = new BatchStore(dir);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function stage(b: StoredBatch): Promise<string> {
    await store.save(b);
    await store.writeAttachment(b.id, '0-a.xlsx', Buffer.from('x'));
    return b.id;
  }

  it('removes batches nobody confirmed in time and records past their keep, and nothing else', async () => {
    const fresh = await stage(batch(UNSENT_TTL_MS - DAY, ['pending', 'pending']));
    const abandoned = await stage(batch(UNSENT_TTL_MS + DAY, ['pending']));
    const sentRecently = await stage(batch(RECORD_TTL_MS - DAY, ['sent', 'sent']));
    const partial = await stage(batch(UNSENT_TTL_MS + DAY, ['sent', 'failed']));
    const ancient = await stage(batch(RECORD_TTL_MS + DAY, ['sent']));
    await writeFile(join(dir, 'batches', 'notes.json'), '{}');

    expect((await store.prune(NOW)).sort()).toEqual([abandoned, ancient].sort());
    const left = await readdir(join(dir, 'batches'));
    expect(left.sort()).toEqual(
      [
        fresh,
        `${fresh}.json`,
        sentRecently,
        `${sentRecently}.json`,
        partial,
        `${partial}.json`,
        'notes.json',
      ].sort(),
    );
    await expect(store.load(abandoned)).rejects.toThrow(/there is no staged batch/);
    expect((await store.load(partial)).messages.map((m) => m.state)).toEqual(['sent', 'failed']);
  });

  it('is a no-op on an empty or missing store', async () => {
    expect(await store.prune(NOW)).toEqual([]);
  });

  it('drops a batch’s attachment copies and keeps its record', async () => {
    const id = await stage(batch(0, ['sent']));
    await store.dropAttachments(id);
    expect(await readdir(join(dir, 'batches'))).toEqual([`${id}.json`]);
    expect((await store.load(id)).id).toBe(id);
  });
});
