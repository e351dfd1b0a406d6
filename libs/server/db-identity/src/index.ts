// The gateway's tables: owners, API tokens, idempotency keys and MCP access.
export * from './identity.repository';
export * from './idempotency.repository';
export * from './mcp-access.repository';
