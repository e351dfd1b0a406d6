-- Plugins: installed bundles, their admin grants, encrypted settings and hook trust.

-- CreateTable
CREATE TABLE "plugin" (
    "id" VARCHAR(64) NOT NULL,
    "version" VARCHAR(100) NOT NULL,
    "name" VARCHAR(200) NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "manifest" JSONB NOT NULL,
    "install_dir" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT false,
    "network_granted" BOOLEAN NOT NULL DEFAULT false,
    "files_granted" BOOLEAN NOT NULL DEFAULT false,
    "settings_enc" TEXT,
    "hooks_trusted" BOOLEAN NOT NULL DEFAULT false,
    "hooks_trusted_at" TIMESTAMPTZ(3),
    "installed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "plugin_pkey" PRIMARY KEY ("id")
);
