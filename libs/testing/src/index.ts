export * from './database';
export * from './config';
export * from './wait';
export * from './stack';
export * from './http';
export * from './fake-llm';
export * from './sse';
export * from './route-corpus';
