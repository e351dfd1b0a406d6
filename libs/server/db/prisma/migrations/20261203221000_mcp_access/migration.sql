-- MCP access per owner (the /mcp endpoint): on or off, the permission mode of the runs MCP clients
-- start, and which published workflows they see. No row: the defaults.

-- CreateTable
CREATE TABLE "mcp_access" (
    "owner_id" UUID NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "permission_mode" VARCHAR(20) NOT NULL DEFAULT 'ask',
    "expose_all" BOOLEAN NOT NULL DEFAULT true,
    "exposed_workflows" UUID[] DEFAULT ARRAY[]::UUID[],
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mcp_access_pkey" PRIMARY KEY ("owner_id")
);

-- AddForeignKey
ALTER TABLE "mcp_access" ADD CONSTRAINT "mcp_access_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "owner"("id") ON DELETE CASCADE ON UPDATE CASCADE;
