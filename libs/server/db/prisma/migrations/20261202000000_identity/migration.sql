-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "Role" AS ENUM ('admin', 'user');

-- CreateTable
CREATE TABLE "owner" (
    "id" UUID NOT NULL,
    "name" VARCHAR(64) NOT NULL,
    "role" "Role" NOT NULL DEFAULT 'user',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "owner_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_token" (
    "id" UUID NOT NULL,
    "owner_id" UUID NOT NULL,
    "digest" CHAR(64) NOT NULL,
    "prefix" VARCHAR(16) NOT NULL,
    "label" VARCHAR(100),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_token_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "owner_name_key" ON "owner"("name");

-- CreateIndex
CREATE UNIQUE INDEX "api_token_digest_key" ON "api_token"("digest");

-- CreateIndex
CREATE INDEX "api_token_owner_id_created_at_id_idx" ON "api_token"("owner_id", "created_at" DESC, "id");

-- AddForeignKey
ALTER TABLE "api_token" ADD CONSTRAINT "api_token_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "owner"("id") ON DELETE CASCADE ON UPDATE CASCADE;

