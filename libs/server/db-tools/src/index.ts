// The tool registry's tables (tool records, agents, plugins) and its client for agents' own SQL databases.
export * from './mcp-tool.repository';
export * from './agent.repository';
export * from './agent-sql';
export * from './plugin.repository';
export * from './market-source.repository';
export * from './files.repository';
export * from './mcp-oauth.repository';
