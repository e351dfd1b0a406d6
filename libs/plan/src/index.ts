export * from './references';
export * from './resolve';
export * from './validate';
