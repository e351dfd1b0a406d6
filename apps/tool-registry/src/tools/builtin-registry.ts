import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { z } from 'zod';
import type { ToolDescriptor } from '@switchyard/contracts';
import { BUILTIN_TOOL, type BuiltinToolHandler, type BuiltinToolSpec } from '../builtin/builtin-tool';

export interface RegisteredBuiltin {
  readonly spec: BuiltinToolSpec;
  readonly handler: BuiltinToolHandler;
  readonly descriptor: ToolDescriptor;
}

/** Finds every `@BuiltinTool` provider at start and keeps its descriptor (JSON Schema built once). */
@Injectable()
export class BuiltinRegistry implements OnModuleInit {
  private readonly tools = new Map<string, RegisteredBuiltin>();
  private sorted: RegisteredBuiltin[] = [];

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as BuiltinToolHandler | undefined;
      const type = wrapper.metatype as (new (...args: never[]) => unknown) | null | undefined;
      if (!instance || !type) continue;
      const spec = Reflect.getMetadata(BUILTIN_TOOL, type) as BuiltinToolSpec | undefined;
      if (!spec) continue;
      if (this.tools.has(spec.name)) throw new Error(`two built-in tools are named ${spec.name}`);
      const inputSchema = z.toJSONSchema(spec.params, { io: 'input', unrepresentable: 'any' }) as Record<
        string,
        unknown
      >;
      delete inputSchema['$schema'];
      this.tools.set(spec.name, {
        spec,
        handler: instance,
        descriptor: {
          name: spec.name,
          description: spec.description,
          inputSchema,
          effect: spec.effect,
          idempotent: spec.idempotent,
          source: 'builtin',
          ...(spec.outputSchema ? { outputSchema: spec.outputSchema } : {}),
        },
      });
    }
    // Listed on every catalog call: sort once.
    this.sorted = [...this.tools.values()].sort((a, b) => a.spec.name.localeCompare(b.spec.name));
  }

  get(name: string): RegisteredBuiltin | undefined {
    return this.tools.get(name);
  }

  list(): RegisteredBuiltin[] {
    return this.sorted;
  }
}
