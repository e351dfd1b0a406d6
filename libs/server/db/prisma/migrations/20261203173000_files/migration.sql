-- Files: owners' uploads (bytes under FILES_DIR) and the file grants of runs.

-- CreateTable
CREATE TABLE "stored_file" (
    "id" UUID NOT NULL,
    "owner_id" UUID NOT NULL,
    "name" VARCHAR(1024) NOT NULL,
    "content_type" VARCHAR(255) NOT NULL,
    "size" BIGINT NOT NULL,
    "sha256" CHAR(64) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stored_file_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "stored_file_owner_id_created_at_idx" ON "stored_file"("owner_id", "created_at" DESC);

-- AddForeignKey
ALTER TABLE "stored_file" ADD CONSTRAINT "stored_file_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "owner"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AlterTable
ALTER TABLE "run" ADD COLUMN "file_grants" JSONB NOT NULL DEFAULT '[]';
