-- Foreground limits: a task's run is admitted by the scheduler's fair queue and does not count
-- against the owner's and the deployment's foreground limits (runs started by people, chat turns).
ALTER TABLE "run" ADD COLUMN "background" BOOLEAN NOT NULL DEFAULT false;

-- What admission counts, under its advisory lock: active foreground runs and turns, per owner.
CREATE INDEX "run_active_foreground_idx" ON "run"("owner_id")
  WHERE NOT "background" AND "status" IN ('planning', 'awaiting_plan_approval', 'running', 'awaiting_step_approval');
CREATE INDEX "chat_session_active_idx" ON "chat_session"("owner_id")
  WHERE "status" IN ('running', 'awaiting_approval');
