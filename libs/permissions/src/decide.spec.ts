import { capabilityRefusal, decideToolCall, type HookVerdict, type ToolCallRequest } from './decide';
import { toolCallOf, type ToolCall, type ToolEffect } from './matchers';
import { parseRules, type Rule, type RuleLists } from './rules';

type Config = ToolCallRequest['config'];

const config = (over: Partial<Config> = {}): Config => ({
  permissionMode: 'ask',
  stepApproval: 'none',
  capabilityMode: 'read-write',
  unattended: false,
  ...over,
});

function rules(partial: Partial<RuleLists> = {}): Rule[] {
  const r = parseRules({ allow: [], ask: [], deny: [], ...partial }, 'owner');
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.rules;
}

const tool = (effect: ToolEffect, name = 't'): ToolCall => ({ tool: name, effect, arguments: {} });
const command = (text: string): ToolCall => ({
  tool: 'execute_command',
  effect: 'external',
  arguments: { command: text },
});

function decide(
  call: ToolCall,
  over: {
    config?: Partial<Config>;
    rules?: Partial<RuleLists>;
    hooks?: HookVerdict[];
    requiresApproval?: boolean;
  } = {},
) {
  return decideToolCall({
    call,
    step: {
      id: 's',
      ...(over.requiresApproval !== undefined ? { requiresApproval: over.requiresApproval } : {}),
    },
    config: config(over.config),
    rules: rules(over.rules),
    hooks: over.hooks ?? [],
  });
}

