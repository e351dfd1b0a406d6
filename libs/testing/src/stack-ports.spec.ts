import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { listensOn } from './stack';

const listen = (server: Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );

describe('listensOn: whose port a readiness probe reached', () => {
  it('is true for the process that listens on the port, false for another one and for a closed port', async () => {
    const server = createServer();
    const port = await listen(server);
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    try {
      expect(listensOn(process.pid, port)).toBe(true);
      expect(listensOn(other.pid as number, port)).toBe(false);
    } finally {
      other.kill();
      await new Promise((r) => server.close(r));
    }
    expect(listensOn(process.pid, port)).toBe(false);
  });
});
