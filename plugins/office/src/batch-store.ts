import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolError } from './errors';
import type { CellValue } from './schemas';

/**
 * Staged batches live in the plugin's private data directory, one JSON file each plus a folder with
 * copies of the attachments: what confirm_send sends is exactly what was staged and shown for
 * approval, even if the shared folder changes in between. Every state change is written to a temp
 * file, flushed and renamed over the old one, so a crash leaves the old state or the new, never half.
 *
 * Retention: a batch nobody confirmed within UNSENT_TTL_MS is removed (the approval never came); a
 * fully sent batch gives up its attachment copies at once and keeps its record (what a repeated
 * confirm_send answers "already sent" from) for RECORD_TTL_MS, as does any other batch.
 */
export const UNSENT_TTL_MS = 7 * 24 * 60 * 60_000;
export const RECORD_TTL_MS = 30 * 24 * 60 * 60_000;

export type MessageState = 'pending' | 'sending' | 'sent' | 'failed';

export interface StoredMessage {
  index: number;
  value: CellValue;
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string;
  body: string;
  rows: number | null;
  attachment: { name: string; bytes: number; sha256: string; stored: string };
  /** The Message-ID header, fixed at staging: a resent copy is recognisably the same message. */
  messageId: string;
  state: MessageState;
  sentAt: string | null;
  error: string | null;
  /** Recipients the relay refused while accepting the message for the others. */
  rejected?: string[];
}

export interface StoredBatch {
  version: 1;
  id: string;
  createdAt: string;
  contentHash: string;
  account: string;
  from: string;
  replyTo: string | null;
  group: string;
  messages: StoredMessage[];
}

const ID = /^cnf_[0-9a-f]{32}$/;

export function newBatchId(): string {
  return `cnf_${randomUUID().replace(/-/g, '')}`;
}

export class BatchStore {
  constructor(private readonly dataDir: string) {}

  private get dir(): string {
    return join(this.dataDir, 'batches');
  }

  /** Where a batch keeps its attachments (relative names in the batch are under it). */
  attachmentsDir(id: string): string {
    return join(this.dir, id);
  }

  async save(batch: StoredBatch): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await writeDurably(join(this.dir, `${batch.id}.json`), JSON.stringify(batch, null, 2));
  }

  async writeAttachment(id: string, name: string, content: Buffer): Promise<void> {
    await mkdir(this.attachmentsDir(id), { recursive: true });
    await writeDurably(join(this.attachmentsDir(id), name), content);
  }

  async readAttachment(id: string, name: string): Promise<Buffer> {
    return readFile(join(this.attachmentsDir(id), name));
  }

  async load(id: string): Promise<StoredBatch> {
    if (!ID.test(id))
      throw new ToolError(`${JSON.stringify(id)} is not a confirmation id (cnf_ and 32 hex digits)`);
    let text: string;
    try {
      text = await readFile(join(this.dir, `${id}.json`), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        throw new ToolError(`there is no staged batch ${id}; stage one with email_send_batch first`);
      throw err;
    }
    return JSON.parse(text) as StoredBatch;
  }

  /** Removes a batch's attachment copies (its record stays). */
  async dropAttachments(id: string): Promise<void> {
    await rm(this.attachmentsDir(id), { recursive: true, force: true });
  }

  /** Applies the retention above; answers the ids removed. Unreadable files are left alone. */
  async prune(now: Date): Promise<string[]> {
    const removed: string[] = [];
    for (const id of await this.ids()) {
      const batch = await this.load(id).catch(() => undefined);
      if (!batch) continue;
      const age = now.getTime() - Date.parse(batch.createdAt);
      const unsent = batch.messages.every((m) => m.state === 'pending');
      if (age > RECORD_TTL_MS || (unsent && age > UNSENT_TTL_MS)) {
        await this.dropAttachments(id);
        await rm(join(this.dir, `${id}.json`), { force: true });
        removed.push(id);
      }
    }
    return removed;
  }

  private async ids(): Promise<string[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    return names
      .filter((n) => n.endsWith('.json'))
      .map((n) => n.slice(0, -'.json'.length))
      .filter((id) => ID.test(id))
      .sort();
  }

  /** A batch with this content that nothing has been sent from yet (staging the same thing again). */
  async findUnsent(contentHash: string): Promise<StoredBatch | undefined> {
    for (const id of await this.ids()) {
      const batch = await this.load(id).catch(() => undefined);
      if (batch?.contentHash === contentHash && batch.messages.every((m) => m.state === 'pending'))
        return batch;
    }
    return undefined;
  }
}

async function writeDurably(path: string, content: string | Buffer): Promise<void> {
  const temp = `${path}.${process.pid}.tmp`;
  const fh = await open(temp, 'w', 0o600);
  try {
    await fh.writeFile(content);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(temp, path);
}

/** The batch's status as the confirmation shows it. */
export function batchStatus(batch: StoredBatch): 'staged' | 'sending' | 'sent' | 'partially_sent' {
  const states = batch.messages.map((m) => m.state);
  if (states.every((s) => s === 'sent')) return 'sent';
  if (states.every((s) => s === 'pending')) return 'staged';
  if (states.some((s) => s === 'sending')) return 'sending';
  return 'partially_sent';
}
