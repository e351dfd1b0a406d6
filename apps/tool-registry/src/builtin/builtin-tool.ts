import { applyDecorators, Injectable, SetMetadata } from '@nestjs/common';
import { z } from 'zod';
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
  /**
   * JSON Schema of the value a successful call stands for in references (`resultValue`: a single
   * json block is its JSON, a text block its text), with `examples` where natural.
   */
  readonly outputSchema?: Record<string, unknown>;
}

/** The JSON Schema of what a zod schema parses to, for `outputSchema`. */
export function outputSchemaOf(
  schema: z.ZodType,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
    io: 'output',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return { ...rest, ...extra };
}

/** A text result's schema: a string, described, with examples. */
export function textOutput(description: string, examples: readonly string[]): Record<string, unknown> {
  return { type: 'string', description, examples: [...examples] };
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
