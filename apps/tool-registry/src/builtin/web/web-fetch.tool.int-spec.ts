import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { testConfig } from '@switchyard/testing';
import type { ToolResult } from '@switchyard/contracts';
import { AddressPolicy } from '@switchyard/server-runtime';
import { WebFetchTool } from './web-fetch.tool';

const textOf = (r: ToolResult) => (r.content[0] as { text: string }).text;

/** Real HTTP servers on loopback; only server A is an allowed exception, B must never be reached. */
describe('web_fetch', () => {
  let a: Server;
  let b: Server;
  let portA: number;
  let portB: number;
  let hitsOnB = 0;
  let tool: WebFetchTool;
  /** Only the never-ending response meets a short deadline; every other case has time to spare on a busy machine. */
  let impatient: WebFetchTool;
  const ctx = () => ({ signal: new AbortController().signal, caller: { correlationId: 't' } });

  const listen = (server: Server) =>
    new Promise<number>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
    );

  beforeAll(async () => {
    a = createServer((req, res) => {
      const url = req.url ?? '/';
      if (url === '/hello') res.writeHead(200, { 'content-type': 'text/plain' }).end('hello world');
      else if (url === '/echo') {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () =>
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ method: req.method, body })),
        );
      } else if (url === '/to-hello') res.writeHead(302, { location: '/hello' }).end();
      else if (url === '/to-b') res.writeHead(302, { location: `http://127.0.0.1:${portB}/secret` }).end();
      else if (url === '/to-metadata')
        res.writeHead(301, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      else if (url === '/to-file') res.writeHead(302, { location: 'file:///etc/passwd' }).end();
      else if (url === '/loop') res.writeHead(302, { location: '/loop' }).end();
      else if (url === '/big') res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(100_000));
      else if (url === '/binary')
        res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([137, 80, 78, 71, 0, 1]));
      else if (url === '/slow')
        res.writeHead(200, { 'content-type': 'text/plain' }).write('partial'); // never ends
      else res.writeHead(404, { 'content-type': 'text/plain' }).end('nope');
    });
    b = createServer((_req, res) => {
      hitsOnB++;
      res.end('secret');
    });
    portA = await listen(a);
    portB = await listen(b);
    const withTimeout = (ms: number) => {
      const config = testConfig('tool-registry', {
        WEB_FETCH_PRIVATE_HOSTS: `127.0.0.1:${portA}`,
        WEB_FETCH_MAX_BYTES: '4096',
        WEB_FETCH_TIMEOUT_MS: String(ms),
      });
      return new WebFetchTool(config, new AddressPolicy(config.tools.webFetch));
    };
    tool = withTimeout(30_000);
    impatient = withTimeout(500);
  });

  afterAll(async () => {
    a.closeAllConnections();
    await new Promise((r) => a.close(r));
    await new Promise((r) => b.close(r));
  });

  it('GETs text', async () => {
    const r = await tool.run({ url: `http://127.0.0.1:${portA}/hello`, method: 'GET' }, ctx());
    expect(r.isError).toBe(false);
    expect(textOf(r)).toMatch(
      /^200 http:\/\/127\.0\.0\.1:\d+\/hello\ncontent-type: text\/plain\nbytes: 11\n\nhello world$/,
    );
  });

  it('POSTs a body', async () => {
    const r = await tool.run(
      {
        url: `http://127.0.0.1:${portA}/echo`,
        method: 'POST',
        body: '{"a":1}',
        headers: { 'content-type': 'application/json' },
      },
      ctx(),
    );
    expect(textOf(r)).toContain('{"method":"POST","body":"{\\"a\\":1}"}');
  });

  it('follows an allowed redirect and says so', async () => {
    const r = await tool.run({ url: `http://127.0.0.1:${portA}/to-hello`, method: 'GET' }, ctx());
    expect(textOf(r)).toContain('(after 1 redirect)');
    expect(textOf(r)).toContain('hello world');
  });

  it('re-checks redirects: a hop to a refused address is refused and never contacted', async () => {
    await expect(
      tool.run({ url: `http://127.0.0.1:${portA}/to-b`, method: 'GET' }, ctx()),
    ).rejects.toMatchObject({ code: 'forbidden' });
    await expect(
      tool.run({ url: `http://127.0.0.1:${portA}/to-metadata`, method: 'GET' }, ctx()),
    ).rejects.toMatchObject({ code: 'forbidden' });
    expect(hitsOnB).toBe(0);
  });

  it('refuses a loopback address that is not the configured exception', async () => {
    await expect(tool.run({ url: `http://127.0.0.1:${portB}/`, method: 'GET' }, ctx())).rejects.toMatchObject(
      { code: 'forbidden' },
    );
    await expect(
      tool.run({ url: `http://localhost:${portA}/hello`, method: 'GET' }, ctx()),
    ).rejects.toMatchObject({ code: 'forbidden' });
    expect(hitsOnB).toBe(0);
  });

  it.each([
    ['a file URL', 'file:///etc/passwd'],
    ['a file URL with a host', 'file://localhost/etc/passwd'],
    ['an upper-case scheme', 'FILE:///proc/self/environ'],
    ['an ftp URL', 'ftp://127.0.0.1/'],
    ['a data URL', 'data:text/plain,hello'],
  ])("refuses %s: the host's files are out of reach", async (_, url) => {
    await expect(tool.run({ url, method: 'GET' }, ctx())).rejects.toMatchObject({ code: 'forbidden' });
  });

  it('refuses a redirect to a file URL', async () => {
    await expect(
      tool.run({ url: `http://127.0.0.1:${portA}/to-file`, method: 'GET' }, ctx()),
    ).rejects.toMatchObject({ code: 'forbidden' });
  });

  it('stops redirect loops', async () => {
    await expect(
      tool.run({ url: `http://127.0.0.1:${portA}/loop`, method: 'GET' }, ctx()),
    ).rejects.toMatchObject({ code: 'tool_failed', message: expect.stringContaining('redirects') });
  });

  it('cuts the body at the size limit', async () => {
    const r = await tool.run({ url: `http://127.0.0.1:${portA}/big`, method: 'GET' }, ctx());
    expect(r.truncated).toBe(true);
    expect(textOf(r)).toContain('bytes: 4096 (cut at 4096)');
  });

  it('does not dump binary content', async () => {
    const r = await tool.run({ url: `http://127.0.0.1:${portA}/binary`, method: 'GET' }, ctx());
    expect(textOf(r)).toContain('[binary content of 6 bytes not shown]');
  });

  it('reports HTTP errors as error results', async () => {
    const r = await tool.run({ url: `http://127.0.0.1:${portA}/missing`, method: 'GET' }, ctx());
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^404 /);
  });

  it('times out a response that never ends', async () => {
    // The response never ends: a rejection with `timeout` is the tool's own deadline.
    await expect(
      impatient.run({ url: `http://127.0.0.1:${portA}/slow`, method: 'GET' }, ctx()),
    ).rejects.toMatchObject({ code: 'timeout' });
  });

  it('refuses transport headers and a GET body', async () => {
    await expect(
      tool.run(
        { url: `http://127.0.0.1:${portA}/hello`, method: 'GET', headers: { Host: 'internal' } },
        ctx(),
      ),
    ).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(
      tool.run({ url: `http://127.0.0.1:${portA}/hello`, method: 'GET', body: 'x' }, ctx()),
    ).rejects.toMatchObject({ code: 'validation_failed' });
  });
});
