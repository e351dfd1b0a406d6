import { join } from 'node:path';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { createLogger } from '@switchyard/server-observability';
import { AddressPolicy } from '@switchyard/server-runtime';
import { connectMcp, type InputRelay, type McpConnection } from './mcp-connection';
import { requestOf } from './input-relay';

const FIXTURE = join(
  __dirname,
  '..',
  '..',
  '..',
  '..',
  'libs',
  'testing',
  'fixtures',
  'elicit',
  'server.mjs',
);

/**
 * The client's side of elicitation against a real stdio server (the SDK's own `elicitInput`): the
 * capability is declared (the server refuses to ask otherwise), a request reaches the relay of the
 * one call in flight and its answer reaches the server; without a relay, or with several calls in
 * flight (it cannot be told which asked), it is declined.
 */
describe('MCP elicitation on a connection', () => {
  let conn: McpConnection;
  const logger = createLogger({ level: 'silent', service: 'tool-registry', instanceId: 't' });

  beforeAll(async () => {
    conn = await connectMcp(
      { type: 'LOCAL', config: { command: process.execPath, args: [FIXTURE] } },
      {
        logger,
        addresses: new AddressPolicy({ allowPrivate: false, privateHosts: [] }),
        timeoutMs: 20_000,
        label: 'elicit fixture',
      },
    );
  }, 30_000);

  afterAll(async () => {
    await conn?.close();
  });

  const call = (name: string, args: Record<string, unknown>, relay?: InputRelay) =>
    conn.callTool({ name, arguments: args }, { timeout: 20_000 }, relay);

  it('relays a form request of the one call in flight and gives the server the answer', async () => {
    const seen: Array<ElicitRequest['params']> = [];
    const relay: InputRelay = async (params) => {
      seen.push(params);
      return { action: 'accept', content: { name: 'Ada', email: 'ada@example.com', age: 36 } };
    };
    const result = await call('ask_profile', { reason: 'For the newsletter' }, relay);
    expect(result.structuredContent).toEqual({
      action: 'accept',
      content: { name: 'Ada', email: 'ada@example.com', age: 36 },
    });
    expect(seen).toHaveLength(1);
    const request = requestOf(seen[0] as ElicitRequest['params']);
    expect(request).toMatchObject({ mode: 'form', message: 'For the newsletter' });
    expect(request?.mode === 'form' && Object.keys(request.requestedSchema.properties)).toEqual([
      'name',
      'email',
      'age',
      'score',
      'color',
      'plan',
      'toppings',
      'subscribe',
      'birthday',
    ]);
  });

  it('relays a URL request (the client declares URL mode) and passes decline and cancel back', async () => {
    const seen: Array<ElicitRequest['params']> = [];
    const decline = await call('ask_link', {}, async (params): Promise<ElicitResult> => {
      seen.push(params);
      return { action: 'decline' };
    });
    expect(decline.structuredContent).toEqual({ action: 'decline' });
    expect(requestOf(seen[0] as ElicitRequest['params'])).toMatchObject({
      mode: 'url',
      url: 'https://provider.example/connect?session=fixture',
    });
    const cancel = await call('ask_link', {}, async () => ({ action: 'cancel' }));
    expect(cancel.structuredContent).toEqual({ action: 'cancel' });
  });

  it('declines a request during a call nobody can answer (no relay)', async () => {
    const result = await call('ask_profile', {});
    expect(result.structuredContent).toEqual({ action: 'decline' });
  });

  it('declines a request made while several calls are in flight: it cannot be told which one asked', async () => {
    const relayed: string[] = [];
    const relay: InputRelay = async () => {
      relayed.push('asked');
      return { action: 'accept', content: { name: 'Wrong person', email: 'x@example.com', age: 1 } };
    };
    // The hold call stays in flight until the test stops it.
    const stop = new AbortController();
    const holding = conn.callTool(
      { name: 'hold', arguments: { ms: 600_000 } },
      { timeout: 700_000, signal: stop.signal },
      relay,
    );
    holding.catch(() => undefined);
    const asked = await call('ask_profile', {}, relay);
    expect(asked.structuredContent).toEqual({ action: 'decline' });
    expect(relayed).toEqual([]);
    stop.abort('done');
    await expect(holding).rejects.toBeDefined();
    // With the other call gone, the next request is relayed again.
    const again = await call('ask_profile', {}, relay);
    expect(again.structuredContent).toMatchObject({ action: 'accept' });
    expect(relayed).toEqual(['asked']);
  });

  it("a call waiting for its person's answer does not keep another call's request from being relayed", async () => {
    let answerFirst: (r: ElicitResult) => void = () => undefined;
    let asked: () => void = () => undefined;
    const firstAsked = new Promise<void>((resolve) => (asked = resolve));
    const first = call('ask_profile', { reason: 'first' }, (params) => {
      expect(params.message).toBe('first');
      asked();
      return new Promise<ElicitResult>((resolve) => (answerFirst = resolve));
    });
    await firstAsked;
    // The first call waits for its person; the second call's server asks and is relayed to its own.
    const second = await call('ask_profile', { reason: 'second' }, async (params) => {
      expect(params.message).toBe('second');
      return { action: 'decline' };
    });
    expect(second.structuredContent).toEqual({ action: 'decline' });
    answerFirst({ action: 'cancel' });
    expect((await first).structuredContent).toEqual({ action: 'cancel' });
  });

  it('keeps URLs the platform cannot show out (only http and https are shown)', () => {
    expect(
      requestOf({ mode: 'url', message: 'x', url: 'javascript:alert(1)', elicitationId: 'e' }),
    ).toBeUndefined();
    expect(
      requestOf({ mode: 'url', message: 'x', url: 'file:///etc/passwd', elicitationId: 'e' }),
    ).toBeUndefined();
    expect(
      requestOf({ message: 'x'.repeat(20_000), requestedSchema: { type: 'object', properties: {} } }),
    ).toMatchObject({ mode: 'form', message: 'x'.repeat(10_000) });
  });
});
