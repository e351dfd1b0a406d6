import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { RunningService } from '@switchyard/server-runtime';
import { createTestDatabase, testConfig, uniquePrefix, type TestDatabase } from '@switchyard/testing';
import { bootstrap } from '../bootstrap';
import { WEB_CLIENT_CSP } from './web-client';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request with the path sent exactly as written (fetch would normalise `..` and `%2e%2e`). */
function raw(base: string, path: string, method = 'GET'): Promise<Raw> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const INDEX =
  '<!doctype html><html><head><script type="module" src="/assets/app-1a2b.js"></script></head></html>';
const APP_JS = 'console.log("switchyard");';
const SECRET = 'root:x:0:0:secret-outside-web-dir';

describe('the web client at / (in-process gateway, a temporary WEB_DIR)', () => {
  let db: TestDatabase;
  let gateway: RunningService;
  let top: string;
  let web: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    top = mkdtempSync(join(tmpdir(), 'sy-web-'));
    web = join(top, 'web');
    mkdirSync(join(web, 'assets'), { recursive: true });
    // Files next to WEB_DIR that no request may reach.
    writeFileSync(join(top, 'passwd'), SECRET);
    writeFileSync(join(top, 'outside.js'), SECRET);
    mkdirSync(join(top, 'elsewhere'));
    writeFileSync(join(top, 'elsewhere', 'x.js'), SECRET);
    gateway = await bootstrap(
      testConfig('gateway', {
        DATABASE_URL: db.url,
        NATS_SUBJECT_PREFIX: uniquePrefix('web'),
        SWITCHYARD_ADMIN_TOKEN: `adm_${randomBytes(24).toString('base64url')}`,
        WEB_DIR: web,
        LOG_LEVEL: 'fatal',
      }),
    );
  });

  afterAll(async () => {
    await gateway?.close();
    await db?.drop();
    if (top) rmSync(top, { recursive: true, force: true });
  });

  const expectClientHeaders = (r: Raw) => {
    expect(r.headers['content-security-policy']).toBe(WEB_CLIENT_CSP);
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['referrer-policy']).toBe('no-referrer');
  };

  it('answers 503 with a page saying how to build it while WEB_DIR has no index.html', async () => {
    for (const path of ['/', '/runs/123']) {
      const r = await raw(gateway.url, path);
      expect(r.status).toBe(503);
      expect(r.headers['content-type']).toContain('text/html');
      expect(r.body).toContain('npm run build:web');
      expectClientHeaders(r);
    }
    // The API is not affected.
    expect((await raw(gateway.url, '/api/health')).headers['content-type']).toContain('json');
  });

  describe('once built', () => {
    beforeAll(() => {
      writeFileSync(join(web, 'index.html'), INDEX);
      writeFileSync(join(web, 'assets', 'app-1a2b.js'), APP_JS);
      writeFileSync(join(web, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
      // Symlinks out of WEB_DIR: a file and a directory.
      symlinkSync(join(top, 'outside.js'), join(web, 'assets', 'escape.js'));
      symlinkSync(join(top, 'elsewhere'), join(web, 'linked'));
    });

    it('serves index.html at / and for deep links, no-cache, with the strict CSP', async () => {
      for (const path of [
        '/',
        '/runs',
        '/runs/5d4c1f0e-0000-4000-8000-000000000000',
        '/settings/rules',
        '/inbox?x=1',
      ]) {
        const r = await raw(gateway.url, path);
        expect([path, r.status, r.body]).toEqual([path, 200, INDEX]);
        expect(r.headers['content-type']).toContain('text/html');
        expect(r.headers['cache-control']).toBe('no-cache');
        expectClientHeaders(r);
      }
      const head = await raw(gateway.url, '/runs/abc', 'HEAD');
      expect(head.status).toBe(200);
      expect(head.body).toBe('');
    });

    it('serves assets for a year (immutable), other files no-cache; a missing file with an extension is 404', async () => {
      const js = await raw(gateway.url, '/assets/app-1a2b.js');
      expect(js.status).toBe(200);
      expect(js.body).toBe(APP_JS);
      expect(js.headers['content-type']).toMatch(/javascript/);
      expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expectClientHeaders(js);
      const icon = await raw(gateway.url, '/favicon.svg');
      expect(icon.status).toBe(200);
      expect(icon.headers['cache-control']).toBe('no-cache');
      for (const path of ['/assets/missing-9z.js', '/robots.txt']) {
        const r = await raw(gateway.url, path);
        expect([path, r.status]).toEqual([path, 404]);
        expectClientHeaders(r);
      }
    });

    it('never answers the API, the probes or metrics, and only GET and HEAD', async () => {
      const apiAnswer = await raw(gateway.url, '/api/agent/runs');
      expect(apiAnswer.status).toBe(401);
      expect(apiAnswer.headers['content-type']).toContain('application/problem+json');
      for (const path of ['/api', '/api/nothing-here', '/API/nothing', '/mcp/tool/nothing', '/metrics']) {
        const r = await raw(gateway.url, path);
        expect([path, r.body.includes('<!doctype html>'), r.headers['content-security-policy']]).toEqual([
          path,
          false,
          undefined,
        ]);
      }
      expect((await raw(gateway.url, '/healthz')).status).toBe(200);
      const post = await raw(gateway.url, '/runs', 'POST');
      expect(post.status).toBe(404);
      expect(post.body).not.toContain('<!doctype html>');
    });

    it('never leaves WEB_DIR, whatever the path (attack corpus)', async () => {
      const corpus = [
        '/../passwd',
        '/..%2fpasswd',
        '/..%2f..%2fetc/passwd',
        '/%2e%2e/passwd',
        '/%2e%2e%2fpasswd',
        '/.%2e/passwd',
        '/assets/..%2f..%2fpasswd',
        '/assets/%2e%2e/%2e%2e/passwd',
        '/assets/%252e%252e/%252e%252e/passwd',
        '/..%5cpasswd',
        '/assets\\..\\..\\passwd',
        '/%5c..%5c..%5cpasswd',
        '/assets/app-1a2b.js%00.html',
        '/%00',
        '/assets/%c0%ae%c0%ae/passwd',
        '/assets/%ff',
        '/assets/escape.js',
        '/linked/x.js',
        '//etc/passwd',
        '/assets/../../outside.js',
        '/./../outside.js',
      ];
      const leaked: string[] = [];
      for (const path of corpus) {
        const r = await raw(gateway.url, path);
        if (
          r.body.includes('secret-outside-web-dir') ||
          r.status >= 500 ||
          (r.status === 200 && r.body !== INDEX)
        )
          leaked.push(`${path}: ${r.status} ${r.body.slice(0, 80)}`);
        if (r.status !== 400) expectClientHeaders(r);
      }
      expect(leaked).toEqual([]);
      // The corpus is judged, not refused wholesale: the real files are served.
      expect((await raw(gateway.url, '/assets/app-1a2b.js')).body).toBe(APP_JS);
    });
  });
});
