-- MCP servers' input requests (elicitation) during tool calls of run steps and chat calls.
CREATE TABLE "input_request" (
    "id" UUID NOT NULL,
    "owner_id" UUID NOT NULL,
    "run_id" UUID,
    "step_id" TEXT,
    "session_id" UUID,
    "call_id" TEXT,
    "label" TEXT NOT NULL DEFAULT '',
    "invocation_id" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "server" TEXT NOT NULL,
    "mode" VARCHAR(8) NOT NULL,
    "message" TEXT NOT NULL,
    -- json, not jsonb (which sorts object keys): the form lists its fields in the server's order.
    "requested_schema" JSON,
    "url" TEXT,
    "status" VARCHAR(16) NOT NULL DEFAULT 'pending',
    "content" JSON,
    "reason" TEXT,
    "answered_by" VARCHAR(16),
    "answered_by_owner" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "answered_at" TIMESTAMPTZ(3),

    CONSTRAINT "input_request_pkey" PRIMARY KEY ("id")
);

-- The inbox: an owner's waiting requests, oldest first.
CREATE INDEX "input_request_pending_idx" ON "input_request"("owner_id", "created_at") WHERE "status" = 'pending';

CREATE INDEX "input_request_run_id_idx" ON "input_request"("run_id");

CREATE INDEX "input_request_session_id_idx" ON "input_request"("session_id");

ALTER TABLE "input_request" ADD CONSTRAINT "input_request_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "owner"("id") ON DELETE CASCADE ON UPDATE CASCADE;
