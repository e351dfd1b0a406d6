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
});
