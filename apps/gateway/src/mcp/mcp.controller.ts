import { Controller, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Routes, type McpAccess } from '@switchyard/contracts';
import type { Principal } from '../auth/principal';
import { Caller, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';
import { McpAccessService } from './mcp-access';
import { McpEndpoint } from './mcp-endpoint';

/** The MCP endpoint (Streamable HTTP) and the owners' MCP access settings. */
@Controller()
export class McpController {
  constructor(
    private readonly endpoint: McpEndpoint,
    private readonly access: McpAccessService,
  ) {}

  @Endpoint(Routes.mcpPost)
  post(@Req() req: GatewayRequest, @Res() res: Response): Promise<void> {
    return this.endpoint.handle(req, res);
  }

  @Endpoint(Routes.mcpGet)
  get(@Req() req: GatewayRequest, @Res() res: Response): Promise<void> {
    return this.endpoint.handle(req, res);
  }

  @Endpoint(Routes.mcpDelete)
  delete(@Req() req: GatewayRequest, @Res() res: Response): Promise<void> {
    return this.endpoint.handle(req, res);
  }

  @Endpoint(Routes.mcpAccessGet)
  settings(@In() input: Input<typeof Routes.mcpAccessGet>, @Caller() caller: Principal): Promise<McpAccess> {
    return this.access.view(caller, input.query);
  }

  @Endpoint(Routes.mcpAccessPut)
  change(@In() input: Input<typeof Routes.mcpAccessPut>, @Caller() caller: Principal): Promise<McpAccess> {
    return this.access.put(caller, input.query, input.body);
  }
}
