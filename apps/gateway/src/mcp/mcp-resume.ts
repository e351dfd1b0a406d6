import { Injectable } from '@nestjs/common';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { Response } from 'express';
import type { GatewayRequest } from '../http/endpoint';
import { RunFeed } from '../runs/run-feed';
import { StreamRelay, type Following } from '../runs/stream-relay';
import { McpNotifier } from './mcp-notifier';
import { McpSessions, parseEventId, STANDALONE_STREAM, type McpStreamEvent } from './mcp-sessions';

export function rpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/**
 * A GET with Last-Event-ID, on any replica: the stream it names, resumed after that event. The
 * messages kept since are replayed and the stream is then followed live — a request's stream from
 * the replica running the call (which keeps and publishes every message it sends, whether or not
 * its own client is still there), the standalone stream from this replica's notifier. It is the
 * SSE relay's follower with an MCP stream as its log: subscribed before it reads, each message
 * once, in order. A request's stream ends after its response; the standalone one stays open.
 *
 * Served here rather than by the SDK's transport because that transport only sends what the
 * process holding it produces: a resume there gets the replay and then nothing.
 */
@Injectable()
export class McpResumedStreams {
  constructor(
    private readonly sessions: McpSessions,
    private readonly relay: StreamRelay,
    private readonly feed: RunFeed,
    private readonly notifier: McpNotifier,
  ) {}

  async resume(
    req: GatewayRequest,
    res: Response,
    sessionId: string,
    ownerId: string,
    lastEventId: string,
  ): Promise<void> {
    if (!req.headers.accept?.includes('text/event-stream'))
      return rpcError(res, 406, -32000, 'Not Acceptable: Client must accept text/event-stream');
    const version = req.headers['mcp-protocol-version'];
    if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
      return rpcError(
        res,
        400,
        -32000,
        `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
      );
    const at = parseEventId(lastEventId);
    if (!at) return rpcError(res, 400, -32000, 'Invalid event ID format');

    const head = () => {
      if (!res.headersSent) res.writeHead(200, SSE_HEADERS);
    };
    let offNotifier: (() => void) | undefined;
    const stopBeat = this.feed.heartbeat(() => {
      head();
      res.write(': keepalive\n\n');
    });
    // The live feed broke (its Redis subscriber reconnected): end; the client resumes again.
    const log = this.sessions.log(sessionId, at.streamId, () => stop());
    const stop: Following = this.relay.follow<McpStreamEvent>(
      log,
      at.seq,
      (e) => {
        head();
        return res.write(
          `event: message\nid: ${at.streamId}.${e.seq}\ndata: ${JSON.stringify(e.message)}\n\n`,
        );
      },
      () => {
        stopBeat();
        offNotifier?.();
        if (!res.headersSent) rpcError(res, 500, -32000, 'Error replaying events');
        else res.end();
      },
      (resume) => res.once('drain', resume),
    );
    res.on('close', stop);
    await stop.subscribed;
    if (res.writableEnded) return;
    // Subscribed: what is sent on the stream from now on reaches this client.
    head();
    res.flushHeaders();
    if (at.streamId === STANDALONE_STREAM) {
      const off = await this.notifier.listen(ownerId, (n) =>
        this.sessions.storeStandalone(sessionId, { jsonrpc: '2.0', ...n }),
      );
      if (res.writableEnded) off();
      else offNotifier = off;
    }
  }
}
