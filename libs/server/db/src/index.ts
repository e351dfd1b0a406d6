export * from './prisma';
export * from './migrate';
export * from './identity.repository';
