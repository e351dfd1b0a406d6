export * from './bus';
export * from './port';
export * from './nats-server';
export * from './wire';
export * from './contract-checks';
export * from './connection';
