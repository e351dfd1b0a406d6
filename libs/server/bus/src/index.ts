export * from './bus';
export * from './nats-server';
export * from './wire';
