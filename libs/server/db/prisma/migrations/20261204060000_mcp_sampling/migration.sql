-- Sampling from a record's MCP server (sampling/createMessage): off unless an admin turns it on.
ALTER TABLE "mcp_tool" ADD COLUMN "sampling" JSONB;
