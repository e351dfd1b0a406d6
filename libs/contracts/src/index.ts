export * from './errors';
export * from './services';
export * from './subjects';
export * from './identity';
export * from './http';
export * from './openapi';
export * from './rpc';
export * from './tools';
