import { Controller, Inject, Req, Res } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import { Events, Routes, Rpc, type ToolDescriptor, type ToolResult } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import type { Bus } from '@switchyard/server-bus';
import { APP_CONFIG, BUS } from '@switchyard/server-runtime';
import { callContext, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';

@Controller()
export class ToolsController {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Endpoint(Routes.toolInvoke)
  async invoke(
    @In() input: Input<typeof Routes.toolInvoke>,
    @Req() req: GatewayRequest,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ToolResult> {
    // The registry enforces the tool's own deadline; the NATS request waits a little longer.
    const timeoutMs = (input.body.timeoutMs ?? this.config.tools.timeoutMs) + 2_000;
    const invocationId = input.body.invocationId ?? randomUUID();
    // A client that goes away before the answer cancels the call (kills the command, tells the MCP server).
    res.once('close', () => {
      if (!res.writableFinished) this.bus.emit(Events.toolCancel, { invocationId });
    });
    return this.bus.call(
      Rpc.registry.invoke,
      { ...input.body, invocationId },
      { timeoutMs, ctx: callContext(req.principal, req.correlationId) },
    );
  }

  @Endpoint(Routes.toolCatalog)
  async catalog(@Req() req: GatewayRequest): Promise<ToolDescriptor[]> {
    const { tools } = await this.bus.call(
      Rpc.registry.catalog,
      {},
      {
        ctx: callContext(req.principal, req.correlationId),
      },
    );
    return tools;
  }
}
