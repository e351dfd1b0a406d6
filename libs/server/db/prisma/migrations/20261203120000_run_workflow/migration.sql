-- The workflow a run was started from (by hand, as a tool, as a task or on a schedule), so a
-- workflow's newest run is one index lookup.

-- AlterTable
ALTER TABLE "run" ADD COLUMN     "workflow_id" UUID;

-- Runs started before this column existed name their workflow in their first event.
UPDATE "run" r SET "workflow_id" = (e."data"->>'workflowId')::uuid
FROM "run_event" e
WHERE e."run_id" = r."id" AND e."seq" = 1 AND e."type" = 'run_created'
  AND e."data"->>'workflowId' ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

-- CreateIndex
CREATE INDEX "run_owner_id_workflow_id_created_at_idx" ON "run"("owner_id", "workflow_id", "created_at" DESC);
