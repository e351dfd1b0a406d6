import {
  AIMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  type BaseMessage,
} from '@langchain/core/messages';
import type { ChatMessage, ChatToolCall, ToolDescriptor, ToolResult } from '@switchyard/contracts';

/** What providers accept as a function name (OpenAI's rule, the strictest of those we speak to). */
const MODEL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The name a tool is offered to the model under: the catalog name when the model can take it. */
export function modelToolName(name: string): string {
  if (MODEL_NAME.test(name)) return name;
  const safe = name.replace(/[^A-Za-z0-9_-]/g, '_');
  if (safe.length <= 64) return safe;
  // Long names keep their start and a short hash of the whole, so two never collide by truncation.
  let h = 0;
  for (const c of name) h = (Math.imul(h, 31) + c.charCodeAt(0)) | 0;
  return `${safe.slice(0, 55)}_${(h >>> 0).toString(36)}`;
}

/** The tools of a turn, by the name the model calls them. */
export class TurnTools {
  private readonly byModelName = new Map<string, ToolDescriptor>();

  constructor(readonly tools: readonly ToolDescriptor[]) {
    for (const t of tools) {
      const name = modelToolName(t.name);
      if (!this.byModelName.has(name)) this.byModelName.set(name, t);
    }
  }

  /** The descriptor the model means by `name` (its own spelling, or the catalog's). */
  resolve(name: string): ToolDescriptor | undefined {
    return this.byModelName.get(name) ?? this.tools.find((t) => t.name === name);
  }

  /** OpenAI-format function definitions with their JSON Schemas: every provider's bindTools takes them. */
  definitions(): Array<{
    type: 'function';
    function: { name: string; description: string; parameters: Record<string, unknown> };
  }> {
    return [...this.byModelName].map(([name, t]) => ({
      type: 'function',
      function: {
        name,
        description: t.description.slice(0, 1_024),
        parameters: { type: 'object', ...t.inputSchema },
      },
    }));
  }
}

/** A tool's result as the model reads it: its text blocks, JSON blocks as JSON, cut at `limit`. */
export function resultForModel(result: ToolResult, limit: number): string {
  const text = result.content.map((c) => (c.type === 'text' ? c.text : JSON.stringify(c.json))).join('\n');
  return text.length > limit ? `${text.slice(0, limit)}… (cut at ${limit} characters)` : text;
}

/**
 * The conversation for the model. An assistant message is followed by an answer to each of its
 * calls (the providers insist): one a turn never answered (it ended first) is answered "not run".
 */
export function conversation(
  system: string,
  messages: readonly ChatMessage[],
  calls: ReadonlyMap<string, ChatToolCall>,
): BaseMessage[] {
  const answers = new Map(messages.filter((m) => m.role === 'tool').map((m) => [m.callId, m.content]));
  const out: BaseMessage[] = [new SystemMessage(system)];
  for (const m of messages) {
    if (m.role === 'user') out.push(new HumanMessage(m.content));
    if (m.role !== 'assistant') continue;
    const ids = m.callIds ?? [];
    out.push(
      new AIMessage({
        content: m.content,
        tool_calls: ids.map((id) => {
          const c = calls.get(id);
          return {
            id,
            name: modelToolName(c?.tool ?? 'unknown'),
            args: c?.arguments ?? {},
            type: 'tool_call' as const,
          };
        }),
      }),
    );
    for (const id of ids)
      out.push(
        new ToolMessage({
          tool_call_id: id,
          content:
            answers.get(id) ?? `not run: the turn ended (${calls.get(id)?.status ?? 'cancelled'}) first`,
        }),
      );
  }
  return out;
}

/** The text of a model message's content (a string, or a provider's list of blocks). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b) =>
      typeof b === 'string'
        ? b
        : b && typeof b === 'object' && 'text' in b && typeof b.text === 'string'
          ? b.text
          : '',
    )
    .join('');
}

export const DEFAULT_SYSTEM_PROMPT =
  "You are Switchyard's assistant. Answer the person plainly. You may call the tools offered to you: " +
  'published workflows are tools named run_workflow_<id>, and long work can be submitted as a background ' +
  'task with task_submit_workflow and followed with task_wait. A call may be refused by the permission ' +
  'gate or by the person: read the reason and change your approach instead of repeating the same call.';
