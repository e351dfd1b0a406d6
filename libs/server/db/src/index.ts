export * from './prisma';
export * from './migrate';
export * from './identity.repository';
export * from './scratch-database';
