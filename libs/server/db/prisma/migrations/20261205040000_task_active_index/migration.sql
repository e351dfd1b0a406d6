-- Background tasks are looked up by state only while queued or running (the rebuild of the queues
-- after Redis lost its data, the reconciliation every 5 s): finished tasks, nearly all of the table,
-- no longer enter an index of states (two index entries fewer for every task that ends).
DROP INDEX IF EXISTS "bg_task_state_idx";
CREATE INDEX "bg_task_active_idx" ON "bg_task"("created_at", "id") WHERE "state" IN ('queued', 'running');

-- Runs: an append that changes no indexed column (most of them: a step's events bump next_seq and
-- updated_at) can be a heap-only update, with no new index entries, when its page has room.
ALTER TABLE "run" SET (fillfactor = 80);
