-- CreateTable
CREATE TABLE "agent" (
    "id" SERIAL NOT NULL,
    "owner_id" UUID NOT NULL,
    "name" VARCHAR(100) NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "system_prompt" TEXT NOT NULL DEFAULT '',
    "model_settings" JSONB NOT NULL DEFAULT '{}',
    "mcp_tool_ids" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "agent_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "agent_owner_id_id_idx" ON "agent"("owner_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "agent_owner_id_name_key" ON "agent"("owner_id", "name");

-- AddForeignKey
ALTER TABLE "agent" ADD CONSTRAINT "agent_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "owner"("id") ON DELETE CASCADE ON UPDATE CASCADE;

