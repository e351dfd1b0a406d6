import { AppError, type AgentPlan, type ToolDescriptor } from '@switchyard/contracts';
import { planRefusal, validatePlan } from '@switchyard/plan';

export interface PlanEdit {
  /** The plan the run holds now. */
  readonly current: AgentPlan;
  /** The edited plan, as the approver sent it. */
  readonly body: unknown;
  /** Steps that started or wait at a gate: an edit must leave them as they are. */
  readonly fixed: ReadonlySet<string>;
  /** The current catalog: an edit is checked against today's tools, not the run's first ones. */
  readonly tools: ReadonlyMap<string, ToolDescriptor>;
  readonly inputNames: readonly string[];
  readonly readOnly: boolean;
}

/**
 * The plan an approver's edit makes, checked: valid like any plan (`validation_failed` with the
 * issues), and leaving every fixed step exactly as it was (`conflict` naming them). Pure.
 */
export function editedPlan(edit: PlanEdit): AgentPlan {
  const checked = validatePlan(edit.body, {
    tools: edit.tools,
    inputNames: edit.inputNames,
    readOnly: edit.readOnly,
  });
  if (!checked.ok) throw planRefusal('the edited plan is not valid', checked.issues);
  const before = new Map(edit.current.steps.map((s) => [s.id, JSON.stringify(s)]));
  const after = new Map(checked.plan.steps.map((s) => [s.id, JSON.stringify(s)]));
  const changed = [...edit.fixed].filter((id) => before.get(id) !== after.get(id));
  if (changed.length) {
    throw new AppError(
      'conflict',
      `steps ${changed.join(', ')} already started or are waiting at a gate; an edit may only change steps that have not`,
      { details: { steps: changed } },
    );
  }
  return checked.plan;
}
