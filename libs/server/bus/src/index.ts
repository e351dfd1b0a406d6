export * from './bus';
export * from './nats-server';
