// Prisma CLI configuration. `engine: 'js'` keeps generate/diff on the WASM engine: the Rust
// schema-engine binary cannot be downloaded on our build machines.
import { defineConfig } from 'prisma/config';
import { PrismaPg } from '@prisma/adapter-pg';

export default defineConfig({
  schema: 'libs/server/db/prisma/schema.prisma',
  migrations: { path: 'libs/server/db/prisma/migrations' },
  engine: 'js',
  experimental: { adapter: true },
  adapter: async () =>
    new PrismaPg({
      connectionString: process.env['DATABASE_URL'] ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
    }),
});
