import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect as netConnect, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TLSSocket } from 'node:tls';
import { nkeys } from 'nats';

type KeyPair = ReturnType<typeof nkeys.createUser>;
import { Rpc } from '@switchyard/contracts';
import { Bus } from '@switchyard/server-bus';
import { loadConfig } from '@switchyard/server-config';
import { createPgPool, createPrisma } from '@switchyard/server-db';
import { createQueue, createRedis, createWorker } from '@switchyard/server-queue';
import {
  createTestDatabase,
  testConfig,
  uniquePrefix,
  waitFor,
  type TestDatabase,
} from '@switchyard/testing';
import { bootstrapService } from './bootstrap';

/**
 * Production connection settings against real servers started here with authentication and TLS:
 * nats-server (user/password, token, NKey, .creds in operator mode; TLS with a CA made in this test,
 * mutual TLS), Redis (password + TLS), Postgres behind a TLS terminator that speaks Postgres'
 * SSLRequest (the machine's Postgres has no certificate). Everything goes through loadConfig, as a
 * deployment's environment would. The machine's own NATS on 4222 is not touched.
 */

const HANG_GUARD_MS = 60_000;
jest.setTimeout(120_000);

const dir = mkdtempSync(join(tmpdir(), 'sy-conn-'));
const file = (name: string, text: string): string => {
  const p = join(dir, name);
  writeFileSync(p, text, { mode: 0o600 });
  return p;
};
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

