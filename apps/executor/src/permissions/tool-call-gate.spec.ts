import { Writable } from 'node:stream';
import {
  PERMISSIONS_CHANGED_SUBJECT,
  Rpc,
  RunConfig,
  type AgentPlan,
  type Hook,
  type InvokeToolRequest,
  type PermissionDecision,
  type RuleLists,
  type RunEvent,
  type RunEventBody,
  type RunEventOf,
  type RunEventType,
  type ToolDescriptor,
  type ToolResult,
} from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import { GLOBAL_SCOPE } from '@switchyard/server-db-runs';
import { createLogger } from '@switchyard/server-observability';
import { InMemoryBus } from '@switchyard/testing';
import { RunDriver } from '../runs/run-driver';
import { RunWriter } from '../runs/engine/run-writer';
import { RunEventOutbox } from '../runs/engine/run-event-outbox';
import type { HookOutcome, HookRun } from './hook-runner';
import { HooksService, type HookStore } from './hooks.service';
import { PermissionSettingsService, type RuleStore } from './permission-settings.service';
import { PermissionsService } from './permissions.service';

const RUN = '00000000-0000-4000-8000-0000000000aa';
const OWNER = '00000000-0000-4000-8000-0000000000b1';

const logger = createLogger({
  service: 'test',
  level: 'silent',
  instanceId: 'test',
  destination: new Writable({ write: (_c, _e, done) => done() }),
});

/** The run's log in memory. */
class MemoryLog {
  readonly events: RunEvent[] = [];
  private readonly waiters: Array<() => void> = [];

  async append(runId: string, batch: readonly RunEventBody[]): Promise<RunEvent[]> {
    const stored = batch.map((e, i) => ({ ...e, runId, seq: this.events.length + i + 1, at: '' }));
    this.events.push(...stored);
    for (const wake of this.waiters.splice(0)) wake();
    return stored;
  }

  async fail(): Promise<RunEvent[]> {
    throw new Error('not expected in these tests');
  }

  async until(type: RunEventType): Promise<void> {
    while (!this.events.some((e) => e.type === type)) await new Promise<void>((r) => this.waiters.push(r));
  }

  of<T extends RunEventType>(type: T): Array<RunEventOf<T>['data']> {
    return this.events
      .filter((e): e is RunEventOf<T> => e.type === type)
      .map((e) => e.data as RunEventOf<T>['data']);
  }

  /** The first step_failed that is a failure (not a cancellation). */
  get refusal(): Extract<RunEventOf<'step_failed'>['data'], { cancelled: false }> | undefined {
    const [failed] = this.of('step_failed');
    return failed && !failed.cancelled ? failed : undefined;
  }

  get types(): RunEventType[] {
    return this.events.map((e) => e.type);
  }
}

/** The owner's and the global rule lists, and the hooks, as the repository would return them. */
class MemoryPermissions implements RuleStore, HookStore {
  readonly lists = new Map<string, RuleLists>();
  readonly hookRows: Hook[] = [];

  async rules(scope: string) {
    const l = this.lists.get(scope) ?? { allow: [], ask: [], deny: [] };
    return { ...l, updatedAt: null };
  }

  async putRules(scope: string, lists: RuleLists) {
    this.lists.set(scope, lists);
    return { ...lists, updatedAt: null };
  }

  async hooks(ownerId: string, opts: { enabledOnly?: boolean } = {}): Promise<Hook[]> {
    return this.hookRows.filter(
      (h) => (h.ownerId === ownerId || h.ownerId === null) && (!opts.enabledOnly || h.enabled),
    );
  }

  ownHook(): never {
    throw new Error('not used by the gate');
  }
  createHook(): never {
    throw new Error('not used by the gate');
  }
  updateHook(): never {
    throw new Error('not used by the gate');
  }
  deleteHook(): never {
    throw new Error('not used by the gate');
  }
}

/** Hooks answer as the test scripts them, by name; every envelope a hook is sent is kept. */
class ScriptedHooks implements HookRun {
  readonly sent: Array<{ readonly hook: string; readonly envelope: Record<string, unknown> }> = [];
  readonly outcomes = new Map<string, HookOutcome>();

  async run(hook: Hook, envelope: Record<string, unknown>): Promise<HookOutcome> {
    this.sent.push({ hook: hook.name, envelope });
    return this.outcomes.get(hook.name) ?? { kind: 'allow' };
  }
}

