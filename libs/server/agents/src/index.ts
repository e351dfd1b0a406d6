export * from './registry-tools';
