import type { AgentPlan, ToolDescriptor } from '@switchyard/contracts';
import { editedPlan } from './plan-edits';

const reader: ToolDescriptor = {
  name: 'reader',
  description: '',
  inputSchema: { type: 'object' },
  effect: 'read',
  idempotent: true,
  source: 'builtin',
};
const tools = new Map([[reader.name, reader]]);
const step = (id: string, args: Record<string, unknown> = {}, dependsOn: string[] = []) => ({
  id,
  tool: 'reader',
  arguments: args,
  dependsOn,
  description: '',
});
const current: AgentPlan = { steps: [step('a'), step('b', { n: 1 }, ['a'])] };
const edit = (body: unknown, fixed: string[] = []) =>
  editedPlan({ current, body, fixed: new Set(fixed), tools, inputNames: [], readOnly: false });

describe('editedPlan', () => {
  it('adopts a valid edit that leaves fixed steps alone, adding and removing others', () => {
    const plan = edit({ steps: [step('a'), step('c', { n: 2 }, ['a'])] }, ['a']);
    expect(plan.steps.map((s) => s.id)).toEqual(['a', 'c']);
  });

  it('refuses an edit changing a fixed step as conflict, naming it', () => {
    expect(() => edit({ steps: [step('a', { x: 1 }), step('b', { n: 1 }, ['a'])] }, ['a'])).toThrow(
      expect.objectContaining({ code: 'conflict', details: { steps: ['a'] } }),
    );
  });

  it('refuses an invalid plan as validation_failed with its issues', () => {
    expect(() => edit({ steps: [step('a'), step('b', {}, ['nope'])] })).toThrow(
      expect.objectContaining({ code: 'validation_failed', issues: expect.any(Array) }),
    );
  });
});
