import { z } from 'zod';
import { pageOf, PageQuery } from './identity';

/**
 * Memory (experimental, off by default): durable facts an owner asked the agent to remember, kept by
 * the planner, found again by keyword overlap weighted by recency, and injected into planning.
 */

/** A fact is a sentence or a short paragraph, not a document. */
export const MEMORY_TEXT_MAX = 2_000;
/** Per owner: beyond this, `remember` is refused until something is forgotten. */
export const MEMORY_PER_OWNER_MAX = 1_000;
/** A fact's weight halves every this many days. */
export const MEMORY_HALF_LIFE_DAYS = 7;
/** At most this many memories go into a planning prompt. */
export const MEMORY_INJECT_MAX = 5;

export const MemoryText = z
  .string()
  .trim()
  .min(1, 'a memory needs some text')
  .max(MEMORY_TEXT_MAX, `a memory is at most ${MEMORY_TEXT_MAX} characters`);

export const Memory = z.object({
  id: z.string().uuid(),
  text: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable().describe('when it was last injected into a plan or found by a search'),
});
export type Memory = z.infer<typeof Memory>;

export const ScoredMemory = Memory.extend({
  score: z.number().describe('keyword overlap × 0.5^(age in days / 7)'),
});
export type ScoredMemory = z.infer<typeof ScoredMemory>;

/** A memory as a planning prompt carried it (and the run's `memory_injected` event records it). */
export const InjectedMemory = z.object({ id: z.string().uuid(), text: z.string(), score: z.number() });
export type InjectedMemory = z.infer<typeof InjectedMemory>;

export const MemorySettings = z.object({
  enabled: z.boolean().describe('memory tools are offered and memories are injected into planning'),
});
export type MemorySettings = z.infer<typeof MemorySettings>;

export const RememberBody = z.object({ text: MemoryText }).strict();
export type RememberBody = z.infer<typeof RememberBody>;

export const MemorySearchRequest = z
  .object({
    query: z.string().max(20_000),
    limit: z.number().int().min(1).max(50).default(MEMORY_INJECT_MAX),
    /** Record the found memories as used (planning does; a person browsing does not). */
    touch: z.boolean().default(false),
  })
  .strict();
export type MemorySearchRequest = z.input<typeof MemorySearchRequest>;

export const MemorySearchResult = z.object({
  enabled: z.boolean().describe('false: memory is off for the owner and nothing was searched'),
  items: z.array(ScoredMemory).describe('score > 0 only, best first'),
});
export type MemorySearchResult = z.infer<typeof MemorySearchResult>;

export const MemoryListQuery = PageQuery.extend({
  q: z.string().max(200).optional().describe('text the memory contains'),
});
export type MemoryListQuery = z.infer<typeof MemoryListQuery>;

export const MemoryPage = pageOf(Memory).extend({ total: z.number().int() });
export type MemoryPage = z.infer<typeof MemoryPage>;

export const MemoryIdParam = z.object({ id: z.string().uuid() });
export type MemoryIdParam = z.infer<typeof MemoryIdParam>;

/** An owner turned memory on or off: every registry replica drops its cached setting. */
export const MEMORY_SETTING_CHANGED_SUBJECT = 'events.planner.memory.setting.changed';
export const MemorySettingChanged = z.object({ ownerId: z.string().uuid(), enabled: z.boolean() });
export type MemorySettingChanged = z.infer<typeof MemorySettingChanged>;

/** The built-in tools that exist only while the caller's memory is on. */
export const MEMORY_TOOL_NAMES = [
  'memory_remember',
  'memory_search',
  'memory_list',
  'memory_forget',
] as const;
const memoryTools: ReadonlySet<string> = new Set(MEMORY_TOOL_NAMES);
export function isMemoryTool(name: string): boolean {
  return memoryTools.has(name);
}

/**
 * The owner's memories as a prompt section (planning puts it after the goal, chat in the system
 * prompt): one wording wherever memory is injected.
 */
export function memoryPrompt(memories: readonly { readonly text: string }[]): string {
  return (
    'Things the user asked you to remember (from earlier; use them where they bear on the request):\n' +
    memories.map((m) => `- ${m.text.trim().replace(/\s+/g, ' ')}`).join('\n')
  );
}
