import { Module } from '@nestjs/common';
import type { AppConfig } from '@switchyard/server-config';
import { SecretBox } from '@switchyard/server-db';
import {
  AgentRepository,
  FilesRepository,
  MarketSourceRepository,
  McpOAuthRepository,
  McpToolRepository,
  PluginRepository,
} from '@switchyard/server-db-tools';
import { FilesHandler } from './files/files.handler';
import { FilesService } from './files/files.service';
import { MarketHandler } from './market/market.handler';
import { MarketService } from './market/market.service';
import { AgentsHandler } from './agents/agents.handler';
import { AgentsUseCases } from './agents/agents.usecases';
import { ToolSetService } from './agents/tool-set.service';
import { APP_CONFIG } from '@switchyard/server-runtime';
import { AddressPolicy } from '@switchyard/server-runtime';
import { McpClientPool } from './mcp/mcp-client.pool';
import { McpSampler } from './mcp/mcp-sampling';
import { OAuthGrants } from './mcp/oauth-grants';
import { McpToolsService } from './mcp/mcp-tools.service';
import { InputRelays } from './mcp/input-relay';
import { RecordCache } from './mcp/record-cache';
import { CLOCK, RecordHealth, systemClock } from './mcp/record-health';
import { RecordsHandler } from './records/records.handler';
import { RecordsUseCases } from './records/records.usecases';
import { RecordOAuthUseCases } from './records/record-oauth.usecases';
import { DiscoveryModule } from '@nestjs/core';
import { ExecuteCommandTool } from './builtin/command.tool';
import {
  DeleteFileTool,
  EditFileTool,
  ListDirectoryTool,
  ReadFileTool,
  WriteFileTool,
} from './builtin/file.tools';
import { WaitTool } from './builtin/wait.tool';
import { SQL_TOOLS } from './builtin/sql/sql.tools';
import { WEB_TOOLS } from './builtin/web/web-fetch.tool';
import { TASK_TOOLS } from './builtin/tasks/task.tools';
import { MEMORY_TOOLS } from './builtin/memory/memory.tools';
import { WorkspaceGuard } from './builtin/workspace.guard';
import { CommandSandbox } from './builtin/command-sandbox';
import { BuiltinRegistry } from './tools/builtin-registry';
import { InvokeToolUseCase } from './tools/invoke-tool.usecase';
import { MemoryGate } from './tools/memory-gate';
import { WorkflowTools } from './tools/workflow-tools';
import { ToolsHandler } from './tools/tools.handler';
import { PluginCache } from './plugins/plugin-cache';
import { PluginSandbox } from './plugins/plugin-sandbox';
import { PluginServers } from './plugins/plugin-servers';
import { PluginToolsService } from './plugins/plugin-tools.service';
import { PluginsHandler } from './plugins/plugins.handler';
import { PluginsUseCases } from './plugins/plugins.usecases';

/** Built-in tools live here as providers; the registry discovers them by their @BuiltinTool spec. */
export const BUILTIN_TOOLS = [
  ReadFileTool,
  ListDirectoryTool,
  WriteFileTool,
  EditFileTool,
  DeleteFileTool,
  ExecuteCommandTool,
  WaitTool,
  ...SQL_TOOLS,
  ...WEB_TOOLS,
  ...TASK_TOOLS,
  ...MEMORY_TOOLS,
];

@Module({
  imports: [DiscoveryModule],
  controllers: [ToolsHandler, RecordsHandler, AgentsHandler, PluginsHandler, MarketHandler, FilesHandler],
  providers: [
    McpToolRepository,
    AgentRepository,
    MarketSourceRepository,
    MarketService,
    FilesRepository,
    FilesService,
    ToolSetService,
    AgentsUseCases,
    {
      provide: SecretBox,
      useFactory: (c: AppConfig) => new SecretBox(c.tools.configKey),
      inject: [APP_CONFIG],
    },
    {
      provide: AddressPolicy,
      useFactory: (c: AppConfig) => new AddressPolicy(c.tools.webFetch),
      inject: [APP_CONFIG],
    },
    { provide: CLOCK, useValue: systemClock },
    RecordHealth,
    McpOAuthRepository,
    OAuthGrants,
    McpSampler,
    McpClientPool,
    RecordCache,
    McpToolsService,
    InputRelays,
    WorkspaceGuard,
    CommandSandbox,
    BuiltinRegistry,
    InvokeToolUseCase,
    WorkflowTools,
    MemoryGate,
    RecordsUseCases,
    RecordOAuthUseCases,
    PluginRepository,
    PluginSandbox,
    PluginServers,
    PluginCache,
    PluginToolsService,
    PluginsUseCases,
    ...BUILTIN_TOOLS,
  ],
})
export class ToolRegistryModule {}
