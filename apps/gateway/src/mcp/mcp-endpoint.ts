import { Injectable } from '@nestjs/common';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Response } from 'express';
import type { GatewayRequest } from '../http/endpoint';
import { McpAccessService } from './mcp-access';
import { McpNotifier } from './mcp-notifier';
import { McpResumedStreams, rpcError } from './mcp-resume';
import { McpServerFactory } from './mcp-server';
import { McpSessions } from './mcp-sessions';

/**
 * `/mcp`: sessions without sticky routing. An initialize makes a session in Redis and answers its
 * id; every later request, on any replica, finds the session there (it must be the caller's
 * owner's), builds a server for that one request and hands the request to the SDK's transport in
 * its per-request (stateless) form, with the session's Redis event store. A GET with Last-Event-ID
 * resumes a stream here instead (McpResumedStreams), live on whatever replica it reaches. The
 * token is checked on every request by the AuthGuard, like any route.
 */
@Injectable()
export class McpEndpoint {
  constructor(
    private readonly access: McpAccessService,
    private readonly sessions: McpSessions,
    private readonly servers: McpServerFactory,
    private readonly notifier: McpNotifier,
    private readonly resumed: McpResumedStreams,
  ) {}

  async handle(req: GatewayRequest, res: Response): Promise<void> {
    const caller = req.principal;
    if (!caller) throw new Error('the MCP endpoint needs an authenticated caller');
    const access = await this.access.enabledFor(caller);
    let sessionId: string;
    const given = req.headers['mcp-session-id'];
    // The method first: the full schema check is for the one request that may be an initialize.
    const method = (req.body as { method?: unknown } | undefined)?.method;
    if (req.method === 'POST' && method === 'initialize' && isInitializeRequest(req.body)) {
      sessionId = await this.sessions.create(caller.owner.id);
      res.setHeader('mcp-session-id', sessionId);
    } else if (typeof given !== 'string' || !given) {
      return rpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    } else if (!(await this.sessions.find(given, caller.owner.id))) {
      return rpcError(res, 404, -32001, 'Session not found');
    } else {
      sessionId = given;
    }
    if (req.method === 'DELETE') {
      await this.sessions.end(sessionId);
      res.status(200).end();
      return;
    }
    const lastEventId = req.headers['last-event-id'];
    if (req.method === 'GET' && typeof lastEventId === 'string' && lastEventId)
      return this.resumed.resume(req, res, sessionId, caller.owner.id, lastEventId);
    const server = this.servers.build({ caller, access, sessionId, correlationId: req.correlationId });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      eventStore: this.sessions.eventStore(sessionId),
    });
    await server.connect(transport);
    if (req.method === 'GET') {
      const off = await this.notifier.listen(caller.owner.id, (n) => server.notification(n));
      res.on('close', () => {
        off();
        void server.close();
      });
    }
    // A POST's server is not closed when its client leaves: a tool call goes on, its messages are
    // stored for a Last-Event-ID resume, and nothing is held once the call has answered.
    await transport.handleRequest(req, res, req.body);
  }
}
