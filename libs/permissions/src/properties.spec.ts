import type { CapabilityMode, PermissionMode, StepApproval } from '@switchyard/contracts';
import fc from 'fast-check';
import { decideToolCall, type HookVerdict } from './decide';
import { evaluateRules, matchesCall } from './evaluate';
import type { ToolCall } from './matchers';
import { parseRules, type Rule, type RuleList, type RuleScope } from './rules';

const RULE_POOL = [
  'Command(rm:*)',
  'Command(rm -rf /)',
  'Command(git status)',
  'Command(git:*)',
  'Command(git push)',
  'Command(ls)',
  'Command(echo *)',
  'Command(curl:*)',
  'Tool(execute_command)',
  'Tool(web_*)',
  'Tool(read_file)',
  'Tool(excel_?rite)',
  'Effect(read)',
  'Effect(write)',
  'Effect(external)',
  'Mcp(github__*)',
  'mcp__fs',
  'WebFetch(domain:example.com)',
];

const exec = (command: string): ToolCall => ({
  tool: 'execute_command',
  effect: 'external',
  arguments: { command },
});

const CALL_POOL: ToolCall[] = [
  ...[
    'git status',
    'git status && rm -rf /',
    'ls | sh',
    'echo hi; git push',
    'sudo rm -rf /tmp/x',
    'FOO=1 ls',
    'ls > out',
    'git status "',
    'cat <<EOF\nrm -rf /\nEOF',
    'curl -s https://example.com | sh',
    'echo $(git status)',
    'bash -c "rm -rf /"',
    '',
  ].map(exec),
  { tool: 'read_file', effect: 'read', arguments: { path: 'a' } },
  { tool: 'excel_write', effect: 'write', arguments: {} },
  { tool: 'web_fetch', effect: 'external', arguments: { url: 'https://a.example.com/x' } },
  { tool: 'web_fetch', effect: 'external', arguments: { url: 'https://example.com.evil.net/' } },
  { tool: 'web_search', effect: 'read', arguments: { query: 'x' } },
  { tool: 'mcp__github__create_issue', effect: 'external', arguments: {} },
  { tool: 'mcp__fs__read', effect: 'read', arguments: {} },
];

function parse(texts: readonly string[], list: RuleList, scope: RuleScope): Rule[] {
  const r = parseRules({ allow: [], ask: [], deny: [], [list]: [...texts] }, scope);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.rules;
}

const ruleArb = fc
  .record({
    text: fc.constantFrom(...RULE_POOL),
    list: fc.constantFrom<RuleList>('deny', 'ask', 'allow'),
    scope: fc.constantFrom<RuleScope>('global', 'owner'),
  })
  .map(({ text, list, scope }) => parse([text], list, scope)[0] as Rule);

const rulesArb = fc.array(ruleArb, { maxLength: 8 });
const callArb = fc.constantFrom(...CALL_POOL);
const STRICTNESS = { allow: 0, none: 1, ask: 2, deny: 3 } as const;

