import { z } from 'zod';
import { ToolError } from './errors';

/**
 * The admin's settings (SWITCHYARD_PLUGIN_CONFIG: a JSON object of strings, secrets decrypted). Each
 * of `accounts`, `passwords` and `groups` is itself JSON; docs/office-pack.md shows an example. They
 * are read on every call, so a fix takes effect without restarting the server, and a bad value is
 * reported by setting and path rather than crashing it.
 */

const Id = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'letters, digits, ".", "_" or "-"');
const Email = z.email();

export const Account = z
  .object({
    id: Id,
    label: z.string().min(1).max(200).optional(),
    host: z.string().min(1).max(255),
    port: z.number().int().min(1).max(65_535).default(587),
    /** TLS from the first byte (port 465); otherwise STARTTLS as `starttls` says. */
    secure: z.boolean().default(false),
    starttls: z.enum(['required', 'opportunistic', 'never']).default('required'),
    /** For a relay with a private CA or a self-signed certificate. */
    allowSelfSigned: z.boolean().default(false),
    /** Absent: the relay takes mail without authentication. */
    user: z.string().min(1).max(320).optional(),
    from: z.string().min(3).max(320),
    replyTo: Email.optional(),
    /** Added to every message of this account (an archive mailbox, say). */
    bcc: z.array(Email).max(50).default([]),
  })
  .strict();
export type Account = z.infer<typeof Account>;

export const Group = z
  .object({
    id: Id,
    label: z.string().min(1).max(200).optional(),
    /** Split value → addresses. Values match trimmed and case-insensitively. */
    recipients: z.record(z.string(), z.array(Email).min(1).max(100)),
    /** Addresses for a value the map does not name; absent: such a part is refused (or skipped). */
    fallback: z.array(Email).max(100).optional(),
    cc: z.array(Email).max(100).default([]),
    bcc: z.array(Email).max(100).default([]),
  })
  .strict();
export type Group = z.infer<typeof Group>;

export interface OfficeSettings {
  readonly accounts: Account[];
  readonly passwords: Record<string, string>;
  readonly groups: Group[];
}

function parseSetting<T>(raw: unknown, key: string, schema: z.ZodType<T>, empty: T): T {
  if (raw === undefined || raw === null || raw === '') return empty;
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch (err) {
      throw new ToolError(
        `the plugin setting "${key}" is not valid JSON (${(err as Error).message}); an admin must fix it`,
      );
    }
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const at = first ? [key, ...first.path.map(String)].join('.') : key;
    throw new ToolError(
      `the plugin setting ${at} is invalid: ${first?.message ?? 'invalid'}; an admin must fix it`,
    );
  }
  return parsed.data;
}

function unique<T extends { id: string }>(items: T[], key: string): T[] {
  const seen = new Set<string>();
  for (const item of items) {
    if (seen.has(item.id))
      throw new ToolError(`the plugin setting "${key}" names ${item.id} twice; an admin must fix it`);
    seen.add(item.id);
  }
  return items;
}

/** The settings as the host passed them; throws a ToolError naming the bad setting. */
export function readSettings(env: NodeJS.ProcessEnv): OfficeSettings {
  let config: Record<string, unknown> = {};
  const raw = env['SWITCHYARD_PLUGIN_CONFIG'];
  if (raw) {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
        config = parsed as Record<string, unknown>;
      else throw new Error('not an object');
    } catch (err) {
      throw new ToolError(`the plugin's configuration is not a JSON object (${(err as Error).message})`);
    }
  }
  return {
    accounts: unique(parseSetting(config['accounts'], 'accounts', z.array(Account).max(100), []), 'accounts'),
    passwords: parseSetting(
      config['passwords'],
      'passwords',
      z.record(z.string(), z.string().max(1_000)),
      {},
    ),
    groups: unique(parseSetting(config['groups'], 'groups', z.array(Group).max(200), []), 'groups'),
  };
}

export function accountOf(settings: OfficeSettings, id: string): Account {
  const account = settings.accounts.find((a) => a.id === id);
  if (account) return account;
  const known = settings.accounts.map((a) => a.id);
  throw new ToolError(
    `there is no e-mail account ${JSON.stringify(id)}; ${known.length ? `configured: ${known.join(', ')}` : 'an admin has configured none'}`,
  );
}

export function groupOf(settings: OfficeSettings, id: string): Group {
  const group = settings.groups.find((g) => g.id === id);
  if (group) return group;
  const known = settings.groups.map((g) => g.id);
  throw new ToolError(
    `there is no recipient group ${JSON.stringify(id)}; ${known.length ? `configured: ${known.join(', ')}` : 'an admin has configured none'}`,
  );
}

const key = (v: string) => v.trim().toLocaleLowerCase();

/** The group's addresses for a split value: the matching entry, else the fallback, else none. */
export function recipientsFor(group: Group, value: string): string[] | undefined {
  const wanted = key(value);
  for (const [k, emails] of Object.entries(group.recipients)) if (key(k) === wanted) return emails;
  return group.fallback;
}
