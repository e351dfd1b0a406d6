import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import nodemailer from 'nodemailer';
import { BatchStore, batchStatus, newBatchId, type StoredBatch, type StoredMessage } from './batch-store';
import { ToolError } from './errors';
import { checkTemplate, render } from './message-template';
import { checkFile } from './paths';
import type { ConfirmInput, ConfirmOutput, StageInput, StageOutput } from './schemas';
import { accountOf, groupOf, recipientsFor, type Account, type OfficeSettings } from './settings';

/** One attachment beyond this is refused: most relays reject messages over 25 MB anyway. */
export const MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024;
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

function passwordOf(settings: OfficeSettings, account: Account): string | undefined {
  if (!account.user) return undefined;
  const password = settings.passwords[account.id];
  if (!password)
    throw new ToolError(
      `account ${account.id} signs in as ${account.user} but the passwords setting has no password for it; an admin must set one`,
    );
  return password;
}

function summary(batch: StoredBatch): StageOutput['confirmation'] {
  return {
    confirmationId: batch.id,
    account: batch.account,
    from: batch.from,
    group: batch.group,
    status: batchStatus(batch),
    messages: batch.messages.map((m) => ({
      index: m.index,
      value: m.value,
      to: m.to,
      cc: m.cc,
      bcc: m.bcc,
      subject: m.subject,
      attachment: { name: m.attachment.name, bytes: m.attachment.bytes, sha256: m.attachment.sha256 },
      rows: m.rows,
    })),
  };
}

const oneLine = (s: string) => s.replace(/[\r\n]+/g, ' ').trim();

/**
 * Stages one message per part and sends nothing. Staging the same content again (a retried step)
 * returns the batch already staged, as long as nothing of it has been sent; after a send, the same
 * content stages a new batch (sending last week's report again is a new decision).
 */
export async function stageBatch(
  input: StageInput,
  settings: OfficeSettings,
  store: BatchStore,
  now = new Date(),
): Promise<StageOutput> {
  const account = accountOf(settings, input.account);
  const group = groupOf(settings, input.group);
  passwordOf(settings, account);
  await store.prune(now);
  checkTemplate(input.subject, 'subject');
  checkTemplate(input.body, 'body');

  const skipped: StageOutput['skipped'] = [];
  const unmatched: string[] = [];
  const planned: { part: StageInput['parts'][number]; to: string[] }[] = [];
  for (const [i, part] of input.parts.entries()) {
    await checkFile(part.path, `parts[${i}].path`, MAX_ATTACHMENT_BYTES);
    const to = recipientsFor(group, part.value === null ? '' : String(part.value));
    if (to) planned.push({ part, to });
    else {
      unmatched.push(JSON.stringify(part.value));
      skipped.push({
        value: part.value,
        path: part.path,
        reason: `group ${group.id} has no recipients for it`,
      });
    }
  }
  if (unmatched.length && !input.skipUnmatched) {
    throw new ToolError(
      `group ${group.id} has no recipients for ${unmatched.join(', ')}; add them to the group, give it a fallback, or set skipUnmatched`,
    );
  }
  if (planned.length === 0)
    throw new ToolError(`group ${group.id} has recipients for none of the parts; nothing to stage`);

  const date = now.toISOString().slice(0, 10);
  const names = new Set<string>();
  const messages: (Omit<StoredMessage, 'messageId' | 'attachment'> & {
    attachment: Omit<StoredMessage['attachment'], 'stored'>;
    content: Buffer;
  })[] = [];
  for (const [index, { part, to }] of planned.entries()) {
    let content: Buffer;
    try {
      content = await readFile(part.path);
    } catch (err) {
      throw new ToolError(`cannot read ${part.path}: ${(err as Error).message}`);
    }
    let name = basename(part.path);
    for (let n = 2; names.has(name.toLowerCase()); n++)
      name = basename(part.path).replace(/(\.[^.]*)?$/, `-${n}$1`);
    names.add(name.toLowerCase());
    const fields = {
      value: part.value === null ? '' : String(part.value),
      rows: part.rows === undefined ? '' : String(part.rows),
      file: name,
      date,
    };
    messages.push({
      index,
      value: part.value,
      to,
      cc: group.cc,
      bcc: [...group.bcc, ...account.bcc],
      subject: oneLine(render(input.subject, fields)),
      body: render(input.body, fields),
      rows: part.rows ?? null,
      attachment: { name, bytes: content.length, sha256: sha256(content) },
      content,
      state: 'pending',
      sentAt: null,
      error: null,
    });
  }
  const contentHash = sha256(
    JSON.stringify({
      account: account.id,
      from: account.from,
      group: group.id,
      messages: messages.map(({ content: _c, state: _s, sentAt: _t, error: _e, ...m }) => m),
    }),
  );
  const existing = await store.findUnsent(contentHash);
  if (existing) return { confirmation: summary(existing), skipped };

  const id = newBatchId();
  const stored: StoredMessage[] = [];
  for (const { content, ...m } of messages) {
    const file = `${m.index}-${m.attachment.name}`;
    await store.writeAttachment(id, file, content);
    stored.push({
      ...m,
      attachment: { ...m.attachment, stored: file },
      messageId: `<${id}.${m.index}@office.switchyard>`,
    });
  }
  const batch: StoredBatch = {
    version: 1,
    id,
    createdAt: now.toISOString(),
    contentHash,
    account: account.id,
    from: account.from,
    replyTo: account.replyTo ?? null,
    group: group.id,
    messages: stored,
  };
  await store.save(batch);
  return { confirmation: summary(batch), skipped };
}

