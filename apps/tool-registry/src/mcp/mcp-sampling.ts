import { Inject, Injectable } from '@nestjs/common';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import {
  AIMessage,
  HumanMessage,
  SystemMessage,
  type BaseMessage,
  type MessageContent,
} from '@langchain/core/messages';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CreateMessageRequest, CreateMessageResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError, type McpSamplingSettings } from '@switchyard/contracts';
import { createChatModel, effectiveModel } from '@switchyard/server-agents';
import type { AppConfig } from '@switchyard/server-config';
import type { Redis } from '@switchyard/server-queue';
import { APP_CONFIG, REDIS } from '@switchyard/server-runtime';
import { CLOCK, type Clock } from './record-health';

type SamplingParams = CreateMessageRequest['params'];
type SamplingContent = SamplingParams['messages'][number]['content'];

/** What one answered request cost and gave, for the caller's record (a run event, the log). */
export interface SamplingOutcome {
  readonly result: CreateMessageResult;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly maxTokens: number;
  readonly durationMs: number;
}

// Atomic reserve against the day's budget: refuse when it would go over, else count it at once, so
// replicas sampling at the same moment cannot overspend together.
const RESERVE = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used + tonumber(ARGV[1]) > tonumber(ARGV[2]) then return { 0, used } end
used = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], 172800000)
return { 1, used }
`;

/** Four characters a token: what is reserved before the model says what a request really cost. */
const estimate = (text: string) => Math.ceil(text.length / 4);

function refuse(message: string): never {
  throw new McpError(ErrorCode.InvalidRequest, message);
}

/** One MCP content block as LangChain content: text and images; nothing else is sent to a model. */
function partsOf(content: SamplingContent): Array<Record<string, unknown>> {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks.map((b) => {
    switch (b.type) {
      case 'text':
        return { type: 'text', text: b.text };
      case 'image':
        return { type: 'image_url', image_url: { url: `data:${b.mimeType};base64,${b.data}` } };
      default:
        return refuse(`sampling content of type ${b.type} is not supported (text and images are)`);
    }
  });
}

/** The request's conversation for the model; a lone text block stays a plain string. */
export function messagesOf(params: SamplingParams): BaseMessage[] {
  if (params.tools?.length || params.toolChoice)
    refuse('sampling with tools is not supported: the client does not declare sampling.tools');
  if (!params.messages.length) refuse('a sampling request needs at least one message');
  const out: BaseMessage[] = params.systemPrompt ? [new SystemMessage(params.systemPrompt)] : [];
  for (const m of params.messages) {
    const parts = partsOf(m.content);
    const content = (
      parts.length === 1 && parts[0]?.type === 'text' ? (parts[0].text as string) : parts
    ) as MessageContent;
    out.push(m.role === 'assistant' ? new AIMessage({ content }) : new HumanMessage({ content }));
  }
  return out;
}

function textOf(content: MessageContent): string {
  if (typeof content === 'string') return content;
  return content
    .map((p) => (typeof p === 'string' ? p : p.type === 'text' && 'text' in p ? String(p.text) : ''))
    .join('');
}

/** The provider's finish reason in MCP's words (OpenAI-compatible, Anthropic, Ollama). */
export function stopReasonOf(metadata: Record<string, unknown> | undefined): string | undefined {
  const raw = metadata?.finish_reason ?? metadata?.stop_reason ?? metadata?.done_reason;
  if (typeof raw !== 'string') return undefined;
  if (raw === 'stop' || raw === 'end_turn') return 'endTurn';
  if (raw === 'length' || raw === 'max_tokens') return 'maxTokens';
  if (raw === 'stop_sequence') return 'stopSequence';
  return raw;
}

/**
 * Answers `sampling/createMessage` from servers of records that allow it, with the deployment's
 * configured model (the server's model preferences are hints the platform does not follow: the admin
 * chose the model). Each request is capped at the record's `maxTokens`; all of a record's requests
 * share its `dailyTokens` per UTC day in Redis, reserved before the call and settled after.
 */
@Injectable()
export class McpSampler {
  private readonly prefix: string;
  private readonly modelFor: (maxTokens: number, temperature: number | undefined) => BaseChatModel;
  readonly modelName: string | undefined;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.prefix = `sy:${config.nats.subjectPrefix}registry:sampling:`;
    this.modelFor = (maxTokens, temperature) =>
      createChatModel(config.llm, { maxTokens, ...(temperature !== undefined ? { temperature } : {}) });
    this.modelName = effectiveModel(config.llm).model;
  }

  private key(recordId: number): string {
    return `${this.prefix}${recordId}:${new Date(this.clock.now()).toISOString().slice(0, 10)}`;
  }

  /** Tokens the record's servers used today (UTC). */
  async usedToday(recordId: number): Promise<number> {
    return Number((await this.redis.get(this.key(recordId))) ?? 0);
  }

  async sample(
    record: { readonly id: number; readonly name: string; readonly sampling: McpSamplingSettings },
    params: SamplingParams,
    signal: AbortSignal,
  ): Promise<SamplingOutcome> {
    if (!record.sampling.enabled) refuse(`sampling is off for the tool record ${record.name}`);
    const messages = messagesOf(params);
    const maxTokens = Math.max(1, Math.min(params.maxTokens, record.sampling.maxTokens));
    let model: BaseChatModel;
    try {
      const t = params.temperature;
      model = this.modelFor(maxTokens, t === undefined ? undefined : Math.min(2, Math.max(0, t)));
    } catch (err) {
      // model_not_configured: the server is told how the deployment would need configuring.
      throw new McpError(ErrorCode.InternalError, (err as Error).message);
    }
    const prompt = estimate(messages.map((m) => textOf(m.content)).join('\n'));
    const reserved = prompt + maxTokens;
    const key = this.key(record.id);
    const [ok, used] = (await this.redis.eval(RESERVE, 1, key, reserved, record.sampling.dailyTokens)) as [
      number,
      number,
    ];
    if (!ok)
      refuse(
        `the sampling budget of the tool record ${record.name} is spent for today: ${used} of ${record.sampling.dailyTokens} tokens used, this request could need ${reserved}`,
      );
    const started = this.clock.now();
    let spent = reserved;
    try {
      const reply = await model.invoke(messages, {
        signal,
        ...(params.stopSequences?.length ? { stop: params.stopSequences } : {}),
      });
      const text = textOf(reply.content);
      const usage = (reply as AIMessage).usage_metadata;
      const inputTokens = usage?.input_tokens ?? prompt;
      const outputTokens = usage?.output_tokens ?? estimate(text);
      spent = inputTokens + outputTokens;
      const stopReason = stopReasonOf(reply.response_metadata);
      return {
        result: {
          role: 'assistant',
          content: { type: 'text', text },
          model: this.modelName ?? 'unknown',
          ...(stopReason ? { stopReason } : {}),
        },
        inputTokens,
        outputTokens,
        maxTokens,
        durationMs: this.clock.now() - started,
      };
    } catch (err) {
      spent = 0;
      if (err instanceof McpError) throw err;
      if (signal.aborted) throw new McpError(ErrorCode.RequestTimeout, 'the sampling request was cancelled');
      const message = err instanceof AppError ? err.message : (err as Error).message;
      throw new McpError(ErrorCode.InternalError, `the model failed: ${message}`);
    } finally {
      if (spent !== reserved) await this.redis.incrby(key, spent - reserved);
    }
  }
}
