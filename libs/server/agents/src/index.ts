export * from './chat-model';