/** One confirm_send per batch at a time in this process: a double click must not send twice. */
const inFlight = new Map<string, Promise<unknown>>();

function serialised<T>(id: string, work: () => Promise<T>): Promise<T> {
  const before = inFlight.get(id) ?? Promise.resolve();
  const next = before.catch(() => undefined).then(work);
  const tail = next.catch(() => undefined);
  inFlight.set(id, tail);
  void tail.then(() => {
    if (inFlight.get(id) === tail) inFlight.delete(id);
  });
  return next;
}

export interface ConfirmResult {
  readonly output: ConfirmOutput;
  /** Set when not everything is sent: the sentence the failed call reports. */
  readonly problem?: string;
}

/**
 * Sends a staged batch, each message at most once: its state is written `sending` before the SMTP
 * exchange and `sent` after, durably. A message found `sending` was interrupted mid-exchange (a crash)
 * and may have been delivered: it is reported as uncertain, not resent, unless the caller says
 * `resendUncertain`. Failed messages are tried again by the next call; sent ones never are.
 */
export function confirmSend(
  input: ConfirmInput,
  settings: OfficeSettings,
  store: BatchStore,
): Promise<ConfirmResult> {
  return serialised(input.confirmationId, async () => {
    const batch = await store.load(input.confirmationId);
    const account = accountOf(settings, batch.account);
    const password = passwordOf(settings, account);
    const results = new Map<number, ConfirmOutput['messages'][number]['status']>();
    const todo = batch.messages.filter((m) => {
      if (m.state === 'sent') results.set(m.index, 'already_sent');
      else if (m.state === 'sending' && !input.resendUncertain) results.set(m.index, 'uncertain');
      else return true;
      return false;
    });

    if (todo.length) {
      const transport = nodemailer.createTransport({
        host: account.host,
        port: account.port,
        secure: account.secure,
        requireTLS: !account.secure && account.starttls === 'required',
        ignoreTLS: !account.secure && account.starttls === 'never',
        tls: { rejectUnauthorized: !account.allowSelfSigned },
        ...(account.user ? { auth: { user: account.user, pass: password as string } } : {}),
        connectionTimeout: 30_000,
        greetingTimeout: 30_000,
        socketTimeout: 60_000,
      });
      try {
        for (const m of todo) {
          m.state = 'sending';
          m.error = null;
          await store.save(batch);
          try {
            const content = await store.readAttachment(batch.id, m.attachment.stored);
            if (sha256(content) !== m.attachment.sha256)
              throw new Error('the staged attachment changed on disk since staging; stage the batch again');
            const info = await transport.sendMail({
              from: batch.from,
              ...(batch.replyTo ? { replyTo: batch.replyTo } : {}),
              to: m.to,
              cc: m.cc,
              bcc: m.bcc,
              subject: m.subject,
              text: m.body,
              messageId: m.messageId,
              attachments: [{ filename: m.attachment.name, content, contentType: XLSX }],
            });
            m.state = 'sent';
            m.sentAt = new Date().toISOString();
            m.rejected = [...(info.rejected ?? [])];
            results.set(m.index, 'sent');
          } catch (err) {
            m.state = 'failed';
            m.error = (err as Error).message.split('\n')[0] ?? 'failed';
            results.set(m.index, 'failed');
          }
          await store.save(batch);
        }
      } finally {
        transport.close();
      }
      // Nothing will be read from the copies again once every message is out.
      if (batch.messages.every((m) => m.state === 'sent')) await store.dropAttachments(batch.id);
    }

    const messages = batch.messages.map((m) => ({
      index: m.index,
      value: m.value,
      to: m.to,
      status: results.get(m.index) ?? 'failed',
      rejected: m.rejected ?? [],
      messageId: m.state === 'sent' ? m.messageId : null,
      sentAt: m.sentAt,
      error: m.error,
    }));
    const count = (s: string) => messages.filter((m) => m.status === s).length;
    const sent = count('sent');
    const alreadySent = count('already_sent');
    const failed = count('failed');
    const uncertain = count('uncertain');
    const total = messages.length;
    const status = sent + alreadySent === total ? (sent === 0 ? 'already_sent' : 'sent') : 'partially_sent';
    const output: ConfirmOutput = {
      confirmationId: batch.id,
      status,
      sent,
      alreadySent,
      failed,
      uncertain,
      messages,
    };
    if (status !== 'partially_sent') return { output };
    const parts = [`${sent + alreadySent} of ${total} messages of ${batch.id} are sent`];
    if (failed) {
      const first = messages.find((m) => m.status === 'failed');
      parts.push(
        `${failed} failed (first: ${first?.error ?? 'unknown'}); calling confirm_send again retries only those`,
      );
    }
    if (uncertain)
      parts.push(
        `${uncertain} were being sent when an earlier call was interrupted and may have been delivered; they are resent only with resendUncertain: true`,
      );
    return { output, problem: parts.join('; ') };
  });
}
