-- The agent that drove a run (no foreign key: agents belong to the tool registry, and runs outlive
-- them), and what the run has spent against its budget: tokens and working wall time as of its last
-- pause or end (tool calls are counted from the log, where each call has its step_start).

-- AlterTable
ALTER TABLE "run" ADD COLUMN     "agent_id" INTEGER,
ADD COLUMN     "usage" JSONB;
