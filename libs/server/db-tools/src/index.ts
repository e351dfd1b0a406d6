// The tool registry's tables (tool records, agents) and its client for agents' own SQL databases.
export * from './mcp-tool.repository';
export * from './agent.repository';
export * from './agent-sql';
export * from './files.repository';
