import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Hook } from '@switchyard/contracts';
import { AddressPolicy } from '@switchyard/server-runtime';
import { HookRunner } from './hook-runner';

const hook = (over: Partial<Hook>): Hook => ({
  id: '00000000-0000-4000-8000-000000000001',
  ownerId: null,
  name: 'h',
  event: 'pre_tool_use',
  matcher: '',
  type: 'command',
  timeoutSeconds: 5,
  enabled: true,
  failClosed: false,
  global: false,
  createdAt: '',
  updatedAt: '',
  ...over,
});
const envelope = { event: 'pre_tool_use', tool: 'write_file', arguments: { filePath: '/x' } };

describe('HookRunner (real processes, real HTTP)', () => {
  let server: Server;
  let base: string;
  const received: unknown[] = [];
  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
    '/allow': (_q, res) => res.writeHead(200).end(''),
    '/deny': (_q, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ decision: 'deny', reason: 'policy says no' })),
    '/boom': (_q, res) => res.writeHead(500).end('{"decision":"deny"}'),
    '/slow': (_q, res) => setTimeout(() => res.writeHead(200).end(''), 3_000),
    '/garbage': (_q, res) => res.writeHead(200).end('{not json'),
  };
  const runner = new HookRunner(new AddressPolicy({ allowPrivate: true, privateHosts: [] }), {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  });
  const strict = new HookRunner(new AddressPolicy({ allowPrivate: false, privateHosts: [] }), {
    PATH: '/usr/bin:/bin',
  });

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        received.push(JSON.parse(body));
        (routes[req.url ?? ''] ?? ((_q: IncomingMessage, r: ServerResponse) => r.writeHead(404).end()))(
          req,
          res,
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  describe('command hooks', () => {
    it.each<[string, string, string]>([
      ['exit 0 lets the call go on', 'cat >/dev/null; exit 0', 'allow'],
      [
        'exit 2 denies with the first stderr line',
        'echo "no writes today" >&2; echo second >&2; exit 2',
        'deny',
      ],
      [
        'a JSON deny on stdout denies even with exit 0',
        'echo \'{"decision":"deny","reason":"json says no"}\'',
        'deny',
      ],
      ['a JSON allow goes on even with exit 1', 'echo \'{"decision":"allow"}\'; exit 1', 'allow'],
      ['exit 1 is a failure', 'exit 1', 'failed'],
      ['exit 127 (no such program) is a failure', 'definitely-not-a-program-xyz', 'failed'],
      ['invalid JSON with exit 0 goes on', 'echo "{oops"', 'allow'],
      ['a crash (killed by a signal) is a failure', 'kill -9 $$', 'failed'],
    ])('%s', async (_, command, kind) => {
      const out = await runner.run(hook({ command }), envelope);
      expect(out.kind).toBe(kind);
      if (command.includes('no writes today'))
        expect(out).toEqual({ kind: 'deny', reason: 'no writes today' });
      if (command.includes('json says no')) expect(out).toEqual({ kind: 'deny', reason: 'json says no' });
    });

    it('gets the envelope on stdin', async () => {
      const out = await runner.run(
        hook({ command: 'grep -q \'"tool":"write_file"\' && exit 2 || exit 0' }),
        envelope,
      );
      expect(out.kind).toBe('deny');
    });

    it('is killed at its timeout, with its children', async () => {
      // Sleeps far longer than the test may take: an answer at all means they were killed.
      const out = await runner.run(hook({ command: 'sleep 3000 & sleep 3000', timeoutSeconds: 1 }), envelope);
      expect(out).toEqual({ kind: 'failed', reason: 'timed out after 1 s' });
    });

    it("sees a minimal environment, not the executor's", async () => {
      process.env['SWITCHYARD_SECRET_FOR_TEST'] = 'leak';
      const out = await runner.run(
        hook({ command: 'test -z "$SWITCHYARD_SECRET_FOR_TEST" && exit 0 || exit 2' }),
        envelope,
      );
      delete process.env['SWITCHYARD_SECRET_FOR_TEST'];
      expect(out.kind).toBe('allow');
    });
  });

  describe('http hooks', () => {
    it('POSTs the envelope and goes on with a 2xx', async () => {
      received.splice(0);
      expect(await runner.run(hook({ type: 'http', url: `${base}/allow` }), envelope)).toEqual({
        kind: 'allow',
      });
      expect(received).toEqual([envelope]);
    });

    it('denies on a JSON deny', async () => {
      expect(await runner.run(hook({ type: 'http', url: `${base}/deny` }), envelope)).toEqual({
        kind: 'deny',
        reason: 'policy says no',
      });
    });

    it('fails on HTTP 500, even with a deny in the body', async () => {
      expect(await runner.run(hook({ type: 'http', url: `${base}/boom` }), envelope)).toEqual({
        kind: 'failed',
        reason: 'answered HTTP 500',
      });
    });

    it('fails when slower than its timeout', async () => {
      const out = await runner.run(hook({ type: 'http', url: `${base}/slow`, timeoutSeconds: 1 }), envelope);
      expect(out).toEqual({ kind: 'failed', reason: 'timed out after 1 s' });
    });

    it('goes on when a 2xx answer is not JSON', async () => {
      expect(await runner.run(hook({ type: 'http', url: `${base}/garbage` }), envelope)).toEqual({
        kind: 'allow',
      });
    });

    it('refuses private addresses unless allowed, like web_fetch', async () => {
      const out = await strict.run(hook({ type: 'http', url: `${base}/allow` }), envelope);
      expect(out.kind).toBe('failed');
      if (out.kind === 'failed') expect(out.reason).toContain('private, loopback or link-local');
    });
  });
});
