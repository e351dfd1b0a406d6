-- Agents: plugins whose tools join the agent's tool set, next to its tool records.

-- AlterTable
ALTER TABLE "agent" ADD COLUMN "plugin_ids" TEXT[] DEFAULT ARRAY[]::TEXT[];
