import { applyDecorators, Injectable, SetMetadata } from '@nestjs/common';
import type { z } from 'zod';
import type { ToolEffect, ToolResult } from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';

export const BUILTIN_TOOL = 'switchyard:builtin-tool';

export interface BuiltinToolSpec<S extends z.ZodObject = z.ZodObject> {
  /** Catalog and record name, snake_case. */
  readonly name: string;
  readonly description: string;
  readonly params: S;
  readonly effect: ToolEffect;
  /** Calling it twice with the same arguments has the same effect as once (retries are safe). */
  readonly idempotent: boolean;
}

export interface ToolRunContext {
  /** Aborted on timeout or cancellation: tools stop their work (kill processes, stop reading). */
  readonly signal: AbortSignal;
  readonly caller: CallContext;
}

/** A code-defined tool. Register with `@BuiltinTool(spec)` and list it in the module's providers. */
export interface BuiltinToolHandler<S extends z.ZodObject = z.ZodObject> {
  run(args: z.output<S>, ctx: ToolRunContext): Promise<ToolResult>;
}

/** Marks a class as a built-in tool; the registry discovers it among the module's providers. */
export function BuiltinTool<S extends z.ZodObject>(spec: BuiltinToolSpec<S>): ClassDecorator {
  return applyDecorators(Injectable(), SetMetadata(BUILTIN_TOOL, spec));
}

export function text(value: string, isError = false): ToolResult {
  return { content: [{ type: 'text', text: value }], isError, truncated: false };
}
