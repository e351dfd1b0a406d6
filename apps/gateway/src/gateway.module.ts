import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import {
  IdempotencyRepository,
  IdentityRepository,
  McpAccessRepository,
} from '@switchyard/server-db-identity';
import {
  ChatEventsReader,
  RUN_EVENTS_POOL_PROVIDERS,
  RunEventsReader,
} from '@switchyard/server-db-run-events';
import { ChatController } from './chat/chat.controller';
import { AdminBootstrap } from './auth/admin-bootstrap';
import { AuthGuard } from './auth/auth.guard';
import { TokenVerifier } from './auth/token-verifier';
import { RunsController } from './runs/runs.controller';
import { ElicitationController } from './elicitation/elicitation.controller';
import { SettingsController } from './settings/settings.controller';
import { MemoryController } from './settings/memory.controller';
import { FilesController } from './files/files.controller';
import { WorkflowsController } from './workflows/workflows.controller';
import { TasksController } from './tasks/tasks.controller';
import { SchedulesController } from './triggers/schedules.controller';
import { WebhooksController } from './triggers/webhooks.controller';
import { OwnerFeed } from './runs/owner-feed';
import { RunFeed } from './runs/run-feed';
import { StreamFastPath } from './runs/stream-fast-path';
import { JsonFastPath } from './http/json-fast-path';
import { StreamRelay } from './runs/stream-relay';
import { DocsController } from './docs/docs.controller';
import { HealthController } from './health/health.controller';
import { ProblemFilter } from './http/problem.filter';
import { ValidationInterceptor } from './http/validation.interceptor';
import { IdempotencyInterceptor } from './http/idempotency.interceptor';
import { IdentityController } from './identity/identity.controller';
import { TokenUseCases } from './identity/tokens.usecases';
import { AgentsController } from './tools/agents.controller';
import { StreamController } from './runs/stream.controller';
import { RecordsController } from './tools/records.controller';
import { ToolsController } from './tools/tools.controller';
import { PluginsController } from './tools/plugins.controller';
import { MarketController } from './plugins/market.controller';
import { PluginHooksController } from './plugins/plugin-hooks.controller';
import { McpController } from './mcp/mcp.controller';
import { McpAccessService } from './mcp/mcp-access';
import { McpEndpoint } from './mcp/mcp-endpoint';
import { McpNotifier } from './mcp/mcp-notifier';
import { McpResumedStreams } from './mcp/mcp-resume';
import { McpServerFactory } from './mcp/mcp-server';
import { McpSessionCache } from './mcp/mcp-session-cache';
import { McpSessions } from './mcp/mcp-sessions';
import { McpSubscriber } from './mcp/mcp-subscriber';

@Module({
  controllers: [
    HealthController,
    IdentityController,
    DocsController,
    ToolsController,
    RecordsController,
    AgentsController,
    PluginsController,
    StreamController,
    RunsController,
    ElicitationController,
    SettingsController,
    MemoryController,
    WorkflowsController,
    FilesController,
    TasksController,
    SchedulesController,
    WebhooksController,
    ChatController,
    PluginHooksController,
    MarketController,
    McpController,
  ],
  providers: [
    RunFeed,
    OwnerFeed,
    StreamRelay,
    StreamFastPath,
    JsonFastPath,
    IdentityRepository,
    RunEventsReader,
    // The stream's reads (visibility, replay) on a raw pg pool: see RUN_EVENTS_POOL.
    ...RUN_EVENTS_POOL_PROVIDERS,
    ChatEventsReader,
    IdempotencyRepository,
    TokenVerifier,
    TokenUseCases,
    AdminBootstrap,
    McpAccessRepository,
    McpAccessService,
    McpSubscriber,
    McpSessionCache,
    McpSessions,
    McpNotifier,
    McpServerFactory,
    McpResumedStreams,
    McpEndpoint,
    { provide: APP_GUARD, useClass: AuthGuard },
    { provide: APP_INTERCEPTOR, useClass: ValidationInterceptor },
    // After validation: a refused body claims no key.
    { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
    { provide: APP_FILTER, useClass: ProblemFilter },
  ],
})
export class GatewayModule {}
