import { ConfigError, loadConfig } from './config';

describe('loadConfig', () => {
  it('works on this machine with no variables at all', () => {
    const c = loadConfig('gateway', {});
    expect(c.http.port).toBe(3000);
    expect(c.nats.servers).toEqual(['nats://127.0.0.1:4222']);
    expect(c.database.url).toBe('postgresql://postgres@127.0.0.1:5432/switchyard');
    expect(c.redis.url).toBe('redis://127.0.0.1:6379');
    expect(c.rpc.healthTimeoutMs).toBe(1000);
  });

  it('gives each service its own default port', () => {
    expect(
      ['planner', 'executor', 'tool-registry', 'scheduler'].map(
        (s) => loadConfig(s as 'planner', {}).http.port,
      ),
    ).toEqual([3001, 3002, 3003, 3004]);
  });

  it("keeps the gateway's /metrics off its public port; the others serve it on their internal one", () => {
    expect(loadConfig('gateway', {}).http.metricsPort).toBe(9464);
    expect(loadConfig('gateway', { METRICS_PORT: '9100' }).http.metricsPort).toBe(9100);
    expect(loadConfig('gateway', { PORT: '0', METRICS_PORT: '0' }).http.metricsPort).toBe(0);
    expect(() => loadConfig('gateway', { PORT: '8080', METRICS_PORT: '8080' })).toThrow(
      /METRICS_PORT: must differ from PORT/,
    );
    expect(loadConfig('planner', { METRICS_PORT: '9100' }).http.metricsPort).toBeUndefined();
  });

  it('treats an empty value as unset', () => {
    expect(loadConfig('planner', { PORT: '', LOG_LEVEL: '' }).http.port).toBe(3001);
  });

  it('names each invalid variable on one line', () => {
    let err: unknown;
    try {
      loadConfig('gateway', { DATABASE_URL: 'mysql://x', PORT: 'abc', SWITCHYARD_ADMIN_TOKEN: 'short' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    expect(msg.split('\n')).toHaveLength(1);
    expect(msg).toContain('DATABASE_URL: must be a postgres:// or postgresql:// URL');
    expect(msg).toContain('PORT:');
    expect(msg).toContain('SWITCHYARD_ADMIN_TOKEN: must be at least 24 characters');
  });

  it('rejects a subject prefix that would break subject tokens', () => {
    expect(() => loadConfig('gateway', { NATS_SUBJECT_PREFIX: 'no-dot' })).toThrow(/NATS_SUBJECT_PREFIX/);
    expect(loadConfig('gateway', { NATS_SUBJECT_PREFIX: 'staging.' }).nats.subjectPrefix).toBe('staging.');
  });

  describe('workspace and sandbox', () => {
    const ID = '11111111-1111-4111-8111-111111111111';
    const folders = (value: unknown) => ({
      WORKSPACE_DIR: '/srv/ws',
      WORKSPACE_SHARED_FOLDERS: JSON.stringify(value),
    });

    it('reads shared folders and the sandbox settings', () => {
      const c = loadConfig('tool-registry', {
        ...folders([
          { name: 'team', path: '/srv/team', owners: ['*'] },
          { name: 'drop', path: '/srv/drop', mode: 'rw', owners: [ID] },
        ]),
        COMMAND_SANDBOX_NETWORK: 'true',
      });
      expect(c.tools.sharedFolders).toEqual([
        { name: 'team', path: '/srv/team', mode: 'ro', owners: ['*'] },
        { name: 'drop', path: '/srv/drop', mode: 'rw', owners: [ID] },
      ]);
      expect(c.tools.sandbox).toEqual({ kind: 'bwrap', bin: undefined, network: true });
      expect(loadConfig('tool-registry', {}).tools.sandbox).toEqual({
        kind: 'bwrap',
        bin: undefined,
        network: false,
      });
    });

    it.each([
      ['not JSON', 'team:/srv/team', /must be a JSON array/],
      ['a relative path', [{ name: 't', path: 'srv/team', owners: ['*'] }], /absolute path/],
      ['the filesystem root', [{ name: 't', path: '/', owners: ['*'] }], /absolute path other than \//],
      ['a name with a slash', [{ name: '../x', path: '/srv/x', owners: ['*'] }], /folder name/],
      ['an owner name instead of an id', [{ name: 't', path: '/srv/t', owners: ['alice'] }], /owner id/],
      [
        "the owners' areas",
        [{ name: 't', path: '/srv/ws/owners', owners: ['*'] }],
        /overlaps the owners' areas/,
      ],
      ["one owner's area", [{ name: 't', path: `/srv/ws/owners/${ID}`, owners: ['*'] }], /overlaps/],
      ['a parent of the areas', [{ name: 't', path: '/srv', owners: ['*'] }], /overlaps/],
      [
        'two folders of one name',
        [
          { name: 't', path: '/a', owners: ['*'] },
          { name: 't', path: '/b', owners: ['*'] },
        ],
        /unique/,
      ],
    ])('refuses shared folders: %s', (_, value, message) => {
      const env = typeof value === 'string' ? { WORKSPACE_SHARED_FOLDERS: value } : folders(value);
      expect(() => loadConfig('tool-registry', env)).toThrow(message);
    });

    it("refuses to point the SQL tools at Switchyard's own database", () => {
      for (const url of [
        'postgresql://postgres@127.0.0.1:5432/switchyard',
        'postgres://reader:pw@localhost/switchyard',
      ])
        expect(() => loadConfig('tool-registry', { AGENT_DATABASE_URL: url })).toThrow(
          /must not be Switchyard's own database/,
        );
      expect(
        loadConfig('tool-registry', { AGENT_DATABASE_URL: 'postgresql://reader@127.0.0.1/shop' }).tools.sql
          .url,
      ).toBe('postgresql://reader@127.0.0.1/shop');
    });
  });

  describe('production connection settings', () => {
    const file = __filename; // any existing absolute file stands in for a mounted certificate or seed

    it('takes NATS credentials out of the URLs (nats.js would drop them) and keeps the URLs loggable', () => {
      const n = loadConfig('gateway', { NATS_URL: 'tls://svc:p%40ss@a:4222, tls://svc:p%40ss@b:4222' }).nats;
      expect(n.servers).toEqual(['tls://a:4222', 'tls://b:4222']);
      expect(n.auth).toEqual({ kind: 'user', user: 'svc', pass: 'p@ss' });
      expect(n.tls).toEqual({});
      expect(loadConfig('gateway', { NATS_URL: 'nats://s3cret@a:4222' }).nats.auth).toEqual({
        kind: 'token',
        token: 's3cret',
      });
      expect(loadConfig('gateway', {}).nats).toMatchObject({ auth: { kind: 'none' }, tls: undefined });
    });

    it('accepts exactly one NATS credential form, and files that exist', () => {
      expect(loadConfig('gateway', { NATS_CREDS_FILE: file }).nats.auth).toEqual({ kind: 'creds', file });
      expect(loadConfig('gateway', { NATS_NKEY_SEED_FILE: file }).nats.auth).toEqual({
        kind: 'nkey',
        seedFile: file,
      });
      expect(() => loadConfig('gateway', { NATS_URL: 'nats://u:p@a:4222', NATS_TOKEN: 't' })).toThrow(
        /NATS credentials: give one form only/,
      );
      expect(() => loadConfig('gateway', { NATS_USER: 'u' })).toThrow(/NATS_USER and NATS_PASSWORD/);
      expect(() => loadConfig('gateway', { NATS_URL: 'nats://u:p@a:4222,nats://b:4222' })).toThrow(
        /same credentials/,
      );
      expect(() => loadConfig('gateway', { NATS_CREDS_FILE: '/nonexistent/x.creds' })).toThrow(
        /NATS_CREDS_FILE: no such file/,
      );
      expect(() => loadConfig('gateway', { NATS_TLS_CERT_FILE: file })).toThrow(/give both or neither/);
      expect(loadConfig('gateway', { NATS_TLS_CA_FILE: file }).nats.tls).toEqual({ caFile: file });
    });

    it("reads libpq's sslmode from DATABASE_URL or DATABASE_SSL_*, and takes it out of the URL", () => {
      const d = loadConfig('gateway', {
        DATABASE_URL: `postgresql://u:p@db:5432/sy?sslmode=verify-full&sslrootcert=${file}&application_name=x`,
      }).database;
      expect(d.url).toBe('postgresql://u:p@db:5432/sy?application_name=x');
      expect(d.ssl).toEqual({ verify: 'full', caFile: file });
      expect(loadConfig('gateway', { DATABASE_SSL_MODE: 'require' }).database.ssl).toEqual({
        verify: 'none',
      });
      // libpq: require with a root certificate checks the chain
      expect(
        loadConfig('gateway', { DATABASE_SSL_MODE: 'require', DATABASE_SSL_ROOT_CERT: file }).database.ssl,
      ).toMatchObject({ verify: 'ca' });
      expect(
        loadConfig('gateway', {
          DATABASE_URL: 'postgresql://db/sy?sslmode=require',
          DATABASE_SSL_MODE: 'disable',
        }).database.ssl,
      ).toBeUndefined();
      expect(() => loadConfig('gateway', { DATABASE_URL: 'postgresql://db/sy?sslmode=prefer' })).toThrow(
        /sslmode=prefer is not supported/,
      );
      expect(() => loadConfig('gateway', { DATABASE_SSL_MODE: 'allow' })).toThrow(
        /DATABASE_SSL_MODE: must be one of/,
      );
    });

    it('takes Redis credentials and TLS out of the URL (ioredis lets the URL win over options)', () => {
      expect(loadConfig('gateway', { REDIS_URL: 'rediss://default:pw@cache:6380/2' }).redis).toEqual({
        url: 'redis://cache:6380/2',
        username: 'default',
        password: 'pw',
        tls: {},
      });
      expect(
        loadConfig('gateway', {
          REDIS_URL: 'redis://:old@cache:6379',
          REDIS_PASSWORD: 'new',
          REDIS_TLS_CA_FILE: file,
        }).redis,
      ).toMatchObject({ password: 'new', tls: { caFile: file }, username: undefined });
      expect(loadConfig('gateway', {}).redis).toEqual({
        url: 'redis://127.0.0.1:6379',
        username: undefined,
        password: undefined,
        tls: undefined,
      });
    });
  });
});
