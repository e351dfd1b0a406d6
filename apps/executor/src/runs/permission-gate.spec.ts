import type { PlanStep, RunConfig } from '@switchyard/contracts';
import { authorize } from './permission-gate';

const step = (over: Partial<PlanStep> = {}): PlanStep => ({
  id: 's',
  tool: 't',
  arguments: {},
  dependsOn: [],
  description: '',
  ...over,
});
type Effect = 'read' | 'write' | 'external';
const config = (
  over: Partial<Pick<RunConfig, 'permissionMode' | 'stepApproval' | 'capabilityMode'>> = {},
) => ({
  permissionMode: 'ask' as const,
  stepApproval: 'none' as const,
  capabilityMode: 'read-write' as const,
  ...over,
});
const decide = (effect: Effect, cfg = config(), s = step()) =>
  authorize({ step: s, tool: { name: 't', effect }, config: cfg }).decision;

describe('authorize (permission-mode defaults)', () => {
  it.each<[string, Effect, ReturnType<typeof config>, PlanStep, string]>([
    ['ask mode lets reads through', 'read', config(), step(), 'allow'],
    ['ask mode asks before writes', 'write', config(), step(), 'ask'],
    ['ask mode asks before external calls', 'external', config(), step(), 'ask'],
    ['approve-for-me runs writes', 'write', config({ permissionMode: 'approve-for-me' }), step(), 'allow'],
    [
      'approve-for-me still asks for a step marked requiresApproval',
      'read',
      config({ permissionMode: 'approve-for-me' }),
      step({ requiresApproval: true }),
      'ask',
    ],
    [
      'full-access ignores requiresApproval',
      'write',
      config({ permissionMode: 'full-access' }),
      step({ requiresApproval: true }),
      'allow',
    ],
    [
      'stepApproval all asks even for reads in full-access',
      'read',
      config({ permissionMode: 'full-access', stepApproval: 'all' }),
      step(),
      'ask',
    ],
    [
      'stepApproval non-read asks for writes in full-access',
      'write',
      config({ permissionMode: 'full-access', stepApproval: 'non-read' }),
      step(),
      'ask',
    ],
    [
      'stepApproval non-read lets reads through',
      'read',
      config({ stepApproval: 'non-read' }),
      step(),
      'allow',
    ],
    [
      'read-only denies writes whatever the mode',
      'write',
      config({ permissionMode: 'full-access', capabilityMode: 'read-only' }),
      step(),
      'deny',
    ],
    ['read-only denies external calls', 'external', config({ capabilityMode: 'read-only' }), step(), 'deny'],
    ['read-only lets reads through', 'read', config({ capabilityMode: 'read-only' }), step(), 'allow'],
  ])('%s', (_, effect, cfg, s, expected) => {
    expect(decide(effect, cfg, s)).toBe(expected);
  });

  it('always says why', () => {
    const d = authorize({ step: step(), tool: { name: 'write_file', effect: 'write' }, config: config() });
    expect(d).toEqual({ decision: 'ask', reason: 'permission mode "ask": write_file is a write tool' });
  });
});
