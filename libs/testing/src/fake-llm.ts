import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted answer of the fake model. */
export interface ScriptedReply {
  /** Assistant text; streamed in chunks of `chunkSize` characters when the client streams. */
  readonly content?: string;
  readonly toolCalls?: ReadonlyArray<{ readonly name: string; readonly arguments: Record<string, unknown> }>;
  readonly chunkSize?: number;
  /** Pause between streamed chunks (to observe streaming). */
  readonly chunkDelayMs?: number;
  /** Answer with this HTTP error instead (e.g. 429, 500). */
  readonly errorStatus?: number;
  /** Token usage to report; by default about four characters a token of the prompt and the answer. */
  readonly usage?: { readonly promptTokens: number; readonly completionTokens: number };
}

/** A reply computed from the request when it arrives (a tool call that uses an earlier result). */
export type ReplyScript = ScriptedReply | ((request: RecordedRequest) => ScriptedReply);

export interface RecordedRequest {
  readonly model: string;
  readonly stream: boolean;
  readonly messages: Array<{ role: string; content: unknown }>;
  readonly tools: unknown[] | undefined;
  /** The answer's cap the client sent (`max_tokens` or `max_completion_tokens`). */
  readonly maxTokens: number | undefined;
  readonly temperature: number | undefined;
  readonly stop: string[] | undefined;
}

/** The text of the newest tool message of a request (what the last tool call answered). */
export function lastToolResult(request: RecordedRequest): string {
  const tool = [...request.messages].reverse().find((m) => m.role === 'tool');
  return typeof tool?.content === 'string' ? tool.content : JSON.stringify(tool?.content ?? '');
}

/**
 * An OpenAI-compatible chat-completions server that replays scripted replies in order, streamed
 * (SSE chunks, as the real API sends them) or not, with tool calls. Tests point the real
 * `@langchain/openai` client at `baseUrl`: no hosted model is reachable from our machines.
 */
export class FakeLlmServer {
  readonly requests: RecordedRequest[] = [];
  /** performance.now() when each streamed answer's first piece of text was written (benchmarks). */
  readonly firstTextAt: number[] = [];
  private readonly queue: ReplyScript[] = [];
  private seq = 0;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<FakeLlmServer> {
    const server = createServer();
    const fake = new FakeLlmServer(server);
    server.on('request', (req, res) => void fake.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** The OpenAI base URL (ends in /v1). */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  enqueue(...replies: ReplyScript[]): void {
    this.queue.push(...replies);
  }

  get pending(): number {
    return this.queue.length;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET' && req.url === '/v1/models') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data: [{ id: 'fake', object: 'model' }] }));
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    const body = JSON.parse(raw) as {
      model: string;
      stream?: boolean;
      stream_options?: { include_usage?: boolean };
      messages: RecordedRequest['messages'];
      tools?: unknown[];
      max_tokens?: number;
      max_completion_tokens?: number;
      temperature?: number;
      stop?: string | string[];
    };
    const recorded: RecordedRequest = {
      model: body.model,
      stream: body.stream === true,
      messages: body.messages,
      tools: body.tools,
      maxTokens: body.max_tokens ?? body.max_completion_tokens,
      temperature: body.temperature,
      stop: typeof body.stop === 'string' ? [body.stop] : body.stop,
    };
    this.requests.push(recorded);
    const next = this.queue.shift();
    const reply = typeof next === 'function' ? next(recorded) : next;
    if (!reply || reply.errorStatus) {
      const status = reply?.errorStatus ?? 500;
      res.writeHead(status, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          error: {
            message: reply ? `scripted error ${status}` : 'the fake model has no scripted reply left',
            type: 'fake',
          },
        }),
      );
      return;
    }
    const id = `chatcmpl-fake-${++this.seq}`;
    const created = Math.floor(Date.now() / 1000);
    const toolCalls = (reply.toolCalls ?? []).map((t, index) => ({
      index,
      id: `call_${this.seq}_${index}`,
      type: 'function' as const,
      function: { name: t.name, arguments: JSON.stringify(t.arguments) },
    }));
    const finish = toolCalls.length ? 'tool_calls' : 'stop';
    const estimate = (text: string) => Math.max(1, Math.ceil(text.length / 4));
    const promptTokens = reply.usage?.promptTokens ?? estimate(JSON.stringify(body.messages));
    const completionTokens =
      reply.usage?.completionTokens ??
      estimate((reply.content ?? '') + JSON.stringify(reply.toolCalls ?? []));
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    };
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created,
          model: body.model,
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: reply.content ?? null,
                ...(toolCalls.length ? { tool_calls: toolCalls.map(({ index: _i, ...t }) => t) } : {}),
              },
              finish_reason: finish,
            },
          ],
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    const send = (delta: Record<string, unknown>, finishReason: string | null) =>
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`,
      );
    send({ role: 'assistant', content: '' }, null);
    const text = reply.content ?? '';
    const size = Math.max(1, reply.chunkSize ?? 8);
    for (let i = 0; i < text.length; i += size) {
      if (i === 0) this.firstTextAt.push(performance.now());
      send({ content: text.slice(i, i + size) }, null);
      if (reply.chunkDelayMs) await new Promise((r) => setTimeout(r, reply.chunkDelayMs));
    }
    for (const call of toolCalls) send({ tool_calls: [call] }, null);
    send({}, finish);
    // As the API does when asked (LangChain asks by default): the usage in a last chunk without choices.
    if (body.stream_options?.include_usage)
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage })}\n\n`,
      );
    res.end('data: [DONE]\n\n');
  }
}