/** A CA and a certificate it signs for `names` (DNS or IP), written as <name>.pem / <name>-key.pem. */
function makeCa(name: string): string {
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-keyout',
    `${name}-key.pem`,
    '-out',
    `${name}.pem`,
  );
  return join(dir, `${name}.pem`);
}
function makeCert(ca: string, name: string, sans: string[], usage: 'serverAuth' | 'clientAuth'): string {
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    `/CN=${name}`,
    '-keyout',
    `${name}-key.pem`,
    '-out',
    `${name}.csr`,
  );
  const ext = file(
    `${name}.ext`,
    `extendedKeyUsage=${usage}\n${sans.length ? `subjectAltName=${sans.join(',')}\n` : ''}`,
  );
  openssl(
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.pem`,
    '-CAkey',
    `${ca}-key.pem`,
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    ext,
    '-out',
    `${name}.pem`,
  );
  return join(dir, `${name}.pem`);
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

const started: ChildProcess[] = [];

/** Starts a process and waits until its output matches `ready`. */
async function startProcess(cmd: string, args: string[], ready: RegExp): Promise<ChildProcess> {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${cmd} did not start:\n${out}`)), HANG_GUARD_MS);
    const hear = (b: Buffer) => {
      out += b.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', hear);
    child.stderr?.on('data', hear);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} exited with ${code}:\n${out}`));
    });
  });
  child.removeAllListeners('exit');
  return child;
}

async function startNats(name: string, conf: string): Promise<number> {
  const port = await freePort();
  const path = file(`${name}.conf`, `listen: 127.0.0.1:${port}\n${conf}`);
  await startProcess('/usr/sbin/nats-server', ['-c', path], /Server is ready/);
  return port;
}

// --- NATS JWTs (decentralized auth), signed here with NKeys as nsc would ------------------------
const b64url = (b: Uint8Array | string) => Buffer.from(b).toString('base64url');
function natsJwt(issuer: KeyPair, subject: string, nats: Record<string, unknown>): string {
  const claims: Record<string, unknown> = {
    iat: Math.floor(Date.now() / 1000),
    iss: issuer.getPublicKey(),
    name: subject.slice(0, 8),
    sub: subject,
    nats: { ...nats, version: 2 },
  };
  claims['jti'] = createHash('sha256').update(JSON.stringify(claims)).digest('base64url');
  const head = `${b64url(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }))}.${b64url(JSON.stringify(claims))}`;
  return `${head}.${b64url(issuer.sign(Buffer.from(head)))}`;
}
const unlimited = { subs: -1, data: -1, payload: -1 };
function credsFile(name: string, jwt: string, user: KeyPair): string {
  const seed = new TextDecoder().decode(user.getSeed());
  return file(
    name,
    `-----BEGIN NATS USER JWT-----\n${jwt}\n------END NATS USER JWT------\n\n` +
      `-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n`,
  );
}

// --- Postgres over TLS: Postgres' SSLRequest answered here, the TLS session ends here -----------
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);
interface PgTlsTerminator {
  readonly port: number;
  readonly tlsSessions: () => number;
  close(): Promise<void>;
}
async function pgTlsTerminator(cert: string, key: string): Promise<PgTlsTerminator> {
  let sessions = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('error', () => undefined);
    client.once('data', (first) => {
      if (!first.subarray(0, 8).equals(SSL_REQUEST)) {
        client.destroy(); // plain startup: this terminator only speaks TLS
        return;
      }
      client.write('S');
      const tls = new TLSSocket(client, { isServer: true, cert, key });
      tls.on('error', () => client.destroy());
      tls.once('secure', () => {
        sessions++;
        const upstream = netConnect(5432, '127.0.0.1');
        sockets.add(upstream);
        upstream.on('error', () => tls.destroy());
        tls.pipe(upstream).pipe(tls);
        tls.on('close', () => upstream.destroy());
        upstream.on('close', () => tls.destroy());
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    tlsSessions: () => sessions,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

// ------------------------------------------------------------------------------------------------

let caFile: string;
let otherCa: string;
let serverCert: string;
let serverKey: string;
let clientCert: string;
let clientKey: string;
let wrongHostCert: string;

beforeAll(() => {
  caFile = makeCa('ca');
  otherCa = makeCa('other-ca');
  serverCert = makeCert('ca', 'server', ['DNS:localhost', 'IP:127.0.0.1'], 'serverAuth');
  serverKey = join(dir, 'server-key.pem');
  clientCert = makeCert('ca', 'client', [], 'clientAuth');
  clientKey = join(dir, 'client-key.pem');
  wrongHostCert = makeCert('ca', 'elsewhere', ['DNS:db.elsewhere.example'], 'serverAuth');
});

afterAll(() => {
  for (const c of started) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const natsEnv = (env: Record<string, string>) => loadConfig('planner', env).nats;
async function connectBus(env: Record<string, string>): Promise<Bus> {
  return Bus.connect({ ...natsEnv(env), name: 'conn-test', defaultTimeoutMs: 5_000 });
}
async function connectError(env: Record<string, string>): Promise<Error> {
  const err = await connectBus(env).then(
    async (bus) => {
      await bus.close();
      return undefined;
    },
    (e: Error) => e,
  );
  if (!err) throw new Error(`connected with ${JSON.stringify(env)}, expected a refusal`);
  return err;
}
/** A request that only an authenticated peer on the same server can answer. */
async function roundTrip(bus: Bus): Promise<unknown> {
  const subject = `${uniquePrefix()}echo`;
  const stop = await bus.respond(subject, async (p) => ({ echoed: p }));
  try {
    return await bus.request(subject, { hello: 'tls' });
  } finally {
    stop();
  }
}

describe('NATS: every credential form, over TLS, through the configuration', () => {
  let usersPort: number;
  let tokenPort: number;
  let operatorPort: number;
  const nkeyUser = nkeys.createUser();
  const strangerNkey = nkeys.createUser();
  let nkeySeedFile: string;
  let strangerSeedFile: string;
  let goodCreds: string;
  let foreignCreds: string;
  const token = randomBytes(16).toString('hex');

  beforeAll(async () => {
    const tls = `tls { cert_file: "${serverCert}", key_file: "${serverKey}", ca_file: "${caFile}" }`;
    // Mutual TLS too: the server checks the client's certificate against the same CA.
    const mtls = `tls { cert_file: "${serverCert}", key_file: "${serverKey}", ca_file: "${caFile}", verify: true }`;
    usersPort = await startNats(
      'users',
      `${mtls}\nauthorization { users: [ { user: "svc", password: "p@ss:w/rd" }, { nkey: "${nkeyUser.getPublicKey()}" } ] }\n`,
    );
    tokenPort = await startNats('token', `${tls}\nauthorization { token: "${token}" }\n`);

    const operator = nkeys.createOperator();
    const account = nkeys.createAccount();
    const user = nkeys.createUser();
    const foreignAccount = nkeys.createAccount();
    const foreignUser = nkeys.createUser();
    const opJwt = natsJwt(operator, operator.getPublicKey(), { type: 'operator' });
    const accountJwt = natsJwt(operator, account.getPublicKey(), {
      type: 'account',
      limits: { ...unlimited, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 },
    });
    goodCreds = credsFile(
      'good.creds',
      natsJwt(account, user.getPublicKey(), { type: 'user', pub: {}, sub: {}, ...unlimited }),
      user,
    );
    // Signed by an account the server does not know.
    foreignCreds = credsFile(
      'foreign.creds',
      natsJwt(foreignAccount, foreignUser.getPublicKey(), { type: 'user', pub: {}, sub: {}, ...unlimited }),
      foreignUser,
    );
    operatorPort = await startNats(
      'operator',
      `${tls}\noperator: "${file('op.jwt', opJwt)}"\nresolver: MEMORY\nresolver_preload: { ${account.getPublicKey()}: "${accountJwt}" }\n`,
    );
    nkeySeedFile = file('user.nk', new TextDecoder().decode(nkeyUser.getSeed()) + '\n');
    strangerSeedFile = file('stranger.nk', new TextDecoder().decode(strangerNkey.getSeed()));
  });

  const mtlsEnv = () => ({
    NATS_TLS_CA_FILE: caFile,
    NATS_TLS_CERT_FILE: clientCert,
    NATS_TLS_KEY_FILE: clientKey,
  });

  it('user and password written in NATS_URL (which nats.js alone would drop) connect', async () => {
    const env = {
      NATS_URL: `tls://svc:${encodeURIComponent('p@ss:w/rd')}@127.0.0.1:${usersPort}`,
      ...mtlsEnv(),
    };
    expect(natsEnv(env).servers).toEqual([`tls://127.0.0.1:${usersPort}`]); // no secret in what gets logged
    const bus = await connectBus(env);
    await expect(roundTrip(bus)).resolves.toEqual({ echoed: { hello: 'tls' } });
    await bus.close();
  });

  it('NATS_USER / NATS_PASSWORD connect; a wrong password is a clear refusal', async () => {
    const url = `nats://127.0.0.1:${usersPort}`;
    const bus = await connectBus({
      NATS_URL: url,
      NATS_USER: 'svc',
      NATS_PASSWORD: 'p@ss:w/rd',
      ...mtlsEnv(),
    });
    await expect(roundTrip(bus)).resolves.toEqual({ echoed: { hello: 'tls' } });
    await bus.close();
    const err = await connectError({ NATS_URL: url, NATS_USER: 'svc', NATS_PASSWORD: 'wrong', ...mtlsEnv() });
    expect(err.message).toMatch(
      /cannot connect to NATS at nats:\/\/127\.0\.0\.1:\d+: the server refused our credentials/,
    );
    expect(err.message).not.toContain('wrong');
  });

  it('an NKey seed file connects; a seed the server does not know is refused', async () => {
    const url = `nats://127.0.0.1:${usersPort}`;
    const bus = await connectBus({ NATS_URL: url, NATS_NKEY_SEED_FILE: nkeySeedFile, ...mtlsEnv() });
    await expect(roundTrip(bus)).resolves.toEqual({ echoed: { hello: 'tls' } });
    await bus.close();
    const err = await connectError({ NATS_URL: url, NATS_NKEY_SEED_FILE: strangerSeedFile, ...mtlsEnv() });
    expect(err.message).toMatch(/refused our credentials/);
  });

  it('mutual TLS: without the client certificate the server turns us away', async () => {
    const err = await connectError({
      NATS_URL: `nats://127.0.0.1:${usersPort}`,
      NATS_USER: 'svc',
      NATS_PASSWORD: 'p@ss:w/rd',
      NATS_TLS_CA_FILE: caFile,
    });
    expect(err.message).toMatch(/cannot connect to NATS/);
  });

  it('a token (in the URL or NATS_TOKEN) connects; a wrong token is refused', async () => {
    const tlsOnly = { NATS_TLS_CA_FILE: caFile };
    for (const env of <Array<Record<string, string>>>[
      { NATS_URL: `tls://${token}@127.0.0.1:${tokenPort}` },
      { NATS_URL: `nats://127.0.0.1:${tokenPort}`, NATS_TOKEN: token },
    ]) {
      const bus = await connectBus({ ...env, ...tlsOnly });
      await expect(roundTrip(bus)).resolves.toEqual({ echoed: { hello: 'tls' } });
      await bus.close();
    }
    const err = await connectError({
      NATS_URL: `nats://127.0.0.1:${tokenPort}`,
      NATS_TOKEN: 'nope',
      ...tlsOnly,
    });
    expect(err.message).toMatch(/refused our credentials/);
  });

  it('a .creds file (operator mode) connects; a user of an unknown account is refused', async () => {
    const base = { NATS_URL: `nats://127.0.0.1:${operatorPort}`, NATS_TLS_CA_FILE: caFile };
    const bus = await connectBus({ ...base, NATS_CREDS_FILE: goodCreds });
    await expect(roundTrip(bus)).resolves.toEqual({ echoed: { hello: 'tls' } });
    await bus.close();
    const err = await connectError({ ...base, NATS_CREDS_FILE: foreignCreds });
    expect(err.message).toMatch(/refused our credentials/);
  });

  it('TLS is checked: a server signed by a CA we were not given is refused, naming the CA setting', async () => {
    const err = await connectError({
      NATS_URL: `tls://${token}@127.0.0.1:${tokenPort}`,
      NATS_TLS_CA_FILE: otherCa,
    });
    expect(err.message).toMatch(/TLS failed .*NATS_TLS_CA_FILE/);
    // Without any CA file Node's store does not know our CA either.
    const noCa = await connectError({ NATS_URL: `tls://${token}@127.0.0.1:${tokenPort}` });
    expect(noCa.message).toMatch(/TLS failed/);
  });

  it('a tls:// URL requires TLS: a plain server is not silently accepted', async () => {
    const plainPort = await startNats('plain', '');
    const err = await connectError({ NATS_URL: `tls://127.0.0.1:${plainPort}`, NATS_TLS_CA_FILE: caFile });
    expect(err.message).toMatch(/cannot connect to NATS/);
  });
});

