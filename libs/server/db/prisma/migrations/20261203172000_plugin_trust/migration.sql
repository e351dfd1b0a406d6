-- Plugin trust, sandbox posture and the MCP market.
--
-- plugin.hooks_digest: SHA-256 of the hooks file an admin trusted; hooks whose file no longer has
-- this digest (an upgrade, a tampered bundle) do not run until trusted again.
-- sandbox_posture: how plugin servers ran when a run, schedule or webhook trigger was created
-- ('sandboxed' | 'unsandboxed'; NULL: not known, e.g. created before plugins existed).
-- market_source: where an admin's MCP market entries come from (a URL or a file under MARKET_DIR).

-- AlterTable
ALTER TABLE "plugin" ADD COLUMN "hooks_digest" CHAR(64);

-- AlterTable
ALTER TABLE "run" ADD COLUMN "sandbox_posture" VARCHAR(12);

-- AlterTable
ALTER TABLE "workflow_schedule" ADD COLUMN "sandbox_posture" VARCHAR(12);

-- AlterTable
ALTER TABLE "webhook_trigger" ADD COLUMN "sandbox_posture" VARCHAR(12);

-- CreateTable
CREATE TABLE "market_source" (
    "id" UUID NOT NULL,
    "name" VARCHAR(100) NOT NULL,
    "url" TEXT,
    "path" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "market_source_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "market_source_name_key" ON "market_source"("name");
