export * from './tokens';
export * from './health.service';
export * from './probes.controller';
export * from './public';
export * from './rpc';
export * from './service-kit.module';
export * from './bootstrap';
export * from './address-policy';