let hookSeq = 0;
const hook = (name: string, over: Partial<Hook> = {}): Hook => ({
  id: `00000000-0000-4000-8000-${String(++hookSeq).padStart(12, '0')}`,
  ownerId: OWNER,
  name,
  event: 'pre_tool_use',
  matcher: '',
  type: 'http',
  url: 'https://hooks.example.com/gate',
  timeoutSeconds: 5,
  enabled: true,
  failClosed: false,
  global: false,
  createdAt: '',
  updatedAt: '',
  ...over,
});

const tool = (name: string, effect: ToolDescriptor['effect']): ToolDescriptor => ({
  name,
  description: '',
  inputSchema: {},
  effect,
  idempotent: effect === 'read',
  source: 'builtin',
});
const TOOLS = [tool('read_file', 'read'), tool('write_file', 'write'), tool('execute_command', 'external')];
const ok: ToolResult = { content: [{ type: 'text', text: 'done' }], isError: false, truncated: false };

const step = (
  tool: string,
  args: Record<string, unknown>,
  over: Partial<AgentPlan['steps'][number]> = {},
) => ({
  id: 's',
  tool,
  arguments: args,
  dependsOn: [],
  description: '',
  ...over,
});
const command = (text: string) => step('execute_command', { command: text });

interface Setup {
  readonly config?: Partial<RunConfig>;
  readonly owner?: Partial<RuleLists>;
  readonly global?: Partial<RuleLists>;
  readonly hooks?: readonly Hook[];
  readonly outcomes?: Record<string, HookOutcome>;
}

/**
 * The tool-call gate as a run meets it: the real PermissionsService (rules from PermissionSettingsService,
 * pre-tool-use hooks from HooksService, `decideToolCall`) wired into a RunDriver the way RunLauncher
 * wires it, on the in-memory bus, with the repository and the hook runner in memory.
 */
function setup(s: Setup = {}) {
  const store = new MemoryPermissions();
  const lists = (l: Partial<RuleLists> = {}): RuleLists => ({ allow: [], ask: [], deny: [], ...l });
  store.lists.set(OWNER, lists(s.owner));
  store.lists.set(GLOBAL_SCOPE, lists(s.global));
  store.hookRows.push(...(s.hooks ?? []));
  const runner = new ScriptedHooks();
  for (const [name, outcome] of Object.entries(s.outcomes ?? {})) runner.outcomes.set(name, outcome);
  const bus = new InMemoryBus();
  const calls: InvokeToolRequest[] = [];
  bus.answer(Rpc.registry.invoke, (req) => {
    calls.push(req);
    return ok;
  });
  const appConfig = {
    permissions: {},
    tools: { webFetch: { allowPrivate: false, privateHosts: [] }, commandPath: '/usr/bin:/bin' },
  } as unknown as AppConfig;
  const settings = new PermissionSettingsService(store, bus, logger);
  const hooks = new HooksService(store, runner, bus, appConfig, logger);
  const permissions = new PermissionsService(settings, hooks, appConfig);
  settings.onModuleInit();
  hooks.onModuleInit();

  const log = new MemoryLog();
  const config = RunConfig.parse({ planApproval: false, ...s.config });
  const tools = new Map(TOOLS.map((t) => [t.name, t]));
  const writer: RunWriter = new RunWriter(log, new RunEventOutbox(bus, 0), RUN, 'replica', (err) =>
    driver.writerFailed(err),
  );
  const driver: RunDriver = new RunDriver(
    {
      runId: RUN,
      ctx: { correlationId: 'test', ownerId: OWNER, role: 'user' },
      goal: 'test',
      config,
      inputs: {},
      files: [],
      tools,
      writer,
      inputWaits: {
        timeoutMs: 60_000,
        ask: () => Promise.reject(new Error('this test asks nobody')),
        declined: () => Promise.reject(new Error('this test asks nobody')),
      },
      bus,
      logger,
      settings: {
        resultLimitBytes: 10_000,
        planTimeoutMs: 1_000,
        defaultStepTimeoutMs: 1_000,
        invokeGraceMs: 0,
        localTools: false,
        cancelGraceMs: 1_000,
      },
      catalog: async () => tools,
      onClosed: () => undefined,
      gate: (st, t, args) =>
        permissions.decide({
          ownerId: OWNER,
          runId: RUN,
          step: st,
          call: { tool: t.name, effect: t.effect, arguments: args },
          config,
        }),
      observe: (event, data) => permissions.fire(event, OWNER, data as { runId: string }),
    },
    'planning',
  );
  /** Runs a one-step plan to its end, approving the step if it asks and `approve` says so. */
  const run = async (s0: AgentPlan['steps'][number], approve = false) => {
    await permissions.warm(OWNER);
    void driver.planReady({ steps: [s0] }, { review: false });
    if (approve) {
      await log.until('step_approval_requested');
      expect(calls).toEqual([]); // nothing runs before the approval
      await driver.approve(s0.id, undefined);
    }
    return driver.settled;
  };
  return { run, driver, log, calls, runner, bus, store, permissions };
}

