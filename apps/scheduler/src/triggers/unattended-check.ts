import { Inject, Injectable } from '@nestjs/common';
import {
  AppError,
  PermissionMode,
  Rpc,
  type FieldIssue,
  type PlanStep,
  type ResolvedWorkflow,
} from '@switchyard/contracts';
import { bindFileInputs, checkInputs, fileInputsOf } from '@switchyard/plan';
import type { Bus } from '@switchyard/server-bus';
import type { CallContext } from '@switchyard/server-observability';
import { BUS } from '@switchyard/server-runtime';

const MODES = PermissionMode.options;

/** A step an unattended run of this workflow would be refused at. */
interface Refusal {
  readonly step: string;
  readonly tool: string;
  readonly reason: string;
}

/**
 * Refuses bindings of picker-file inputs, then checks the inputs against the schema's basics.
 * Shared-directory inputs are fine unattended: each run makes its own directory and fills them (a
 * value bound to one is refused: the run decides it).
 */
export function checkUnattendedInputs(
  schema: Record<string, unknown>,
  inputs: Record<string, unknown>,
  opts: { complete: boolean },
): void {
  const special = fileInputsOf(schema);
  const files = new Set(special.pickers);
  const shared = new Set(special.sharedDirectories);
  const issues: FieldIssue[] = Object.keys(inputs)
    .filter((k) => shared.has(k))
    .map((k) => ({ path: `inputs.${k}`, message: 'filled by each run (a shared directory): leave it out' }));
  issues.push(
    ...Object.keys(inputs)
      .filter((k) => files.has(k))
      .map((k) => ({
        path: `inputs.${k}`,
        message:
          'a picked file cannot be bound to an unattended run (its grant ends with the session); pass a stable identifier instead',
      })),
  );
  const filled = bindFileInputs(schema, inputs, []).inputs;
  issues.push(...checkInputs(schema, filled).filter((i) => opts.complete || i.message !== 'required'));
  if (issues.length)
    throw new AppError(
      'validation_failed',
      `the inputs do not fit the workflow: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      { issues },
    );
}

/**
 * What a schedule or a webhook trigger checks at creation, so its unattended runs do not fail on a
 * gate nobody can answer: the workflow is the caller's and published, the inputs fit, and under the
 * chosen permission mode no step would ask (an ask is a refusal when nobody is there). The executor
 * owns the rules; it is asked through the same evaluate call the settings page uses.
 */
@Injectable()
export class UnattendedCheck {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  async check(
    req: {
      workflowId: string;
      inputs: Record<string, unknown>;
      permissionMode: PermissionMode;
      /** Schedules bind every input; a trigger's defaults are completed by each delivery. */
      complete: boolean;
    },
    ctx: CallContext,
  ): Promise<ResolvedWorkflow> {
    const wf = await this.bus.call(
      Rpc.workflows.resolve,
      { id: req.workflowId, version: 'published' },
      { ctx },
    );
    checkUnattendedInputs(wf.inputSchema, req.inputs, { complete: req.complete });
    const refused = await this.refusals(wf.plan.steps, req.permissionMode, ctx);
    if (!refused.length) return wf;
    const others = MODES.filter((m) => m !== req.permissionMode);
    const working: PermissionMode[] = [];
    for (const m of others) if (!(await this.refusals(wf.plan.steps, m, ctx)).length) working.push(m);
    const list = refused.map((r) => `${r.step} (${r.tool}): ${r.reason}`).join('; ');
    const guidance = working.length
      ? `permission modes that would work: ${working.join(', ')}; or add allow rules for these steps`
      : 'no permission mode would let it run unattended; change the rules or the workflow';
    throw new AppError(
      'validation_failed',
      `nobody can answer an approval in an unattended run, and under permission mode "${req.permissionMode}" ` +
        `these steps would need one: ${list}. ${guidance}`,
      {
        issues: refused.map((r) => ({
          path: 'permissionMode',
          message: `${r.step} (${r.tool}): ${r.reason}`,
        })),
        details: { steps: refused, workingModes: working },
      },
    );
  }

  private async refusals(
    steps: readonly PlanStep[],
    permissionMode: PermissionMode,
    ctx: CallContext,
  ): Promise<Refusal[]> {
    const decisions = await Promise.all(
      steps.map(async (s): Promise<Refusal | undefined> => {
        // The plan's own gate asks outside full-access whatever the rules say (decideToolCall).
        if (s.requiresApproval === true && permissionMode !== 'full-access')
          return { step: s.id, tool: s.tool, reason: 'the step is marked requiresApproval' };
        const d = await this.bus.call(
          Rpc.executor.permissionsEvaluate,
          { tool: s.tool, arguments: s.arguments, permissionMode, unattended: true },
          { ctx },
        );
        return d.decision === 'allow' ? undefined : { step: s.id, tool: s.tool, reason: d.reason };
      }),
    );
    return decisions.filter((d): d is Refusal => d !== undefined);
  }
}
