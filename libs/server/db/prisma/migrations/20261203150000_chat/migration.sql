-- AI chat: sessions, their messages and tool calls, and the turn events (gapless per session, like a run's).

-- CreateTable
CREATE TABLE "chat_session" (
    "id" UUID NOT NULL,
    "owner_id" UUID NOT NULL,
    "agent_id" INTEGER,
    "permission_mode" VARCHAR(32) NOT NULL DEFAULT 'ask',
    "title" TEXT NOT NULL DEFAULT '',
    "budget" JSONB,
    "status" VARCHAR(32) NOT NULL DEFAULT 'idle',
    "next_seq" INTEGER NOT NULL DEFAULT 1,
    "replica" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "chat_session_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "chat_message" (
    "id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "seq" INTEGER NOT NULL,
    "role" VARCHAR(16) NOT NULL,
    "content" TEXT NOT NULL DEFAULT '',
    "call_ids" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "call_id" TEXT,
    "usage" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "chat_message_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "chat_tool_call" (
    "session_id" UUID NOT NULL,
    "call_id" TEXT NOT NULL,
    "message_id" UUID NOT NULL,
    "tool" TEXT NOT NULL,
    "arguments" JSONB NOT NULL DEFAULT '{}',
    "edited_arguments" JSONB,
    "effect" VARCHAR(16),
    "status" VARCHAR(32) NOT NULL DEFAULT 'pending',
    "decision" JSONB,
    "result" JSONB,
    "error" JSONB,
    "duration_ms" DOUBLE PRECISION,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "chat_tool_call_pkey" PRIMARY KEY ("session_id","call_id")
);

-- CreateTable
CREATE TABLE "chat_event" (
    "session_id" UUID NOT NULL,
    "seq" INTEGER NOT NULL,
    "type" VARCHAR(64) NOT NULL,
    "data" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "chat_event_pkey" PRIMARY KEY ("session_id","seq")
);

-- CreateIndex
CREATE INDEX "chat_session_owner_id_created_at_idx" ON "chat_session"("owner_id", "created_at" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "chat_message_session_id_seq_key" ON "chat_message"("session_id", "seq");

-- AddForeignKey
ALTER TABLE "chat_session" ADD CONSTRAINT "chat_session_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "owner"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "chat_message" ADD CONSTRAINT "chat_message_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "chat_session"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "chat_tool_call" ADD CONSTRAINT "chat_tool_call_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "chat_session"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "chat_event" ADD CONSTRAINT "chat_event_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "chat_session"("id") ON DELETE CASCADE ON UPDATE CASCADE;
