export * from './redis';
export * from './fair-queue';
export * from './names';
