-- CreateEnum
CREATE TYPE "McpToolType" AS ENUM ('BUILTIN', 'LOCAL', 'REMOTE');

-- CreateEnum
CREATE TYPE "McpToolStatus" AS ENUM ('ENABLED', 'DISABLED');

-- CreateEnum
CREATE TYPE "ToolEffect" AS ENUM ('read', 'write', 'external');

-- CreateTable
CREATE TABLE "mcp_tool" (
    "id" SERIAL NOT NULL,
    "name" VARCHAR(200) NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "type" "McpToolType" NOT NULL,
    "status" "McpToolStatus" NOT NULL DEFAULT 'ENABLED',
    "config_enc" TEXT,
    "effect" "ToolEffect",
    "idempotent" BOOLEAN,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "mcp_tool_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "mcp_tool_name_key" ON "mcp_tool"("name");

-- CreateIndex
CREATE INDEX "mcp_tool_type_status_idx" ON "mcp_tool"("type", "status");

