import { Inject, Injectable } from '@nestjs/common';
import {
  AppError,
  isRecord,
  Rpc,
  type InputEnumSource,
  type InputOptions,
  type InputOptionsRequest,
} from '@switchyard/contracts';
import { fileInputsOf, resultValue } from '@switchyard/plan';
import type { Bus } from '@switchyard/server-bus';
import { requireOwner, type CallContext } from '@switchyard/server-observability';
import { BUS } from '@switchyard/server-runtime';
import { PermissionsService } from '../permissions/permissions.service';
import { resultText } from '../runs/step-result';
import { toolCallOf } from '@switchyard/permissions';

/** Most choices a dropdown gets; a list tool answering more is cut. */
const MAX_INPUT_OPTIONS = 500;

/** The items of a list tool's answer: the value itself when it is a list, else its first list field. */
function itemsOf(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (isRecord(value)) {
    for (const key of ['items', 'results', 'data']) if (Array.isArray(value[key])) return value[key];
    const list = Object.values(value).find(Array.isArray);
    if (list) return list;
  }
  return [];
}

function pick(item: unknown, field: string | undefined, fallbacks: readonly string[]): unknown {
  if (!isRecord(item)) return item;
  if (field !== undefined) return item[field];
  for (const f of fallbacks) if (item[f] !== undefined) return item[f];
  return undefined;
}

/** `{value, label}` per item; items without a value are left out. */
function optionsOf(value: unknown, source: InputEnumSource): InputOptions {
  const items: InputOptions['items'] = [];
  for (const item of itemsOf(value).slice(0, MAX_INPUT_OPTIONS)) {
    const v = pick(item, source.valueField, ['value', 'id', 'name', 'email']);
    if (v === undefined || v === null) continue;
    const l = pick(item, source.labelField, ['label', 'name', 'title', 'email']) ?? v;
    items.push({ value: v, label: typeof l === 'string' ? l : JSON.stringify(l) });
  }
  return { items };
}

/**
 * The choices of an `x-switchyard-enum` input: its list tool called for the caller, as a read call
 * through the same permission gate as a run's step (a tool that is not a read, or a call the rules
 * would deny or ask about, is refused: a dropdown cannot ask anyone).
 */
@Injectable()
export class InputOptionsUseCase {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    private readonly permissions: PermissionsService,
  ) {}

  async options(req: InputOptionsRequest, ctx: CallContext): Promise<InputOptions> {
    const ownerId = requireOwner(ctx, 'workflow inputs');
    const def = await this.bus.call(
      Rpc.workflows.resolve,
      { id: req.id, version: req.version ?? 'draft' },
      { ctx },
    );
    const source = fileInputsOf(def.inputSchema).enums.get(req.input);
    if (!source)
      throw new AppError(
        'not_found',
        `workflow ${req.id} has no input "${req.input}" with x-switchyard-enum`,
      );
    const { tools } = await this.bus.call(Rpc.registry.catalog, {}, { ctx });
    const tool = tools.find((t) => t.name === source.tool);
    if (!tool) throw new AppError('not_found', `the list tool ${source.tool} is not in your catalog`);
    if (tool.effect !== 'read')
      throw new AppError(
        'forbidden',
        `${source.tool} is not a read tool; only a read tool can fill a dropdown`,
      );
    const args = source.arguments ?? {};
    await this.permissions.warm(ownerId);
    const decision = await this.permissions.decide({
      ownerId,
      call: toolCallOf(tool, args),
      step: { id: `options:${req.input}` },
      config: {
        permissionMode: 'ask',
        stepApproval: 'none',
        capabilityMode: 'read-only',
        unattended: true,
      },
    });
    if (decision.decision !== 'allow')
      throw new AppError('forbidden', `calling ${tool.name} for this list was refused: ${decision.reason}`, {
        details: { decision },
      });
    const result = await this.bus.call(Rpc.registry.invoke, { tool: tool.name, arguments: args }, { ctx });
    if (result.isError) throw new AppError('tool_failed', `${tool.name} failed: ${resultText(result, 500)}`);
    return optionsOf(resultValue(result), source);
  }
}
