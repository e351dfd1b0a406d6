import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { KeepAliveApi } from './http';

/** A server that answers 200 with the request's count, and resets the sockets `reset` names. */
function server(reset: (request: number, onReusedSocket: boolean) => boolean) {
  let requests = 0;
  const seen = new WeakMap<Socket, number>();
  const srv: Server = createServer((req, res) => {
    const n = ++requests;
    const onSocket = (seen.get(req.socket) ?? 0) + 1;
    seen.set(req.socket, onSocket);
    req.resume();
    req.on('end', () => {
      if (reset(n, onSocket > 1)) req.socket.destroy();
      else res.end(JSON.stringify({ n }));
    });
  });
  return {
    srv,
    requests: () => requests,
    url: () => `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
  };
}

describe('KeepAliveApi', () => {
  it('sends a request again, once, when its kept-alive socket turns out closed', async () => {
    // The second request arrives on the kept-alive socket, which the server drops (as one closing an
    // idle socket would): the client sends it again on a new socket.
    const s = server((n, reused) => n === 2 && reused);
    await new Promise<void>((r) => s.srv.listen(0, '127.0.0.1', r));
    const api = new KeepAliveApi(s.url());
    try {
      expect((await api.call('POST', '/a', { body: { x: 1 } })).json).toEqual({ n: 1 });
      expect((await api.call('POST', '/b', { body: { x: 2 } })).json).toEqual({ n: 3 });
      expect(s.requests()).toBe(3);
    } finally {
      api.close();
      s.srv.close();
    }
  });

  it('does not send again when a new socket is reset (the server may have seen the request)', async () => {
    const fresh = server((n) => n === 1);
    await new Promise<void>((r) => fresh.srv.listen(0, '127.0.0.1', r));
    const api = new KeepAliveApi(fresh.url());
    try {
      await expect(api.call('POST', '/a', { body: {} })).rejects.toMatchObject({ code: 'ECONNRESET' });
      expect(fresh.requests()).toBe(1);
    } finally {
      api.close();
      fresh.srv.close();
    }
  });
});
