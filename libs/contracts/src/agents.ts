import { z } from 'zod';
import { PluginId } from './plugins';
import { ToolDescriptor } from './tools';
import { NumberedPageQuery, numberedPageOf } from './identity';

export const ModelSettings = z
  .object({
    provider: z.enum(['openai', 'anthropic', 'ollama']).optional(),
    model: z.string().min(1).max(200).optional(),
    temperature: z.number().min(0).max(2).optional(),
    maxTokens: z.number().int().min(1).max(1_000_000).optional(),
  })
  .strict();
export type ModelSettings = z.infer<typeof ModelSettings>;

export const Agent = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  systemPrompt: z.string(),
  modelSettings: ModelSettings,
  mcpToolIds: z.array(z.number().int()).describe('associated tool record ids'),
  pluginIds: z.array(z.string()).describe('plugins whose tools the agent may use'),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Agent = z.infer<typeof Agent>;

const AgentFields = {
  name: z.string().trim().min(1).max(100),
  description: z.string().max(10_000),
  systemPrompt: z.string().max(100_000),
  modelSettings: ModelSettings,
  /** Null entries and duplicates are tolerated and dropped, as the seed's assembly does. */
  mcpToolIds: z.array(z.number().int().positive().nullable()).max(500),
  /** Duplicates are dropped; a plugin that is not installed is refused by name. */
  pluginIds: z.array(PluginId).max(100),
};

export const CreateAgentBody = z
  .object({
    name: AgentFields.name,
    description: AgentFields.description.default(''),
    systemPrompt: AgentFields.systemPrompt.default(''),
    modelSettings: AgentFields.modelSettings.default({}),
    mcpToolIds: AgentFields.mcpToolIds.default([]),
    pluginIds: AgentFields.pluginIds.default([]),
  })
  .strict();
export type CreateAgentBody = z.infer<typeof CreateAgentBody>;

export const UpdateAgentBody = z
  .object({
    name: AgentFields.name.optional(),
    description: AgentFields.description.optional(),
    systemPrompt: AgentFields.systemPrompt.optional(),
    modelSettings: AgentFields.modelSettings.optional(),
    mcpToolIds: AgentFields.mcpToolIds.optional(),
    pluginIds: AgentFields.pluginIds.optional(),
  })
  .strict();
export type UpdateAgentBody = z.infer<typeof UpdateAgentBody>;

export const AgentIdParam = z.object({ id: z.coerce.number().int().positive() });
export const AgentListQuery = NumberedPageQuery;
export const AgentPage = numberedPageOf(Agent);
export type AgentPage = z.infer<typeof AgentPage>;

/** The three ways to assemble a tool set (exactly one). Only enabled records count. */
export const ToolSetRequest = z.union([
  z
    .object({
      recordIds: z.array(z.number().int().nullable()).max(500),
      /** Enabled plugins among these contribute their tools too. */
      pluginIds: z.array(z.string()).max(100).optional(),
    })
    .strict(),
  z.object({ recordNames: z.array(z.string().max(200)).max(500) }).strict(),
  z.object({ allEnabled: z.literal(true) }).strict(),
]);
export type ToolSetRequest = z.infer<typeof ToolSetRequest>;

export const ToolSet = z.object({
  tools: z.array(ToolDescriptor),
  /** Record ids that contributed (enabled, and for MCP tested, unchanged and reachable). */
  recordIds: z.array(z.number().int()),
  /** Plugin ids that contributed (enabled, and their server answering). */
  pluginIds: z.array(z.string()).default([]),
});
export type ToolSet = z.infer<typeof ToolSet>;

export const AgentRpc = {
  Create: z.object({ body: CreateAgentBody }),
  Update: z.object({ id: z.number().int().positive(), body: UpdateAgentBody }),
  Id: z.object({ id: z.number().int().positive() }),
  Page: AgentListQuery,
};