describe('decideToolCall', () => {
  describe('permission-mode defaults (no rule speaks)', () => {
    it.each<[string, ToolEffect, Partial<Config>, boolean, string]>([
      ['ask mode lets reads through', 'read', {}, false, 'allow'],
      ['ask mode asks before writes', 'write', {}, false, 'ask'],
      ['ask mode asks before external calls', 'external', {}, false, 'ask'],
      ['approve-for-me runs writes', 'write', { permissionMode: 'approve-for-me' }, false, 'allow'],
      [
        'approve-for-me still asks for a step marked requiresApproval',
        'read',
        { permissionMode: 'approve-for-me' },
        true,
        'ask',
      ],
      ['full-access ignores requiresApproval', 'write', { permissionMode: 'full-access' }, true, 'allow'],
      [
        'stepApproval all asks even for reads in full-access',
        'read',
        { permissionMode: 'full-access', stepApproval: 'all' },
        false,
        'ask',
      ],
      [
        'stepApproval non-read asks for writes in full-access',
        'write',
        { permissionMode: 'full-access', stepApproval: 'non-read' },
        false,
        'ask',
      ],
      ['stepApproval non-read lets reads through', 'read', { stepApproval: 'non-read' }, false, 'allow'],
      [
        'read-only denies writes whatever the mode',
        'write',
        { permissionMode: 'full-access', capabilityMode: 'read-only' },
        false,
        'deny',
      ],
      ['read-only denies external calls', 'external', { capabilityMode: 'read-only' }, false, 'deny'],
      ['read-only lets reads through', 'read', { capabilityMode: 'read-only' }, false, 'allow'],
      ['unattended turns an ask into a denial', 'write', { unattended: true }, false, 'deny'],
    ])('%s', (_, effect, cfg, requiresApproval, expected) => {
      expect(decide(tool(effect), { config: cfg, requiresApproval }).decision).toBe(expected);
    });

    it('always says why', () => {
      expect(decide(tool('write', 'write_file'))).toEqual({
        decision: 'ask',
        reason: 'permission mode "ask": write_file is a write tool',
      });
      expect(decide(tool('write', 'write_file'), { config: { unattended: true } })).toEqual({
        decision: 'deny',
        reason:
          'nobody can answer an approval in this run, and it would ask: permission mode "ask": write_file is a write tool',
      });
      expect(decide(tool('read', 'read_file'), { requiresApproval: true }).reason).toBe(
        'step s is marked requiresApproval',
      );
    });
  });

  describe("a tool's own requiresApproval (plugin manifests)", () => {
    const gated = (effect: ToolEffect): ToolCall => ({
      tool: 'confirm_send',
      effect,
      arguments: {},
      requiresApproval: true,
    });

    it.each<[ToolCallRequest['config']['permissionMode'], ToolEffect, string]>([
      ['ask', 'read', 'ask'],
      ['ask', 'external', 'ask'],
      ['approve-for-me', 'read', 'ask'],
      ['approve-for-me', 'external', 'ask'],
      ['full-access', 'read', 'allow'],
      ['full-access', 'external', 'allow'],
    ])('in %s mode a %s tool that requires approval: %s', (permissionMode, effect, expected) => {
      expect(decide(gated(effect), { config: { permissionMode } }).decision).toBe(expected);
    });

    it('asks even when an allow rule names the tool, and says why', () => {
      expect(
        decide(gated('external'), {
          rules: { allow: ['Tool(confirm_send)'] },
          config: { permissionMode: 'approve-for-me' },
        }),
      ).toEqual({
        decision: 'ask',
        reason: 'confirm_send requires approval before every call',
        rule: 'allow: Tool(confirm_send) (owner)',
      });
    });

    it('is denied where nobody can answer, and a deny rule still denies', () => {
      expect(
        decide(gated('external'), { config: { permissionMode: 'approve-for-me', unattended: true } })
          .decision,
      ).toBe('deny');
      expect(decide(gated('read'), { rules: { deny: ['Tool(confirm_send)'] } }).decision).toBe('deny');
    });

    it('is carried from the catalog descriptor by toolCallOf, so no gate can drop it', () => {
      const descriptor = { name: 'confirm_send', effect: 'read' as const, requiresApproval: true };
      expect(toolCallOf(descriptor, { id: 'c1' })).toEqual({ ...gated('read'), arguments: { id: 'c1' } });
      expect(
        decide(toolCallOf(descriptor, {}), {
          config: { permissionMode: 'ask', capabilityMode: 'read-only', unattended: true },
        }).decision,
      ).toBe('deny');
      expect(toolCallOf({ name: 'read_file', effect: 'read' }, {})).not.toHaveProperty('requiresApproval');
    });

    it('leaves tools without it alone', () => {
      expect(decide(tool('external'), { config: { permissionMode: 'approve-for-me' } }).decision).toBe(
        'allow',
      );
    });
  });

  describe('capability and hooks', () => {
    it('refuses by capability before any hook or rule', () => {
      const d = decide(tool('write', 'write_file'), {
        config: { capabilityMode: 'read-only' },
        rules: { allow: ['Tool(write_file)'] },
        hooks: [{ hook: 'h', verdict: 'deny', reason: 'no' }],
      });
      expect(d).toEqual({ decision: 'deny', reason: 'write_file is a write tool and this run is read-only' });
      expect(capabilityRefusal(tool('write', 'write_file'), 'read-only')).toEqual(d);
      expect(capabilityRefusal(tool('read'), 'read-only')).toBeUndefined();
      expect(capabilityRefusal(tool('write'), 'read-write')).toBeUndefined();
    });

    it('lets the first hook that denies decide, before any rule', () => {
      const d = decide(tool('read'), {
        rules: { allow: ['Tool(t)'] },
        hooks: [
          { hook: 'a', verdict: 'pass' },
          { hook: 'b', verdict: 'failed', reason: 'timed out', failClosed: false },
          { hook: 'c', verdict: 'deny', reason: 'frozen' },
          { hook: 'd', verdict: 'deny', reason: 'later' },
        ],
      });
      expect(d).toEqual({ decision: 'deny', reason: 'frozen', hook: 'c' });
    });

    it('denies when a fail-closed hook failed, and goes on past a fail-open one', () => {
      expect(
        decide(tool('read'), {
          hooks: [{ hook: 'h', verdict: 'failed', reason: 'exit 1', failClosed: true }],
        }),
      ).toEqual({ decision: 'deny', reason: 'hook h failed and is fail-closed: exit 1', hook: 'h' });
      expect(
        decide(tool('read'), {
          hooks: [{ hook: 'h', verdict: 'failed', reason: 'exit 1', failClosed: false }],
        }).decision,
      ).toBe('allow');
    });

    it('never lets a passing hook beat a deny rule', () => {
      expect(
        decide(tool('read'), { rules: { deny: ['Tool(t)'] }, hooks: [{ hook: 'h', verdict: 'pass' }] }),
      ).toMatchObject({ decision: 'deny', rule: 'deny: Tool(t) (owner)' });
    });
  });

  describe('rules', () => {
    it('allows by rule in ask mode, naming the rule', () => {
      expect(decide(tool('write', 'write_file'), { rules: { allow: ['Tool(write_file)'] } })).toEqual({
        decision: 'allow',
        reason: 'allowed by rule Tool(write_file) (owner)',
        rule: 'allow: Tool(write_file) (owner)',
      });
    });

    it("still asks at the run's own gates after an allow rule", () => {
      const allow = { allow: ['Tool(t)'] };
      expect(decide(tool('write'), { rules: allow, config: { stepApproval: 'all' } })).toEqual({
        decision: 'ask',
        reason: 'stepApproval is "all": every step asks',
        rule: 'allow: Tool(t) (owner)',
      });
      expect(decide(tool('write'), { rules: allow, requiresApproval: true }).decision).toBe('ask');
      expect(
        decide(tool('write'), {
          rules: allow,
          requiresApproval: true,
          config: { permissionMode: 'full-access' },
        }).decision,
      ).toBe('allow');
      expect(
        decide(tool('write'), { rules: allow, config: { stepApproval: 'all', unattended: true } }).decision,
      ).toBe('deny');
    });

    it('asks at an ask rule in every mode, and denies it unattended naming the rule', () => {
      for (const permissionMode of ['ask', 'approve-for-me', 'full-access'] as const)
        expect(
          decide(tool('read'), { rules: { ask: ['Tool(t)'] }, config: { permissionMode } }).decision,
        ).toBe('ask');
      expect(decide(tool('read'), { rules: { ask: ['Tool(t)'] }, config: { unattended: true } })).toEqual({
        decision: 'deny',
        reason:
          'nobody can answer an approval in this run, and it would ask: rule Tool(t) (owner) requires approval',
        rule: 'ask: Tool(t) (owner)',
      });
    });
  });

  describe('the dangerous-command floor', () => {
    it.each(['ask', 'approve-for-me', 'full-access'] as const)(
      'asks in %s mode, naming the entry',
      (permissionMode) => {
        expect(decide(command('git push origin main'), { config: { permissionMode } })).toEqual({
          decision: 'ask',
          reason:
            'segment "git push origin main" hits the dangerous-command floor entry "git push", which asks for approval in every permission mode',
          floor: 'git push',
        });
      },
    );

    it('refuses a floor command in an unattended full-access run', () => {
      expect(
        decide(command('sudo ls'), { config: { permissionMode: 'full-access', unattended: true } }),
      ).toEqual({
        decision: 'deny',
        reason:
          'nobody can answer an approval in this run, and it would ask: segment "sudo ls" hits the dangerous-command floor entry "sudo", which asks for approval in every permission mode',
        floor: 'sudo',
      });
    });

    it('uses the floor it is given', () => {
      const call = command('rm -rf build');
      const base = {
        call,
        step: { id: 's' },
        config: config({ permissionMode: 'full-access' }),
        rules: [],
        hooks: [],
      };
      expect(decideToolCall(base).decision).toBe('ask');
      expect(decideToolCall({ ...base, options: { floor: [] } }).decision).toBe('allow');
    });

    it('leaves commands off the floor to the mode', () => {
      expect(decide(command('ls -la'), { config: { permissionMode: 'full-access' } }).decision).toBe('allow');
      expect(decide(command('ls -la'), { config: { permissionMode: 'approve-for-me' } }).decision).toBe(
        'allow',
      );
      expect(decide(command('ls -la')).decision).toBe('ask');
    });
  });
});
