-- Schedules, webhook triggers and their claims (scheduler), and idempotent starts (gateway).

-- CreateTable
CREATE TABLE "workflow_schedule" (
    "id" UUID NOT NULL,
    "owner_id" UUID NOT NULL,
    "workflow_id" UUID NOT NULL,
    "status" VARCHAR(20) NOT NULL DEFAULT 'active',
    "inputs" JSONB NOT NULL DEFAULT '{}',
    "permission_mode" VARCHAR(20) NOT NULL,
    "time_zone" VARCHAR(64) NOT NULL,
    "recurrence" JSONB NOT NULL,
    "anchor_at" TIMESTAMPTZ(3) NOT NULL,
    "next_fire_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3),
    "trigger_count" INTEGER NOT NULL DEFAULT 0,
    "missed_fires" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "last_fired_at" TIMESTAMPTZ(3),
    "last_task_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workflow_schedule_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "workflow_schedule_owner_id_idx" ON "workflow_schedule"("owner_id");

-- CreateIndex
CREATE INDEX "workflow_schedule_workflow_id_idx" ON "workflow_schedule"("workflow_id");

-- CreateIndex
CREATE INDEX "workflow_schedule_due_idx" ON "workflow_schedule"("next_fire_at") WHERE "status" = 'active';

-- CreateTable
CREATE TABLE "schedule_fire" (
    "id" UUID NOT NULL,
    "schedule_id" UUID NOT NULL,
    "occurrence_at" TIMESTAMPTZ(3) NOT NULL,
    "state" VARCHAR(20) NOT NULL DEFAULT 'claimed',
    "coalesced" INTEGER NOT NULL DEFAULT 0,
    "task_id" UUID,
    "error" TEXT,
    "claimed_at" TIMESTAMPTZ(3) NOT NULL,
    "settled_at" TIMESTAMPTZ(3),

    CONSTRAINT "schedule_fire_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "schedule_fire_schedule_id_occurrence_at_key" ON "schedule_fire"("schedule_id", "occurrence_at");

-- CreateIndex
CREATE INDEX "schedule_fire_claimed_idx" ON "schedule_fire"("claimed_at") WHERE "state" = 'claimed';

-- AddForeignKey
ALTER TABLE "schedule_fire" ADD CONSTRAINT "schedule_fire_schedule_id_fkey" FOREIGN KEY ("schedule_id") REFERENCES "workflow_schedule"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- CreateTable
CREATE TABLE "webhook_trigger" (
    "id" UUID NOT NULL,
    "owner_id" UUID NOT NULL,
    "workflow_id" UUID NOT NULL,
    "status" VARCHAR(20) NOT NULL DEFAULT 'active',
    "inputs" JSONB NOT NULL DEFAULT '{}',
    "permission_mode" VARCHAR(20) NOT NULL,
    "require_signature" BOOLEAN NOT NULL DEFAULT false,
    "secret_digest" CHAR(64) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "rotated_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_trigger_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "webhook_trigger_owner_id_idx" ON "webhook_trigger"("owner_id");

-- CreateIndex
CREATE INDEX "webhook_trigger_workflow_id_idx" ON "webhook_trigger"("workflow_id");

-- CreateTable
CREATE TABLE "webhook_delivery" (
    "id" UUID NOT NULL,
    "trigger_id" UUID NOT NULL,
    "state" VARCHAR(12) NOT NULL DEFAULT 'CLAIMED',
    "event_digest" CHAR(64),
    "idempotency_key" BOOLEAN NOT NULL DEFAULT false,
    "task_id" UUID,
    "error" TEXT,
    "accepted_at" TIMESTAMPTZ(3) NOT NULL,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_delivery_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "webhook_delivery_trigger_id_event_digest_key" ON "webhook_delivery"("trigger_id", "event_digest");

-- CreateIndex
CREATE INDEX "webhook_delivery_trigger_id_accepted_at_idx" ON "webhook_delivery"("trigger_id", "accepted_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "webhook_delivery_task_id_idx" ON "webhook_delivery"("task_id");

-- CreateIndex
CREATE INDEX "webhook_delivery_claimed_idx" ON "webhook_delivery"("accepted_at") WHERE "state" = 'CLAIMED';

-- AddForeignKey
ALTER TABLE "webhook_delivery" ADD CONSTRAINT "webhook_delivery_trigger_id_fkey" FOREIGN KEY ("trigger_id") REFERENCES "webhook_trigger"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- CreateTable
CREATE TABLE "idempotent_request" (
    "owner_id" UUID NOT NULL,
    "route" VARCHAR(100) NOT NULL,
    "key" VARCHAR(255) NOT NULL,
    "body_digest" CHAR(64) NOT NULL,
    "status" INTEGER,
    "response" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "idempotent_request_pkey" PRIMARY KEY ("owner_id","route","key")
);

-- CreateIndex
CREATE INDEX "idempotent_request_created_at_idx" ON "idempotent_request"("created_at");

-- Deleting a workflow cancels its schedules and disables its webhook triggers in the same
-- transaction, whichever service deletes it: a fire or delivery checks the status in its claim.
CREATE FUNCTION "workflow_deleted_stop_triggers"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "workflow_schedule" SET "status" = 'cancelled', "next_fire_at" = NULL, "updated_at" = now(),
         "last_error" = 'its workflow was deleted'
   WHERE "workflow_id" = OLD."id" AND "status" = 'active';
  UPDATE "webhook_trigger" SET "status" = 'disabled' WHERE "workflow_id" = OLD."id";
  RETURN OLD;
END $$;

CREATE TRIGGER "workflow_deleted_stop_triggers" AFTER DELETE ON "workflow"
  FOR EACH ROW EXECUTE FUNCTION "workflow_deleted_stop_triggers"();
