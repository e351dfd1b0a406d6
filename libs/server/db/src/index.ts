// The shared core of persistence: Prisma and pg clients, migrations, secrets, storable text and scratch
// databases. Repositories live with the service that owns their tables (libs/server/db-<owner>).
export * from './prisma';
export * from './pg-pool-providers';
export * from './tokens';
export * from './migrate';
export * from './scratch-database';
export * from './secret-box';
export * from './storable';
export * from './paging';
export * from './unavailable';