describe('Postgres over TLS (sslmode) through the configuration', () => {
  let db: TestDatabase;
  let terminator: PgTlsTerminator;
  let wrongHost: PgTlsTerminator;
  const url = (port: number, query = '') =>
    `postgresql://postgres@localhost:${port}/${new URL(db.url).pathname.slice(1)}${query}`;
  const select1 = async (env: Record<string, string>) => {
    const config = loadConfig('executor', env).database;
    const pool = createPgPool({ ...config, applicationName: 'conn-test', onIdleError: () => undefined });
    try {
      return (await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one;
    } finally {
      await pool.end();
    }
  };

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
    terminator = await pgTlsTerminator(`${readPem(serverCert)}`, readPem(serverKey));
    wrongHost = await pgTlsTerminator(readPem(wrongHostCert), readPem(join(dir, 'elsewhere-key.pem')));
  });
  afterAll(async () => {
    await terminator?.close();
    await wrongHost?.close();
    await db?.drop();
  });

  it('sslmode=verify-full with sslrootcert in the URL (libpq style): the raw pool and Prisma both speak TLS', async () => {
    const env = { DATABASE_URL: url(terminator.port, `?sslmode=verify-full&sslrootcert=${caFile}`) };
    const before = terminator.tlsSessions();
    expect(await select1(env)).toBe(1);
    const config = loadConfig('executor', env).database;
    expect(config.url).not.toContain('sslmode');
    const prisma = createPrisma({ ...config, applicationName: 'conn-test' });
    try {
      expect(await prisma.$queryRawUnsafe<Array<{ one: number }>>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await prisma.$disconnect();
    }
    expect(terminator.tlsSessions()).toBeGreaterThanOrEqual(before + 2);
  });

  it('DATABASE_SSL_MODE and DATABASE_SSL_ROOT_CERT do the same', async () => {
    expect(
      await select1({
        DATABASE_URL: url(terminator.port),
        DATABASE_SSL_MODE: 'verify-full',
        DATABASE_SSL_ROOT_CERT: caFile,
      }),
    ).toBe(1);
  });

  it('verify-full refuses an unknown CA and a certificate for another host; verify-ca accepts the latter', async () => {
    await expect(
      select1({
        DATABASE_URL: url(terminator.port),
        DATABASE_SSL_MODE: 'verify-full',
        DATABASE_SSL_ROOT_CERT: otherCa,
      }),
    ).rejects.toThrow(/certificate/);
    await expect(
      select1({
        DATABASE_URL: url(wrongHost.port),
        DATABASE_SSL_MODE: 'verify-full',
        DATABASE_SSL_ROOT_CERT: caFile,
      }),
    ).rejects.toThrow(/Hostname\/IP does not match|altnames/);
    expect(
      await select1({
        DATABASE_URL: url(wrongHost.port),
        DATABASE_SSL_MODE: 'verify-ca',
        DATABASE_SSL_ROOT_CERT: caFile,
      }),
    ).toBe(1);
  });

  it('require encrypts without a CA (libpq: no verification); a server without TLS is refused', async () => {
    expect(await select1({ DATABASE_URL: url(terminator.port, '?sslmode=require') })).toBe(1);
    await expect(
      select1({ DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/postgres?sslmode=require' }),
    ).rejects.toThrow(/does not support SSL/);
  });
});

describe('Redis with a password and TLS (the connection BullMQ uses)', () => {
  let port: number;
  const password = randomBytes(12).toString('hex');

  beforeAll(async () => {
    port = await freePort();
    await startProcess(
      'redis-server',
      [
        '--port',
        '0',
        '--tls-port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--tls-cert-file',
        serverCert,
        '--tls-key-file',
        serverKey,
        '--tls-ca-cert-file',
        caFile,
        '--tls-auth-clients',
        'no',
        '--requirepass',
        password,
        '--save',
        '',
        '--appendonly',
        'no',
      ],
      /Ready to accept connections/,
    );
  });

  const redisFrom = (env: Record<string, string>) =>
    createRedis({ ...loadConfig('scheduler', env).redis, name: 'conn-test' });

  it('rediss:// with the password in the URL or in REDIS_PASSWORD answers, and a BullMQ job runs over it', async () => {
    for (const env of <Array<Record<string, string>>>[
      { REDIS_URL: `rediss://:${password}@localhost:${port}`, REDIS_TLS_CA_FILE: caFile },
      {
        REDIS_URL: `redis://localhost:${port}`,
        REDIS_TLS: 'true',
        REDIS_PASSWORD: password,
        REDIS_TLS_CA_FILE: caFile,
      },
    ]) {
      const redis = redisFrom(env);
      await redis.connect();
      expect(await redis.ping()).toBe('PONG');
      await redis.quit();
    }
    const settings = loadConfig('scheduler', {
      REDIS_URL: `rediss://localhost:${port}`,
      REDIS_PASSWORD: password,
      REDIS_TLS_CA_FILE: caFile,
    }).redis;
    const prefix = uniquePrefix();
    const connection = createRedis({ ...settings, name: 'conn-test-queue' });
    const queue = createQueue<{ n: number }>('conn', connection, prefix);
    const seen: number[] = [];
    const worker = createWorker<{ n: number }>(
      'conn',
      { ...settings, name: 'conn-test-worker', prefix, concurrency: 1 },
      async (job) => {
        seen.push(job.data.n);
      },
    );
    try {
      await queue.add('j', { n: 7 });
      await waitFor(() => (seen.length ? seen : undefined), HANG_GUARD_MS);
      expect(seen).toEqual([7]);
    } finally {
      await worker.close();
      await queue.close();
      await connection.quit();
    }
  });

  /** ioredis reports the cause on its `error` event; the connect promise only says "closed". */
  const failureOf = async (env: Record<string, string>): Promise<string> => {
    const redis = redisFrom(env);
    redis.options.retryStrategy = () => null; // one attempt: its error is what we want to see
    const heard: string[] = [];
    redis.on('error', (e: Error) => heard.push(e.message));
    await expect(redis.connect()).rejects.toThrow();
    redis.disconnect();
    return heard.join('\n');
  };

  it('a wrong password and an unknown CA fail with what went wrong', async () => {
    expect(
      await failureOf({ REDIS_URL: `rediss://:nope@localhost:${port}`, REDIS_TLS_CA_FILE: caFile }),
    ).toMatch(/WRONGPASS/);
    expect(
      await failureOf({ REDIS_URL: `rediss://:${password}@localhost:${port}`, REDIS_TLS_CA_FILE: otherCa }),
    ).toMatch(/certificate/);
  });
});

describe('a whole service booted from secured settings', () => {
  it('answers over authenticated TLS NATS and reports Postgres (TLS) and Redis (TLS + password) up', async () => {
    const natsPort = await startNats(
      'service',
      `tls { cert_file: "${serverCert}", key_file: "${serverKey}" }\nauthorization { user: "svc", password: "s3cret" }\n`,
    );
    const redisPort = await freePort();
    const redisPassword = randomBytes(8).toString('hex');
    await startProcess(
      'redis-server',
      [
        '--port',
        '0',
        '--tls-port',
        String(redisPort),
        '--bind',
        '127.0.0.1',
        '--tls-cert-file',
        serverCert,
        '--tls-key-file',
        serverKey,
        '--tls-ca-cert-file',
        caFile,
        '--tls-auth-clients',
        'no',
        '--requirepass',
        redisPassword,
        '--save',
        '',
        '--appendonly',
        'no',
      ],
      /Ready to accept connections/,
    );
    const db = await createTestDatabase();
    const pg = await pgTlsTerminator(readPem(serverCert), readPem(serverKey));
    const prefix = uniquePrefix();
    const env = {
      NATS_URL: `tls://svc:s3cret@localhost:${natsPort}`,
      NATS_TLS_CA_FILE: caFile,
      NATS_SUBJECT_PREFIX: prefix,
      DATABASE_URL: `postgresql://postgres@localhost:${pg.port}/${db.name}?sslmode=verify-full`,
      DATABASE_SSL_ROOT_CERT: caFile,
      REDIS_URL: `rediss://:${redisPassword}@localhost:${redisPort}`,
      REDIS_TLS_CA_FILE: caFile,
    };
    const service = await bootstrapService({
      config: testConfig('planner', env),
      modules: [],
      uses: { postgres: true, redis: true },
    });
    const bus = await Bus.connect({
      ...natsEnv(env),
      name: 'conn-test',
      subjectPrefix: prefix,
      defaultTimeoutMs: 5_000,
    });
    try {
      expect(await bus.call(Rpc.health.planner, {})).toMatchObject({
        status: 'up',
        checks: { nats: { status: 'up' }, postgres: { status: 'up' }, redis: { status: 'up' } },
      });
      expect(pg.tlsSessions()).toBeGreaterThan(0);
    } finally {
      await bus.close();
      await service.close();
      await pg.close();
      await db.drop();
    }
  });
});

function readPem(path: string): string {
  return readFileSync(path, 'utf8');
}
