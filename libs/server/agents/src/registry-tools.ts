import { createHash } from 'node:crypto';
import { DynamicStructuredTool } from '@langchain/core/tools';
import {
  AppError,
  isTransient,
  Rpc,
  type ToolDescriptor,
  type ToolResult,
  type ToolSet,
} from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import type { CallContext } from '@switchyard/server-observability';

/** Model providers accept function names of at most 64 characters from this set. */
const MODEL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A catalog name a model can call: kept when valid, otherwise cleaned and shortened with a hash. */
export function modelToolName(name: string): string {
  if (MODEL_NAME.test(name)) return name;
  const clean = name.replace(/[^A-Za-z0-9_-]/g, '_');
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return clean.length <= 64 ? clean : `${clean.slice(0, 55)}_${hash}`;
}

/** What a model sees of a tool result: text blocks as they are, other blocks as JSON. */
export function resultText(result: ToolResult): string {
  const text = result.content.map((c) => (c.type === 'text' ? c.text : JSON.stringify(c.json))).join('\n');
  const body = result.truncated ? `${text}\n[output truncated]` : text;
  return result.isError ? `ERROR: ${body}` : body;
}

/**
 * LangChain tools for a tool set: each validates its arguments against the tool's JSON Schema
 * (LangChain does, before calling) and runs through registry.tools.invoke with the caller's
 * identity, so the registry's guards, deadline and output cap apply exactly as for any other call.
 */
export function registryTools(
  bus: Bus,
  tools: ToolDescriptor[],
  ctx: CallContext,
  opts: { timeoutMs?: number } = {},
): DynamicStructuredTool[] {
  const used = new Set<string>();
  return tools.map((descriptor) => {
    let name = modelToolName(descriptor.name);
    for (let i = 2; used.has(name); i++) name = `${name.slice(0, 60)}_${i}`;
    used.add(name);
    return new DynamicStructuredTool({
      name,
      description: descriptor.description || descriptor.name,
      schema: descriptor.inputSchema as Record<string, unknown> & { type: 'object' },
      func: async (args: Record<string, unknown>) => {
        try {
          const result = await bus.call(
            Rpc.registry.invoke,
            {
              tool: descriptor.name,
              arguments: args,
              ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
            },
            { ctx, ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs + 2_000 } : {}) },
          );
          return resultText(result);
        } catch (err) {
          // A refusal (guard, bad arguments, changed server) is something the model can act on;
          // an outage or a bug is not, and stays an error for the caller.
          if (err instanceof AppError && !isTransient(err.code) && err.code !== 'internal')
            return `ERROR: ${err.message}`;
          throw err;
        }
      },
    });
  });
}

/** The LangChain tools of one of the caller's agents (its associated, usable records). */
export async function agentTools(
  bus: Bus,
  agentId: number,
  ctx: CallContext,
): Promise<{ set: ToolSet; tools: DynamicStructuredTool[] }> {
  const set = await bus.call(Rpc.registry.agentTools, { id: agentId }, { ctx });
  return { set, tools: registryTools(bus, set.tools, ctx) };
}
