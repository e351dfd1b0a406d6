import { readFileSync } from 'node:fs';
import {
  credsAuthenticator,
  type NatsConnection,
  NatsError,
  nkeyAuthenticator,
  type ConnectionOptions,
  type TlsOptions,
} from 'nats';
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

/** What `coalesceWrites` relies on of nats.js's protocol handler (2.29): checked before use. */
interface ProtocolInternals {
  sendCommand(cmd: string | Uint8Array, ...payloads: Uint8Array[]): void;
  flushPending(): void;
  readonly outbound: { fill(buf: Uint8Array, ...payloads: Uint8Array[]): void; size(): number };
  readonly pendingLimit: number;
  /** Waiters for the server's PONGs, in the order the PINGs were written (rejected on a disconnect). */
  readonly pongs: Array<{ resolve(): void; reject(err: unknown): void }>;
}

/** Per coalesced protocol handler: a confirmation shared by everything sent in one turn. */
const coalesced = new WeakMap<object, () => Promise<void>>();
const utf8 = new TextEncoder();
const PING = utf8.encode('PING\r\n');

/**
 * nats.js writes what was published at the next microtask: a handler that tells an event and then
 * answers a few awaits later makes two socket writes, and on loopback TCP the writer pays for the
 * receiver's side too (a third to a half of a service's CPU per background task went to these writes).
 * Deferred to `setImmediate`, everything one turn of the event loop sends leaves in one write; order
 * is kept (one outbound buffer), and a full buffer is still written at once. When the client's
 * internals are not the ones known here (another nats.js version), it is left as it is.
 */
export function coalesceWrites(nc: unknown): boolean {
  const protocol = (nc as { protocol?: Partial<ProtocolInternals> } | null)?.protocol;
  if (
    !protocol ||
    coalesced.has(protocol) ||
    typeof protocol.sendCommand !== 'function' ||
    typeof protocol.flushPending !== 'function' ||
    typeof protocol.outbound?.fill !== 'function' ||
    typeof protocol.outbound.size !== 'function' ||
    typeof protocol.pendingLimit !== 'number' ||
    !Array.isArray(protocol.pongs)
  )
    return protocol !== undefined && coalesced.has(protocol);
  const p = protocol as ProtocolInternals;
  let scheduled = false;
  /** Callers waiting for a confirmation of this turn's writes: one PING goes after them. */
  let waiting: { promise: Promise<void>; resolve(): void; reject(err: unknown): void } | undefined;
  const flush = () => {
    scheduled = false;
    if (waiting) {
      // Written after everything buffered so far: its PONG confirms all of it.
      p.pongs.push(waiting);
      p.outbound.fill(PING);
      waiting = undefined;
    }
    p.flushPending();
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };
  p.sendCommand = (cmd, ...payloads) => {
    p.outbound.fill(typeof cmd === 'string' ? utf8.encode(cmd) : cmd, ...payloads);
    if (p.outbound.size() >= p.pendingLimit) p.flushPending();
    else schedule();
  };
  coalesced.set(protocol, () => {
    if (!waiting) {
      let resolve!: () => void;
      let reject!: (err: unknown) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      waiting = { promise, resolve, reject };
      schedule();
    }
    return waiting.promise;
  });
  return true;
}

/**
 * Resolves once the NATS server has processed everything this connection sent so far (a
 * subscription is live), like nats.js's `flush()`. On a connection whose writes are coalesced,
 * everyone who asks in one turn of the event loop shares one PING, written with that turn's other
 * messages: a run's start subscribed its control subject and then waited for a PING of its own,
 * a socket write and a wake-up of the NATS server per run. Rejects as `flush()` does when the
 * connection drops before the answer.
 */
export function confirmSent(nc: NatsConnection): Promise<void> {
  if (nc.isClosed()) return nc.flush(); // rejects: closed
  const shared = coalesced.get((nc as unknown as { protocol?: object }).protocol ?? {});
  return shared ? shared() : nc.flush();
}

const stackless = Symbol('stackless');

/**
 * nats.js builds a `NatsError` (with a stack trace) at the end of every request, to reject a promise
 * that has already been resolved: a tenth of a request's client-side CPU. Its errors reach our code
 * only through their codes (Bus.transportError), so they are made without a stack. Idempotent.
 */
export function natsErrorsWithoutStacks(): void {
  const ctor = NatsError as unknown as {
    errorForCode: (code: string, chained?: Error) => NatsError;
    [stackless]?: true;
  };
  if (ctor[stackless]) return;
  const make = ctor.errorForCode.bind(NatsError);
  ctor.errorForCode = (code, chained) => {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      return make(code, chained);
    } finally {
      Error.stackTraceLimit = limit;
    }
  };
  ctor[stackless] = true;
}