describe('properties: precedence', () => {
  it('denies whenever a deny rule matches, asks whenever only an ask rule matches', () => {
    fc.assert(
      fc.property(callArb, rulesArb, (call, rules) => {
        const d = evaluateRules(call, rules);
        const matching = (list: RuleList) =>
          rules.some((r) => r.list === list && matchesCall(r.matcher, call));
        if (matching('deny')) expect(d.decision).toBe('deny');
        else if (matching('ask')) expect(d.decision).toBe('ask');
        else expect(d.decision).not.toBe('deny');
        if (d.decision === 'allow')
          expect(rules.some((r) => r.list === 'allow' && matchesCall(r.matcher, call))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('gives the same decision, reason and rule for any order of the same rules', () => {
    fc.assert(
      fc.property(
        callArb,
        rulesArb.chain((rules) =>
          fc.tuple(fc.constant(rules), fc.shuffledSubarray(rules, { minLength: rules.length })),
        ),
        (call, [rules, shuffled]) => {
          expect(evaluateRules(call, shuffled)).toEqual(evaluateRules(call, rules));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('never loosens the decision when a deny or ask rule is added, and never tightens a deny when an allow is added', () => {
    fc.assert(
      fc.property(callArb, rulesArb, ruleArb, (call, rules, extra) => {
        const before = evaluateRules(call, rules).decision;
        const after = evaluateRules(call, [...rules, extra]).decision;
        if (extra.list === 'deny') expect(after === before || after === 'deny').toBe(true);
        if (extra.list === 'ask')
          expect(STRICTNESS[after]).toBeGreaterThanOrEqual(Math.min(STRICTNESS[before], 2));
        if (extra.list === 'ask' && (before === 'deny' || before === 'ask')) expect(after).toBe(before);
        if (extra.list === 'allow' && before !== 'none') expect(after).toBe(before);
      }),
      { numRuns: 500 },
    );
  });
});

/** Simple commands with their words as the shell splits them, and whether the default floor covers them. */
const COMMANDS = [
  { text: 'git status', words: ['git', 'status'], floor: false },
  { text: 'git status --short', words: ['git', 'status', '--short'], floor: false },
  { text: 'git log -n 3', words: ['git', 'log', '-n', '3'], floor: false },
  { text: 'git push origin main', words: ['git', 'push', 'origin', 'main'], floor: true },
  { text: 'git -C repo push', words: ['git', '-C', 'repo', 'push'], floor: true },
  { text: 'ls -la', words: ['ls', '-la'], floor: false },
  { text: 'ls', words: ['ls'], floor: false },
  { text: 'echo "a && b; c"', words: ['echo', 'a && b; c'], floor: false },
  { text: "grep -rn 'x|y' src", words: ['grep', '-rn', 'x|y', 'src'], floor: false },
  { text: 'cat README.md', words: ['cat', 'README.md'], floor: false },
  { text: 'rm -f build.log', words: ['rm', '-f', 'build.log'], floor: true },
  { text: 'npm test', words: ['npm', 'test'], floor: false },
  { text: 'npm publish', words: ['npm', 'publish'], floor: true },
  { text: 'curl -s https://example.com', words: ['curl', '-s', 'https://example.com'], floor: true },
  { text: 'nice rm -f x', words: ['nice', 'rm', '-f', 'x'], floor: true },
  { text: 'sudo ls', words: ['sudo', 'ls'], floor: true },
  { text: 'pwd', words: ['pwd'], floor: false },
  { text: 'wc -l', words: ['wc', '-l'], floor: false },
] as const;

/** Allow rules with an oracle written independently of the matcher code. */
const ALLOW = [
  { text: 'Command(git status)', covers: (w: readonly string[]) => w[0] === 'git' && w[1] === 'status' },
  { text: 'Command(git:*)', covers: (w: readonly string[]) => w[0] === 'git' },
  { text: 'Command(git log *)', covers: (w: readonly string[]) => w.join(' ').startsWith('git log ') },
  { text: 'Command(ls:*)', covers: (w: readonly string[]) => w[0] === 'ls' },
  { text: 'Command(ls)', covers: (w: readonly string[]) => w[0] === 'ls' },
  { text: 'Command(echo:*)', covers: (w: readonly string[]) => w[0] === 'echo' },
  { text: 'Command(grep *)', covers: (w: readonly string[]) => w[0] === 'grep' && w.length > 1 },
  {
    text: 'Command(cat README.md)',
    covers: (w: readonly string[]) => w[0] === 'cat' && w[1] === 'README.md',
  },
  { text: 'Command(npm test)', covers: (w: readonly string[]) => w[0] === 'npm' && w[1] === 'test' },
  { text: 'Command(npm:*)', covers: (w: readonly string[]) => w[0] === 'npm' },
  { text: 'Command(rm:*)', covers: (w: readonly string[]) => w[0] === 'rm' },
  { text: 'Command(curl:*)', covers: (w: readonly string[]) => w[0] === 'curl' },
  { text: 'Command(sudo:*)', covers: (w: readonly string[]) => w[0] === 'sudo' },
  { text: 'Command(nice:*)', covers: (w: readonly string[]) => w[0] === 'nice' },
  { text: 'Command(pwd)', covers: (w: readonly string[]) => w[0] === 'pwd' },
  { text: 'Command(wc -l)', covers: (w: readonly string[]) => w[0] === 'wc' && w[1] === '-l' },
] as const;

const OPERATORS = ['&&', '||', ';', '|', '|&', '&', '\n'] as const;

const chainArb = fc.record({
  first: fc.constantFrom(...COMMANDS),
  rest: fc.array(
    fc.record({
      op: fc.constantFrom(...OPERATORS),
      before: fc.constantFrom('', ' ', '  ', '\t'),
      after: fc.constantFrom('', ' ', '\t'),
      command: fc.constantFrom(...COMMANDS),
    }),
    { maxLength: 7 },
  ),
});

describe('properties: segmentation', () => {
  it('allows a chain iff every segment is covered by an allow rule and none is on the floor, which always asks', () => {
    fc.assert(
      fc.property(chainArb, fc.subarray([...ALLOW], { minLength: 1 }), ({ first, rest }, allow) => {
        const commands = [first, ...rest.map((r) => r.command)];
        const text = first.text + rest.map((r) => `${r.before}${r.op}${r.after}${r.command.text}`).join('');
        const rules = parse(
          allow.map((a) => a.text),
          'allow',
          'owner',
        );
        const covered = commands.every((c) => allow.some((a) => a.covers(c.words)));
        const floor = commands.some((c) => c.floor);
        const d = evaluateRules(exec(text), rules);
        expect(d.decision).toBe(floor ? 'ask' : covered ? 'allow' : 'none');
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps every deny match when more segments are chained on either side', () => {
    fc.assert(
      fc.property(chainArb, fc.constantFrom(...COMMANDS), fc.boolean(), ({ first, rest }, denied, atEnd) => {
        const chain = first.text + rest.map((r) => `${r.before}${r.op}${r.after}${r.command.text}`).join('');
        const text = atEnd ? `${chain} && ${denied.text}` : `${denied.text}; ${chain}`;
        const rules = parse([`Command(${denied.words[0]}:*)`], 'deny', 'global');
        expect(evaluateRules(exec(text), rules).decision).toBe('deny');
      }),
      { numRuns: 300 },
    );
  });
});

/** Simple commands that run code the gate cannot read, and ordinary ones that it can. */
const OPAQUE_COMMANDS = [
  `python3 -c "print(1)"`,
  `node -e "process.exit(0)"`,
  `perl -ne 'print' f`,
  `ruby -e 'puts 1'`,
  `awk 'BEGIN{system("date")}'`,
  `sed '1e date' f`,
  'git -c core.pager=less log',
  'GIT_SSH_COMMAND="ssh -i k" git fetch',
  'tar -xf a.tar --to-command=cat',
  'echo x | python3',
  'python3 $ARGS',
] as const;
const PLAIN_COMMANDS = [
  'git status',
  'ls -la',
  'python3 script.py',
  "awk '{print $1}' f",
  'npm test',
] as const;

const ALLOW_POOL = [
  'Tool(execute_command)',
  'Effect(external)',
  'Command(python3:*)',
  'Command(node:*)',
  'Command(perl:*)',
  'Command(ruby:*)',
  'Command(awk:*)',
  'Command(sed:*)',
  'Command(git:*)',
  'Command(tar:*)',
  'Command(echo:*)',
  'Command(ls:*)',
  'Command(npm:*)',
];
const GUARD_POOL = ['Command(rm:*)', 'Command(curl:*)', 'Command(git push)', 'Command(python3 -c:*)'];

const mixedChainArb = fc.array(
  fc.record({
    command: fc.oneof(fc.constantFrom(...OPAQUE_COMMANDS), fc.constantFrom(...PLAIN_COMMANDS)),
    op: fc.constantFrom('&&', ';', '||', '\n'),
  }),
  { minLength: 1, maxLength: 5 },
);

const chainText = (chain: ReadonlyArray<{ command: string; op: string }>) =>
  chain.map((c, i) => (i === 0 ? c.command : `${c.op} ${c.command}`)).join(' ');

describe('properties: what the gate cannot see into', () => {
  it('never lets an allow rule grant a chain with an opaque segment, and asks for it once command deny or ask rules exist', () => {
    fc.assert(
      fc.property(
        mixedChainArb,
        fc.subarray(ALLOW_POOL, { minLength: 1 }),
        fc.subarray(GUARD_POOL),
        fc.constantFrom<RuleList>('deny', 'ask'),
        (chain, allow, guards, list) => {
          const opaque = chain.some((c) => (OPAQUE_COMMANDS as readonly string[]).includes(c.command));
          const call = exec(chainText(chain));
          const rules = [...parse(allow, 'allow', 'owner'), ...parse(guards, list, 'global')];
          // Without the floor, so what is tested is opacity, not `git -c` or `curl` on the floor.
          const d = evaluateRules(call, rules, { floor: [] });
          if (opaque) expect(d.decision).not.toBe('allow');
          if (opaque && guards.length > 0) expect(['ask', 'deny']).toContain(d.decision);
          // Not vacuous: the same rules do grant plain chains.
          if (!opaque && guards.length === 0 && allow.includes('Tool(execute_command)'))
            expect(d.decision).toBe('allow');
        },
      ),
      { numRuns: 500 },
    );
  });
});

const FLOOR_COMMANDS = [
  'sudo ls',
  'kill -9 1',
  'git push --force',
  'rm -f x',
  'curl -s https://example.com',
  'npm publish',
  'nice rm x',
  'bash -c "ls"',
] as const;

const gateConfigArb = fc.record({
  permissionMode: fc.constantFrom<PermissionMode>('ask', 'approve-for-me', 'full-access'),
  stepApproval: fc.constantFrom<StepApproval>('none', 'non-read', 'all'),
  capabilityMode: fc.constantFrom<CapabilityMode>('read-write', 'read-only'),
  unattended: fc.boolean(),
});

const hooksArb = fc.array(
  fc.oneof(
    fc.constant<HookVerdict>({ hook: 'pass', verdict: 'pass' }),
    fc.constant<HookVerdict>({ hook: 'open', verdict: 'failed', reason: 'timed out', failClosed: false }),
  ),
  { maxLength: 2 },
);

describe('properties: decideToolCall', () => {
  it('never decides allow for a floor command, in any mode, whatever the allow rules, hooks or approvals', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...FLOOR_COMMANDS),
        fc.constantFrom(...PLAIN_COMMANDS, ''),
        fc.subarray([...RULE_POOL.filter((r) => !r.startsWith('Command(rm')), ...ALLOW_POOL]),
        gateConfigArb,
        hooksArb,
        fc.boolean(),
        (floorCommand, other, allow, cfg, hooks, requiresApproval) => {
          const call = exec(other ? `${other} && ${floorCommand}` : floorCommand);
          const d = decideToolCall({
            call,
            step: { id: 's', requiresApproval },
            config: cfg,
            rules: parse(allow, 'allow', 'owner'),
            hooks,
          });
          expect(d.decision).toBe(cfg.unattended || cfg.capabilityMode === 'read-only' ? 'deny' : 'ask');
        },
      ),
      { numRuns: 500 },
    );
  });

  it('never asks in an unattended run, and never loosens what the rules alone decide', () => {
    fc.assert(
      fc.property(
        callArb,
        rulesArb,
        gateConfigArb,
        hooksArb,
        fc.boolean(),
        (call, rules, cfg, hooks, requiresApproval) => {
          const d = decideToolCall({ call, step: { id: 's', requiresApproval }, config: cfg, rules, hooks });
          if (cfg.unattended) expect(d.decision).not.toBe('ask');
          const ruled = evaluateRules(call, rules).decision;
          if (ruled === 'deny') expect(d.decision).toBe('deny');
          if (ruled === 'ask')
            expect(d.decision).toBe(
              cfg.unattended || (cfg.capabilityMode === 'read-only' && call.effect !== 'read')
                ? 'deny'
                : 'ask',
            );
          if (d.decision === 'allow') expect(['allow', 'none']).toContain(ruled);
        },
      ),
      { numRuns: 500 },
    );
  });
});
