-- AlterTable
ALTER TABLE "mcp_tool" ADD COLUMN     "changed" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "tested_tools_hash" CHAR(64);

