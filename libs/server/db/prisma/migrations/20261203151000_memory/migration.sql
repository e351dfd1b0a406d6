-- Memory (experimental): facts an owner asked the agent to remember, and whether memory is on.
-- "keywords" holds the fact's normalised tokens (see libs/server/db-memory/src/ranking.ts), so a
-- search reads candidates by array overlap through the GIN index instead of tokenising every row.

-- CreateTable
CREATE TABLE "memory" (
    "id" UUID NOT NULL,
    "owner_id" UUID NOT NULL,
    "text" VARCHAR(2000) NOT NULL,
    "keywords" TEXT[] NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),

    CONSTRAINT "memory_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "memory_setting" (
    "owner_id" UUID NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT false,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "memory_setting_pkey" PRIMARY KEY ("owner_id")
);

-- CreateIndex
CREATE INDEX "memory_owner_id_created_at_id_idx" ON "memory"("owner_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "memory_keywords_idx" ON "memory" USING GIN ("keywords");

-- AddForeignKey
ALTER TABLE "memory" ADD CONSTRAINT "memory_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "owner"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "memory_setting" ADD CONSTRAINT "memory_setting_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "owner"("id") ON DELETE CASCADE ON UPDATE CASCADE;
