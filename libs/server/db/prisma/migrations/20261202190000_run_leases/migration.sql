-- AlterTable
ALTER TABLE "run" ADD COLUMN     "batch_id" UUID,
ADD COLUMN     "files" JSONB NOT NULL DEFAULT '[]',
ADD COLUMN     "inputs" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "lease_until" TIMESTAMPTZ(3),
ADD COLUMN     "owner_replica" TEXT,
ADD COLUMN     "source_run_id" UUID;

-- CreateIndex
CREATE INDEX "run_status_lease_until_idx" ON "run"("status", "lease_until");
