-- CreateEnum
CREATE TYPE "TaskPriority" AS ENUM ('interactive', 'normal', 'batch');

-- CreateEnum
CREATE TYPE "TaskState" AS ENUM ('queued', 'running', 'completed', 'failed', 'cancelled', 'interrupted');

-- CreateTable
CREATE TABLE "bg_task" (
    "id" UUID NOT NULL,
    "owner_id" UUID NOT NULL,
    "workflow_id" UUID NOT NULL,
    "inputs" JSONB NOT NULL DEFAULT '{}',
    "priority" "TaskPriority" NOT NULL,
    "permission_mode" VARCHAR(20) NOT NULL DEFAULT 'ask',
    "state" "TaskState" NOT NULL DEFAULT 'queued',
    "run_id" UUID,
    "output" JSONB,
    "output_truncated" BOOLEAN NOT NULL DEFAULT false,
    "error" TEXT,
    "kill_requested" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "bg_task_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "bg_task_owner_id_created_at_idx" ON "bg_task"("owner_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "bg_task_state_idx" ON "bg_task"("state");
