import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openStream } from './sse';

const at = '2026-12-05T00:00:00.000Z';
const frame = (seq: number, type: string, data: Record<string, unknown>) =>
  `id: ${seq}\nevent: ${type}\ndata: ${JSON.stringify({ runId: 'r1', seq, type, at, data })}\n\n`;

/** A server writing the frames `script` sends on each stream, split across writes mid-frame. */
function sseServer(script: (res: ServerResponse, path: string) => void) {
  const srv: Server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-seen-token': String(req.headers['x-t']) });
    script(res, req.url ?? '');
  });
  return {
    srv,
    url: () => `http://127.0.0.1:${(srv.address() as AddressInfo).port}/s`,
  };
}

describe.each(['fetch', 'http'] as const)('openStream over %s', (transport) => {
  it('gives the frames in order across split writes, the headers, and the end of the stream', async () => {
    const s = sseServer((res) => {
      const text =
        ': connected\n\n' +
        frame(1, 'step_start', { stepId: 'a', tool: 'wait', attempt: 1 }) +
        frame(2, 'complete', { summary: 'done — ✓', result: null });
      // Cut inside a frame and inside a multi-byte character.
      const bytes = Buffer.from(text);
      const cut = bytes.indexOf(Buffer.from('✓')) + 1;
      res.write(bytes.subarray(0, 20));
      res.write(bytes.subarray(20, cut));
      setTimeout(() => res.end(bytes.subarray(cut)), 20);
    });
    await new Promise<void>((r) => s.srv.listen(0, '127.0.0.1', r));
    try {
      const stream = await openStream(s.url(), { 'x-t': 'tok' }, { checked: false, transport });
      expect(stream.res.status).toBe(200);
      expect(stream.res.headers.get('x-seen-token')).toBe('tok');
      const done = await stream.next('complete', 5_000);
      expect(done.data.data).toEqual({ summary: 'done — ✓', result: null });
      await stream.reading;
      expect(stream.ended()).toBe(true);
      expect(stream.frames.map((f) => [f.id, f.event])).toEqual([
        [1, 'step_start'],
        [2, 'complete'],
      ]);
      expect(stream.comments).toEqual(['connected']);
    } finally {
      // fetch keeps its connection alive after the response: close it, or it outlives the test.
      s.srv.closeAllConnections();
      s.srv.close();
    }
  });

  it('POSTs the body it is given (as JSON, with its length) and reads the stream of the answer', async () => {
    const seen: Array<{ method?: string; type?: string; length?: string; body: string }> = [];
    const srv = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        seen.push({
          method: req.method,
          type: req.headers['content-type'],
          length: req.headers['content-length'],
          body,
        });
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(frame(1, 'complete', { summary: 'done', result: JSON.parse(body) }));
      });
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    try {
      const post = JSON.stringify({ goal: 'ünïcode' });
      const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/start`;
      const stream = await openStream(url, {}, { checked: false, transport, post });
      const done = await stream.next('complete', 5_000);
      expect(done.data.data).toEqual({ summary: 'done', result: { goal: 'ünïcode' } });
      expect(seen).toEqual([
        { method: 'POST', type: 'application/json', length: String(Buffer.byteLength(post)), body: post },
      ]);
    } finally {
      srv.closeAllConnections();
      srv.close();
    }
  });

  it('fails the stream on a frame whose id disagrees with its data, and stops on close', async () => {
    const s = sseServer((res, path) => {
      if (path === '/s')
        res.write(
          frame(1, 'step_start', { stepId: 'a', tool: 'wait', attempt: 1 }).replace('id: 1', 'id: 7'),
        );
      else res.write(': connected\n\n');
    });
    await new Promise<void>((r) => s.srv.listen(0, '127.0.0.1', r));
    try {
      const bad = await openStream(s.url(), {}, { checked: false, transport });
      await expect(bad.next('complete', 5_000)).rejects.toThrow(/id\/event lines disagree/);
      const open = await openStream(s.url().replace('/s', '/t'), {}, { checked: false, transport });
      open.close();
      await open.reading;
      expect(open.ended()).toBe(false);
    } finally {
      s.srv.closeAllConnections();
      s.srv.close();
    }
  });
});
