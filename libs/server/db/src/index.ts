export * from './prisma';
export * from './migrate';
export * from './identity.repository';
export * from './scratch-database';
export * from './secret-box';
export * from './mcp-tool.repository';
export * from './agent-sql';
export * from './agent.repository';