const allowed = (permission: PermissionDecision) => ({ permission });

describe('the tool-call gate, as a run meets it', () => {
  it('allow: a rule allows the call; step_start carries the decision and the tool runs', async () => {
    const g = setup({ config: { permissionMode: 'ask' }, owner: { allow: ['Tool(write_file)'] } });
    const end = await g.run(step('write_file', { filePath: 'a.txt', content: 'x' }));
    expect(end.status).toBe('completed');
    expect(g.log.types).toEqual(['plan_ready', 'run_started', 'step_start', 'step_complete', 'complete']);
    expect(g.log.of('step_start')).toMatchObject([
      allowed({
        decision: 'allow',
        reason: 'allowed by rule Tool(write_file) (owner)',
        rule: 'allow: Tool(write_file) (owner)',
      }),
    ]);
    expect(g.calls.map((c) => c.tool)).toEqual(['write_file']);
  });

  it('ask by a rule: the step waits with the rule that asked, and runs once approved', async () => {
    const g = setup({ config: { permissionMode: 'full-access' }, global: { ask: ['Tool(write_file)'] } });
    const end = await g.run(step('write_file', { filePath: 'a.txt', content: 'x' }), true);
    expect(end.status).toBe('completed');
    const asked: PermissionDecision = {
      decision: 'ask',
      reason: 'rule Tool(write_file) (global) requires approval',
      rule: 'ask: Tool(write_file) (global)',
    };
    expect(g.log.types).toEqual([
      'plan_ready',
      'run_started',
      'step_approval_requested',
      'step_approved',
      'step_start',
      'step_complete',
      'complete',
    ]);
    expect(g.log.of('step_approval_requested')).toEqual([
      {
        gate: 'step',
        stepId: 's',
        tool: 'write_file',
        effect: 'write',
        arguments: { filePath: 'a.txt', content: 'x' },
        reason: asked.reason,
        permission: asked,
      },
    ]);
    expect(g.log.of('step_start')).toMatchObject([allowed(asked)]);
  });

  it('ask by the floor: a dangerous command asks in full-access, whatever an allow rule says', async () => {
    const g = setup({ config: { permissionMode: 'full-access' }, owner: { allow: ['Command(sudo:*)'] } });
    await g.run(command('sudo ls /root'), true);
    expect(g.log.of('step_approval_requested')).toMatchObject([
      { stepId: 's', permission: { decision: 'ask', floor: 'sudo' } },
    ]);
    expect(g.calls).toHaveLength(1);
  });

  it('deny by a rule: step_failed is forbidden with the decision, the tool is never called', async () => {
    const g = setup({ config: { permissionMode: 'full-access' }, owner: { deny: ['Command(rm:*)'] } });
    const end = await g.run(command('ls && rm -rf build'));
    const denied: PermissionDecision = {
      decision: 'deny',
      reason: expect.stringMatching(/^denied by rule Command\(rm:\*\) \(owner\)/) as unknown as string,
      rule: 'deny: Command(rm:*) (owner)',
    };
    expect(g.calls).toEqual([]);
    expect(g.log.types).toEqual(['plan_ready', 'run_started', 'step_failed', 'error']);
    expect(g.log.of('step_failed')).toEqual([
      {
        stepId: 's',
        tool: 'execute_command',
        attempt: 0,
        cancelled: false,
        code: 'forbidden',
        error: expect.stringMatching(/^refused: denied by rule Command\(rm:\*\)/),
        permission: denied,
      },
    ]);
    expect(end).toMatchObject({ status: 'failed', type: 'error', data: { code: 'forbidden', stepId: 's' } });
  });

  it('unattended: what would ask is denied, naming what asked (the mode, a rule, the floor)', async () => {
    const byMode = setup({ config: { permissionMode: 'ask', unattended: true } });
    await byMode.run(step('write_file', { filePath: 'a', content: '' }));
    const byRule = setup({
      config: { permissionMode: 'full-access', unattended: true },
      owner: { ask: ['Tool(write_file)'] },
    });
    await byRule.run(step('write_file', { filePath: 'a', content: '' }));
    const byFloor = setup({ config: { permissionMode: 'full-access', unattended: true } });
    await byFloor.run(command('git push --force origin main'));
    const nobody = 'nobody can answer an approval in this run, and it would ask: ';
    expect([byMode, byRule, byFloor].map((g) => g.log.refusal?.permission)).toEqual([
      { decision: 'deny', reason: `${nobody}permission mode "ask": write_file is a write tool` },
      {
        decision: 'deny',
        reason: `${nobody}rule Tool(write_file) (owner) requires approval`,
        rule: 'ask: Tool(write_file) (owner)',
      },
      { decision: 'deny', reason: expect.stringContaining(nobody) as unknown as string, floor: 'git push' },
    ]);
    for (const g of [byMode, byRule, byFloor]) {
      expect(g.calls).toEqual([]);
      expect(g.log.types).toEqual(['plan_ready', 'run_started', 'step_failed', 'error']);
      expect(g.log.refusal?.code).toBe('forbidden');
    }
  });

  it('a hook that denies decides before the rules: the later hooks are not asked', async () => {
    const g = setup({
      config: { permissionMode: 'full-access' },
      owner: { allow: ['Tool(write_file)'] },
      hooks: [
        hook('audit'),
        hook('policy', { matcher: 'Tool(write_file)' }),
        hook('never-reached'),
        hook('reads-only', { matcher: 'Tool(read_file)' }),
      ],
      outcomes: { policy: { kind: 'deny', reason: 'no writes on Fridays' } },
    });
    await g.run(step('write_file', { filePath: 'a.txt', content: 'x' }));
    expect(g.runner.sent.map((h) => h.hook)).toEqual(['audit', 'policy']);
    expect(g.runner.sent[1]?.envelope).toEqual({
      event: 'pre_tool_use',
      hook: 'policy',
      ownerId: OWNER,
      runId: RUN,
      stepId: 's',
      tool: 'write_file',
      effect: 'write',
      arguments: { filePath: 'a.txt', content: 'x' },
      at: expect.any(String),
    });
    expect(g.log.of('step_failed')).toEqual([
      {
        stepId: 's',
        tool: 'write_file',
        attempt: 0,
        cancelled: false,
        code: 'forbidden',
        error: 'refused: no writes on Fridays',
        permission: { decision: 'deny', reason: 'no writes on Fridays', hook: 'policy' },
      },
    ]);
    expect(g.calls).toEqual([]);
  });

  it('a hook that fails: fail-open lets the rules decide, fail-closed (a timeout) denies', async () => {
    const open = setup({
      config: { permissionMode: 'full-access' },
      hooks: [hook('flaky')],
      outcomes: { flaky: { kind: 'failed', reason: 'answered HTTP 502' } },
    });
    await open.run(step('write_file', { filePath: 'a', content: '' }));
    expect(open.log.of('step_start')).toMatchObject([
      allowed({
        decision: 'allow',
        reason: 'permission mode "full-access" lets write tools run without asking',
      }),
    ]);
    expect(open.calls).toHaveLength(1);

    const closed = setup({
      config: { permissionMode: 'full-access' },
      hooks: [hook('guard', { failClosed: true }), hook('after')],
      outcomes: { guard: { kind: 'failed', reason: 'timed out after 5 s' } },
    });
    await closed.run(step('write_file', { filePath: 'a', content: '' }));
    expect(closed.runner.sent.map((h) => h.hook)).toEqual(['guard']);
    expect(closed.log.refusal?.permission).toEqual({
      decision: 'deny',
      reason: 'hook guard failed and is fail-closed: timed out after 5 s',
      hook: 'guard',
    });
    expect(closed.calls).toEqual([]);
  });

  it("shows a new run's call to the hooks only once its row is written (shownAfter)", async () => {
    const g = setup({ config: { permissionMode: 'full-access' }, hooks: [hook('audit')] });
    await g.permissions.warm(OWNER);
    let written!: () => void;
    const row = new Promise<void>((r) => (written = r));
    const decided = g.permissions.decide({
      ownerId: OWNER,
      runId: RUN,
      step: { id: 's' },
      call: { tool: 'read_file', effect: 'read', arguments: { filePath: 'a' } },
      config: RunConfig.parse({ permissionMode: 'full-access' }),
      shownAfter: row,
    });
    await new Promise((r) => setImmediate(r));
    expect(g.runner.sent).toEqual([]);
    written();
    expect(await decided).toMatchObject({ decision: 'allow' });
    expect(g.runner.sent.map((h) => h.hook)).toEqual(['audit']);
  });

  it('a read-only run refuses a write before any hook is asked', async () => {
    const g = setup({
      config: { permissionMode: 'full-access', capabilityMode: 'read-only' },
      hooks: [hook('audit')],
    });
    await g.run(step('write_file', { filePath: 'a', content: '' }));
    expect(g.runner.sent).toEqual([]);
    expect(g.log.refusal?.permission).toEqual({
      decision: 'deny',
      reason: 'write_file is a write tool and this run is read-only',
    });
  });

  it('an opaque shell segment asks while command deny rules exist, and is denied when unattended', async () => {
    const code = `python3 -c "__import__('os').system('rm -rf x')"`;
    const attended = setup({ config: { permissionMode: 'full-access' }, owner: { deny: ['Command(rm:*)'] } });
    await attended.run(command(code), true);
    const [asked] = attended.log.of('step_approval_requested');
    expect(asked?.permission).toEqual({
      decision: 'ask',
      reason: expect.stringMatching(
        /runs what the gate cannot read .*Command\(rm:\*\) \(owner\)/,
      ) as unknown as string,
    });
    expect(attended.calls).toHaveLength(1); // only once approved

    const unattended = setup({
      config: { permissionMode: 'full-access', unattended: true },
      owner: { deny: ['Command(rm:*)'] },
    });
    await unattended.run(command(code));
    expect(unattended.calls).toEqual([]);
    expect(unattended.log.of('step_failed')[0]).toMatchObject({
      code: 'forbidden',
      permission: { decision: 'deny', reason: expect.stringContaining('runs what the gate cannot read') },
    });
  });

  it('an opaque segment never satisfies an allow rule: "ask" mode still asks', async () => {
    const g = setup({ config: { permissionMode: 'ask' }, owner: { allow: ['Command(node:*)'] } });
    await g.run(command(`node -e "require('child_process').execSync('id')"`), true);
    expect(g.log.of('step_approval_requested')[0]?.permission.decision).toBe('ask');
    const plain = setup({ config: { permissionMode: 'ask' }, owner: { allow: ['Command(node:*)'] } });
    await plain.run(command('node build.js'));
    expect(plain.log.of('step_start')[0]?.permission).toMatchObject({
      decision: 'allow',
      rule: 'allow: Command(node:*) (owner)',
    });
  });

  it('observing hooks hear the completed call; nothing waits for them', async () => {
    const g = setup({
      config: { permissionMode: 'full-access' },
      hooks: [hook('after-write', { event: 'post_tool_use', matcher: 'Tool(write_file)' })],
    });
    await g.run(step('write_file', { filePath: 'a', content: '' }));
    expect(g.runner.sent).toEqual([
      {
        hook: 'after-write',
        envelope: {
          event: 'post_tool_use',
          hook: 'after-write',
          ownerId: OWNER,
          tool: 'write_file',
          effect: 'write',
          arguments: { filePath: 'a', content: '' },
          runId: RUN,
          stepId: 's',
          result: 'done',
          truncated: false,
          at: expect.any(String),
        },
      },
    ]);
  });

  it('decides with rules another replica changed once it announces the change on the bus', async () => {
    const g = setup({ config: { permissionMode: 'full-access' } });
    const call = {
      ownerId: OWNER,
      step: { id: 's' },
      call: { tool: 'write_file', effect: 'write' as const, arguments: {} },
      config: RunConfig.parse({ permissionMode: 'full-access' }),
    };
    await g.permissions.warm(OWNER);
    expect(g.permissions.decide(call)).toMatchObject({ decision: 'allow' });
    await g.store.putRules(OWNER, { allow: [], ask: [], deny: ['Tool(write_file)'] });
    expect(g.permissions.decide(call)).toMatchObject({ decision: 'allow' }); // the cached copy, until told
    g.bus.publish(PERMISSIONS_CHANGED_SUBJECT, { scope: OWNER });
    await g.bus.flush();
    expect(await g.permissions.decide(call)).toEqual({
      decision: 'deny',
      reason: 'denied by rule Tool(write_file) (owner)',
      rule: 'deny: Tool(write_file) (owner)',
    });
  });
});
