-- CreateTable
CREATE TABLE "permission_settings" (
    "scope" TEXT NOT NULL,
    "allow" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "ask" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "deny" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "permission_settings_pkey" PRIMARY KEY ("scope")
);

-- CreateTable
CREATE TABLE "hook" (
    "id" UUID NOT NULL,
    "owner_id" UUID,
    "name" VARCHAR(100) NOT NULL,
    "event" VARCHAR(40) NOT NULL,
    "matcher" TEXT NOT NULL DEFAULT '',
    "type" VARCHAR(10) NOT NULL,
    "command" TEXT,
    "url" TEXT,
    "timeout_seconds" INTEGER NOT NULL DEFAULT 30,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "fail_closed" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "hook_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "hook_owner_id_idx" ON "hook"("owner_id");

-- AddForeignKey
ALTER TABLE "hook" ADD CONSTRAINT "hook_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "owner"("id") ON DELETE CASCADE ON UPDATE CASCADE;
