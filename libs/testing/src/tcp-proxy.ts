import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy in front of a service, for network faults in tests: `drop()` cuts every open
 * connection at once (as a flaky network does), new ones go through as before.
 */
export class TcpProxy {
  private constructor(
    private readonly server: Server,
    private readonly sockets: Set<Socket>,
    readonly url: string,
  ) {}

  static async start(targetHost: string, targetPort: number): Promise<TcpProxy> {
    const sockets = new Set<Socket>();
    const server = createServer((client) => {
      const upstream = connect(targetPort, targetHost);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new TcpProxy(server, sockets, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }

  /** Cuts every connection open now; returns how many sockets were cut. */
  drop(): number {
    const n = this.sockets.size;
    for (const s of this.sockets) s.destroy();
    return n;
  }

  async close(): Promise<void> {
    this.drop();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
