-- CreateEnum
CREATE TYPE "RunStatus" AS ENUM ('planning', 'awaiting_plan_approval', 'running', 'awaiting_step_approval', 'completed', 'failed', 'cancelled', 'interrupted');

-- CreateTable
CREATE TABLE "run" (
    "id" UUID NOT NULL,
    "owner_id" UUID NOT NULL,
    "status" "RunStatus" NOT NULL DEFAULT 'planning',
    "goal" TEXT NOT NULL DEFAULT '',
    "config" JSONB NOT NULL DEFAULT '{}',
    "plan" JSONB,
    "summary" TEXT,
    "error" TEXT,
    "next_seq" INTEGER NOT NULL DEFAULT 1,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "run_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "run_event" (
    "run_id" UUID NOT NULL,
    "seq" INTEGER NOT NULL,
    "type" VARCHAR(64) NOT NULL,
    "data" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "run_event_pkey" PRIMARY KEY ("run_id","seq")
);

-- CreateIndex
CREATE INDEX "run_owner_id_created_at_idx" ON "run"("owner_id", "created_at" DESC);

-- AddForeignKey
ALTER TABLE "run" ADD CONSTRAINT "run_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "owner"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "run_event" ADD CONSTRAINT "run_event_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

