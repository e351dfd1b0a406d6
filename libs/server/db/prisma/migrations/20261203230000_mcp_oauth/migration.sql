-- OAuth sign-in of REMOTE tool records: one grant per record, and the Connects in progress.

-- CreateTable
CREATE TABLE "mcp_oauth_grant" (
    "record_id" INTEGER NOT NULL,
    "grant" VARCHAR(32) NOT NULL,
    "state" VARCHAR(16) NOT NULL DEFAULT 'not_connected',
    "reason" TEXT,
    "secrets_enc" TEXT,
    "connected_at" TIMESTAMPTZ(3),
    "connected_by" UUID,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "mcp_oauth_grant_pkey" PRIMARY KEY ("record_id")
);

-- CreateTable
CREATE TABLE "mcp_oauth_start" (
    "state_hash" CHAR(64) NOT NULL,
    "record_id" INTEGER NOT NULL,
    "owner_id" UUID NOT NULL,
    "verifier_enc" TEXT NOT NULL,
    "redirect_uri" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mcp_oauth_start_pkey" PRIMARY KEY ("state_hash")
);

-- CreateIndex
CREATE INDEX "mcp_oauth_start_expires_at_idx" ON "mcp_oauth_start"("expires_at");

-- AddForeignKey
ALTER TABLE "mcp_oauth_grant" ADD CONSTRAINT "mcp_oauth_grant_record_id_fkey" FOREIGN KEY ("record_id") REFERENCES "mcp_tool"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "mcp_oauth_start" ADD CONSTRAINT "mcp_oauth_start_record_id_fkey" FOREIGN KEY ("record_id") REFERENCES "mcp_tool"("id") ON DELETE CASCADE ON UPDATE CASCADE;
