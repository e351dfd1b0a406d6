import type { McpToolRecord, RemoteOAuthConfig, ToolEffect } from '@switchyard/contracts';

/** The record form as typed. Connection settings are write-only: an edit starts with them empty. */
export interface RecordForm {
  name: string;
  description: string;
  type: 'LOCAL' | 'REMOTE';
  command: string;
  /** One argument per line. */
  args: string;
  /** KEY=value, one per line. */
  env: string;
  baseUrl: string;
  /** Name: value, one per line. */
  headers: string;
  /** REMOTE: sign in with OAuth (an `oauth` section); the fields below are write-only like the rest. */
  oauth: boolean;
  grant: RemoteOAuthConfig['grant'];
  clientId: string;
  clientSecret: string;
  authMethod: '' | NonNullable<RemoteOAuthConfig['tokenEndpointAuthMethod']>;
  scope: string;
  effect: ToolEffect | '';
  idempotent: '' | 'yes' | 'no';
}

export function emptyRecordForm(record?: McpToolRecord): RecordForm {
  return {
    name: record?.name ?? '',
    description: record?.description ?? '',
    type: record?.type === 'REMOTE' ? 'REMOTE' : 'LOCAL',
    command: '',
    args: '',
    env: '',
    baseUrl: '',
    headers: '',
    oauth: Boolean(record?.oauth),
    grant: record?.oauth?.grant ?? 'authorization_code',
    clientId: '',
    clientSecret: '',
    authMethod: '',
    scope: '',
    effect: record?.effect ?? '',
    idempotent:
      record?.idempotent === null || record?.idempotent === undefined ? '' : record.idempotent ? 'yes' : 'no',
  };
}

function lines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

/** Splits "KEY=value" / "Name: value" lines; a line without the separator is reported by its number. */
export function pairs(
  text: string,
  sep: '=' | ':',
): { ok: true; value: Record<string, string> } | { ok: false; line: number } {
  const out: Record<string, string> = {};
  const all = text.split('\n');
  for (let i = 0; i < all.length; i++) {
    const raw = all[i] ?? '';
    if (!raw.trim()) continue;
    const at = raw.indexOf(sep);
    if (at <= 0) return { ok: false, line: i + 1 };
    out[raw.slice(0, at).trim()] = raw.slice(at + 1).trim();
  }
  return { ok: true, value: out };
}

/**
 * Whether the person typed any connection setting (an edit with none keeps the stored ones). The
 * OAuth switch and grant count when they differ from what the record has.
 */
export function touchesConfig(f: RecordForm, record?: McpToolRecord): boolean {
  if (f.type === 'LOCAL') return Boolean(f.command.trim() || f.args.trim() || f.env.trim());
  const oauthChanged =
    f.oauth !== Boolean(record?.oauth) ||
    (f.oauth && f.grant !== (record?.oauth?.grant ?? 'authorization_code'));
  return Boolean(
    f.baseUrl.trim() ||
    f.headers.trim() ||
    oauthChanged ||
    (f.oauth && (f.clientId.trim() || f.clientSecret.trim() || f.authMethod || f.scope.trim())),
  );
}

/** The `oauth` section as typed: empty fields are left out (the server registers a client itself). */
export function oauthOf(f: RecordForm): Record<string, string> {
  const o: Record<string, string> = { grant: f.grant };
  if (f.clientId.trim()) o['clientId'] = f.clientId.trim();
  if (f.clientSecret.trim()) o['clientSecret'] = f.clientSecret.trim();
  if (f.authMethod) o['tokenEndpointAuthMethod'] = f.authMethod;
  if (f.scope.trim()) o['scope'] = f.scope.trim().split(/\s+/).join(' ');
  return o;
}

/** The configJson the API takes, or the line that cannot be read. */
export function configJsonOf(
  f: RecordForm,
): { ok: true; json: string } | { ok: false; field: 'env' | 'headers'; line: number } {
  if (f.type === 'LOCAL') {
    const env = pairs(f.env, '=');
    if (!env.ok) return { ok: false, field: 'env', line: env.line };
    const config: Record<string, unknown> = { command: f.command.trim(), args: lines(f.args) };
    if (Object.keys(env.value).length) config['env'] = env.value;
    return { ok: true, json: JSON.stringify(config) };
  }
  const headers = pairs(f.headers, ':');
  if (!headers.ok) return { ok: false, field: 'headers', line: headers.line };
  const config: Record<string, unknown> = { baseUrl: f.baseUrl.trim() };
  if (Object.keys(headers.value).length) config['headers'] = headers.value;
  if (f.oauth) config['oauth'] = oauthOf(f);
  return { ok: true, json: JSON.stringify(config) };
}
