import { readFileSync } from 'node:fs';
import { credsAuthenticator, nkeyAuthenticator, type ConnectionOptions, type TlsOptions } from 'nats';
import type { NatsSettings } from '@switchyard/server-config';

/** What a NATS connection needs from the configuration: servers, credentials, TLS. */
export type NatsConnectionSettings = Pick<NatsSettings, 'servers'> &
  Partial<Pick<NatsSettings, 'auth' | 'tls'>>;

/**
 * nats.js connection options for the configured servers, credentials and TLS, shared by the RPC
 * client (Bus) and the Nest transport (SwitchyardNatsServer). The NKey seed and `.creds` file are
 * read at every (re)connect, so a rotated Secret is picked up without a restart.
 */
export function natsConnectionOptions(s: NatsConnectionSettings): ConnectionOptions {
  const opts: ConnectionOptions = { servers: s.servers };
  const auth = s.auth ?? { kind: 'none' };
  switch (auth.kind) {
    case 'none':
      break;
    case 'user':
      opts.user = auth.user;
      opts.pass = auth.pass;
      break;
    case 'token':
      opts.token = auth.token;
      break;
    case 'nkey':
      opts.authenticator = nkeyAuthenticator(() =>
        new TextEncoder().encode(readFileSync(auth.seedFile, 'utf8').trim()),
      );
      break;
    case 'creds':
      opts.authenticator = credsAuthenticator(() => readFileSync(auth.file));
      break;
    default: {
      const never: never = auth;
      throw new Error(`unknown NATS auth ${JSON.stringify(never)}`);
    }
  }
  if (s.tls) {
    const tls: TlsOptions = {};
    if (s.tls.caFile) tls.caFile = s.tls.caFile;
    if (s.tls.certFile) tls.certFile = s.tls.certFile;
    if (s.tls.keyFile) tls.keyFile = s.tls.keyFile;
    opts.tls = tls;
  }
  return opts;
}

/**
 * A connect failure in words an operator acts on. nats.js reports a refused login as
 * `AUTHORIZATION_VIOLATION` and a TLS problem with Node's own message.
 */
export function natsConnectFailure(err: unknown): string {
  const e = err as { code?: string; message?: string };
  const msg = e.message ?? String(err);
  if (e.code === 'AUTHORIZATION_VIOLATION' || /authorization violation/i.test(msg))
    return `the server refused our credentials (${msg}); check NATS_URL's user info, NATS_USER/NATS_PASSWORD, NATS_TOKEN, NATS_NKEY_SEED_FILE or NATS_CREDS_FILE`;
  if (/certificate|self[- ]signed|TLS|SSL|ERR_TLS/i.test(msg) || /CERT|TLS/.test(e.code ?? ''))
    return `TLS failed (${msg}); check NATS_TLS_CA_FILE (the CA that signed the server) and the server's host name`;
  return msg;
}
