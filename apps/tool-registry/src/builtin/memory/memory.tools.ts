import { Inject } from '@nestjs/common';
import { z } from 'zod';
import {
  Memory,
  MemoryPage,
  MemoryText,
  MEMORY_INJECT_MAX,
  Rpc,
  ScoredMemory,
  type ToolResult,
} from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { BUS } from '@switchyard/server-runtime';
import { BuiltinTool, outputSchemaOf, type BuiltinToolHandler, type ToolRunContext } from '../builtin-tool';

function json(value: unknown): ToolResult {
  return { content: [{ type: 'json', json: value }], value, isError: false, truncated: false };
}

/**
 * The caller's memory (experimental), kept by the planner: every call carries the caller's identity,
 * so a tool only ever reaches its caller's own memories. Listed only while the caller's memory is on.
 */
abstract class MemoryTool {
  constructor(@Inject(BUS) protected readonly bus: Bus) {}
}

const RememberParams = z.object({ text: MemoryText.describe('the fact, in a sentence or two') }).strict();

@BuiltinTool({
  name: 'memory_remember',
  description:
    'Remember a durable fact about the user or their work for later sessions (a preference, a name, where something is). ' +
    'Only what the user asked to be remembered or clearly wants kept; at most 2,000 characters.',
  params: RememberParams,
  effect: 'write',
  idempotent: false,
  outputSchema: outputSchemaOf(Memory),
})
export class MemoryRememberTool extends MemoryTool implements BuiltinToolHandler<typeof RememberParams> {
  async run(args: z.infer<typeof RememberParams>, ctx: ToolRunContext): Promise<ToolResult> {
    return json(await this.bus.call(Rpc.memory.remember, args, { ctx: ctx.caller }));
  }
}

const SearchParams = z
  .object({
    query: z.string().min(1).max(2_000).describe('words the memories should share'),
    limit: z.number().int().min(1).max(50).default(MEMORY_INJECT_MAX),
  })
  .strict();

@BuiltinTool({
  name: 'memory_search',
  description:
    "Search the user's memories by keywords (Chinese too); the best first, recent ones weighted up (a fact's weight halves every 7 days).",
  params: SearchParams,
  effect: 'read',
  idempotent: true,
  outputSchema: outputSchemaOf(z.object({ items: z.array(ScoredMemory) })),
})
export class MemorySearchTool extends MemoryTool implements BuiltinToolHandler<typeof SearchParams> {
  async run(args: z.infer<typeof SearchParams>, ctx: ToolRunContext): Promise<ToolResult> {
    const found = await this.bus.call(
      Rpc.memory.search,
      { query: args.query, limit: args.limit, touch: true },
      { ctx: ctx.caller },
    );
    return json({ items: found.items });
  }
}

const ListParams = z
  .object({
    cursor: z.string().max(200).optional().describe('nextCursor of the previous page'),
  })
  .strict();

@BuiltinTool({
  name: 'memory_list',
  description: "The user's memories, newest first, 50 a page; pass nextCursor to get the next page.",
  params: ListParams,
  effect: 'read',
  idempotent: true,
  outputSchema: outputSchemaOf(MemoryPage),
})
export class MemoryListTool extends MemoryTool implements BuiltinToolHandler<typeof ListParams> {
  async run(args: z.infer<typeof ListParams>, ctx: ToolRunContext): Promise<ToolResult> {
    return json(
      await this.bus.call(
        Rpc.memory.list,
        { limit: 50, ...(args.cursor ? { cursor: args.cursor } : {}) },
        { ctx: ctx.caller },
      ),
    );
  }
}

const ForgetParams = z.object({ id: z.string().uuid().describe('the memory’s id') }).strict();

@BuiltinTool({
  name: 'memory_forget',
  description: 'Forget one of the user’s memories by its id (from memory_search or memory_list).',
  params: ForgetParams,
  effect: 'write',
  // A second call answers not_found.
  idempotent: false,
  outputSchema: outputSchemaOf(Memory),
})
export class MemoryForgetTool extends MemoryTool implements BuiltinToolHandler<typeof ForgetParams> {
  async run(args: z.infer<typeof ForgetParams>, ctx: ToolRunContext): Promise<ToolResult> {
    return json(await this.bus.call(Rpc.memory.forget, args, { ctx: ctx.caller }));
  }
}

export const MEMORY_TOOLS = [MemoryRememberTool, MemorySearchTool, MemoryListTool, MemoryForgetTool] as const;
