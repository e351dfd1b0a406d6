export * from './registry-tools';
export * from './chat-model';
