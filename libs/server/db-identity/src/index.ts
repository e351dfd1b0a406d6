// The gateway's tables: owners, API tokens and idempotency keys.
export * from './identity.repository';
export * from './idempotency.repository';
