import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError } from '@switchyard/contracts';
import { AddressPolicy } from './address-policy';
import { vettedFetchLike } from './vetted-fetch';

interface Seen {
  method: string;
  url: string;
  host: string;
  contentType: string;
  body: string;
}

/** vettedFetchLike against a real loopback server, reached by a name the test's resolver answers. */
describe('vettedFetchLike', () => {
  let server: Server;
  let port: number;
  const seen: Seen[] = [];
  let release: (() => void) | undefined;
  let resolves = 0;

  const policy = (privateHosts: string[]) =>
    new AddressPolicy({
      allowPrivate: false,
      privateHosts,
      resolve: async () => {
        resolves++;
        return ['127.0.0.1'];
      },
    });

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({
          method: req.method ?? '',
          url: req.url ?? '',
          host: req.headers.host ?? '',
          contentType: req.headers['content-type'] ?? '',
          body: Buffer.concat(chunks).toString(),
        });
        if (req.url === '/redirect') {
          res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' });
          res.end();
        } else if (req.url === '/stream') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write('data: first\n\n');
          release = () => res.end('data: last\n\n');
        } else if (req.url === '/empty') {
          res.writeHead(204);
          res.end();
        } else {
          res.writeHead(200, {
            'content-type': 'application/json',
            'www-authenticate': 'Bearer scope="a b"',
          });
          res.end(JSON.stringify({ ok: true }));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  beforeEach(() => {
    seen.length = 0;
    resolves = 0;
  });

  it('connects to the address it vetted, sending the name it was given, headers and a form body', async () => {
    const fetchLike = vettedFetchLike(policy([`mcp.internal:${port}`]));
    const res = await fetchLike(`http://mcp.internal:${port}/token`, {
      method: 'POST',
      headers: { authorization: 'Basic eDp5' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'r' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('www-authenticate')).toBe('Bearer scope="a b"');
    expect(await res.json()).toEqual({ ok: true });
    expect(resolves).toBe(1);
    expect(seen).toEqual([
      {
        method: 'POST',
        url: '/token',
        host: `mcp.internal:${port}`,
        contentType: 'application/x-www-form-urlencoded;charset=UTF-8',
        body: 'grant_type=refresh_token&refresh_token=r',
      },
    ]);
  });

  it('refuses a private address the policy does not allow, before any request', async () => {
    const fetchLike = vettedFetchLike(policy([]));
    await expect(fetchLike(`http://mcp.internal:${port}/`)).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(fetchLike(`http://127.0.0.1:${port}/`)).rejects.toBeInstanceOf(AppError);
    expect(seen).toEqual([]);
  });

  it('answers a redirect instead of following it', async () => {
    const res = await vettedFetchLike(policy([`127.0.0.1:${port}`]))(`http://127.0.0.1:${port}/redirect`);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('http://169.254.169.254/latest/meta-data');
    expect(seen.map((s) => s.url)).toEqual(['/redirect']);
  });

  it('streams the body: the first event is readable while the response is still open', async () => {
    const res = await vettedFetchLike(policy([`127.0.0.1:${port}`]))(`http://127.0.0.1:${port}/stream`);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: first\n\n');
    release?.();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read())
      rest += new TextDecoder().decode(r.value);
    expect(rest).toBe('data: last\n\n');
  });

  it('gives a 204 an empty body', async () => {
    const res = await vettedFetchLike(policy([`127.0.0.1:${port}`]))(`http://127.0.0.1:${port}/empty`, {
      method: 'DELETE',
    });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
  });
});
