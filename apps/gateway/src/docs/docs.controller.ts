import { Controller, Get, Header } from '@nestjs/common';
import { buildOpenApi, Routes } from '@switchyard/contracts';
import { Public } from '@switchyard/server-runtime';

/** The OpenAPI 3.1 document, generated from the same route table and zod schemas the gateway enforces. */
@Controller()
export class DocsController {
  private readonly document = buildOpenApi(Routes, { title: 'Switchyard API', version: '0.1.0' });

  @Public()
  @Get(['api/docs', 'api/docs/openapi.json'])
  @Header('Cache-Control', 'no-cache')
  openapi(): Record<string, unknown> {
    return this.document;
  }
}
