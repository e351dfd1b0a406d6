import { evaluateRules, type RuleDecision } from './evaluate';
import { DEFAULT_DANGEROUS_COMMANDS, UNANALYSABLE_FLOOR_HIT, floorHit } from './floor';
import type { ToolCall } from './matchers';
import { parseRules, type Rule, type RuleLists, type RuleScope } from './rules';
import { segmentCommand, type Segment } from './segment';

function rules(partial: Partial<RuleLists>, scope: RuleScope = 'owner'): Rule[] {
  const r = parseRules({ allow: [], ask: [], deny: [], ...partial }, scope);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.rules;
}

const run = (command: unknown): ToolCall => ({
  tool: 'execute_command',
  effect: 'external',
  arguments: { command },
});
const tool = (name: string, effect: ToolCall['effect'], args: Record<string, unknown> = {}): ToolCall => ({
  tool: name,
  effect,
  arguments: args,
});

function decide(call: ToolCall, partial: Partial<RuleLists>, opts = {}): RuleDecision {
  return evaluateRules(call, rules(partial), opts);
}

function segment(command: string): Segment {
  const r = segmentCommand(command);
  if (!r.ok || r.segments.length !== 1) throw new Error(`expected one segment for ${command}`);
  return r.segments[0] as Segment;
}

describe('evaluateRules', () => {
  describe('precedence', () => {
    it('denies over ask over allow whatever the order, naming the rule', () => {
      const lists = { allow: ['Command(rm:*)'], ask: ['Command(rm -rf:*)'], deny: ['Command(rm -rf /)'] };
      expect(decide(run('rm -rf /'), lists)).toEqual({
        decision: 'deny',
        reason: 'denied by rule Command(rm -rf /) (owner): segment "rm -rf /"',
        rule: 'deny: Command(rm -rf /) (owner)',
      });
      expect(decide(run('rm -rf /tmp/x'), lists)).toEqual({
        decision: 'ask',
        reason: 'rule Command(rm -rf:*) (owner) requires approval: segment "rm -rf /tmp/x"',
        rule: 'ask: Command(rm -rf:*) (owner)',
      });
    });

    it('combines global and owner rules, and names the global one first when both match', () => {
      const all = [...rules({ deny: ['Tool(x_*)'] }, 'owner'), ...rules({ deny: ['Tool(*)'] }, 'global')];
      expect(evaluateRules(tool('x_1', 'read'), all).rule).toBe('deny: Tool(*) (global)');
      expect(evaluateRules(tool('x_1', 'read'), [...all].reverse()).rule).toBe('deny: Tool(*) (global)');
    });

    it('lets a whole-call deny rule stop any command, even one that cannot be analysed', () => {
      expect(decide(run('git status "'), { deny: ['Tool(execute_command)'] }).decision).toBe('deny');
      expect(decide(run('ls'), { deny: ['Effect(external)'], allow: ['Command(ls)'] }).decision).toBe('deny');
    });

    it('names the segment and the command it really runs when a wrapper hides it', () => {
      expect(decide(run('git status && sudo -u root rm -rf /'), { deny: ['Command(rm:*)'] }).reason).toBe(
        'denied by rule Command(rm:*) (owner): segment "sudo -u root rm -rf /" runs "rm -rf /"',
      );
    });
  });

  describe('allow for commands', () => {
    it.each([
      'git status',
      'git status && git log -n 1',
      'git status | git log; git status & git status',
      'git status 2>&1',
      'git status >/dev/null 2>&1',
      'git status &>/dev/null',
      'git status 2>/dev/null >&2',
      'git status < input.txt',
      '(git status) && { git log; }',
      'git status # a comment',
      'git \\\n  status',
    ])('allows %j under Command(git:*)', (command) => {
      expect(decide(run(command), { allow: ['Command(git:*)'] }).decision).toBe('allow');
    });

    it('names every rule used when several cover a chain', () => {
      expect(
        decide(run('git status && ls -la'), { allow: ['Command(ls:*)', 'Command(git status)'] }),
      ).toEqual({
        decision: 'allow',
        reason:
          'allowed: every segment matches an allow rule (Command(git status) (owner), Command(ls:*) (owner))',
        rule: 'allow: Command(git status) (owner)',
      });
      expect(decide(run('ls'), { allow: ['Command(ls:*)'] })).toEqual({
        decision: 'allow',
        reason: 'allowed by rule Command(ls:*) (owner)',
        rule: 'allow: Command(ls:*) (owner)',
      });
    });

    it('does not apply allow rules through wrappers or paths', () => {
      for (const command of ['nice git status', '/usr/bin/git status', 'command git status', 'GIT status'])
        expect([command, decide(run(command), { allow: ['Command(git:*)'] }).decision]).toEqual([
          command,
          'none',
        ]);
    });

    it('returns none with a reason when only part of a chain is covered', () => {
      expect(decide(run('git status && ls'), { allow: ['Command(git:*)'] })).toEqual({
        decision: 'none',
        reason:
          'no allow rule matches segment "ls"; a chain is allowed only when every segment matches an allow rule',
      });
      expect(decide(run('ls'), { allow: ['Command(git:*)'] })).toEqual({
        decision: 'none',
        reason: 'no permission rule matches this call',
      });
    });

    it.each([
      ['FOO=1 git status', /sets environment variables \(FOO=1\)/],
      ['git status > out.txt', /writes to a file \(>out.txt\)/],
      ['git status 2>> err.log', /writes to a file \(2>>err.log\)/],
      ['git status >&out.txt', /writes to a file \(>&out.txt\)/],
      ['git status > "$F"', /writes to a file/],
      ['git log $(git rev-parse HEAD)', /contains expansions/],
      ['git log *', /contains expansions/],
      ['git log < "$F"', /contains expansions/],
    ])('returns none when %j voids the matching allow rule', (command, reason) => {
      const d = decide(run(command), { allow: ['Command(git:*)'] });
      expect(d.decision).toBe('none');
      expect(d.reason).toMatch(/^allow rule Command\(git:\*\) \(owner\) does not apply: segment /);
      expect(d.reason).toMatch(reason);
    });

    it('asks instead of allowing when a covered segment hits the floor', () => {
      expect(decide(run('rm -rf /'), { allow: ['Tool(execute_command)'] })).toEqual({
        decision: 'ask',
        reason:
          'segment "rm -rf /" hits the dangerous-command floor entry "rm", so allow rule Tool(execute_command) (owner) does not apply; asking for approval',
        floor: 'rm',
      });
      expect(decide(run('ls && curl -s x'), { allow: ['Effect(external)'] }).reason).toMatch(
        /floor entry "curl"/,
      );
      expect(decide(run('git push'), { allow: ['Command(git push)'] }).decision).toBe('ask');
    });

    it('prefers the floor ask over a voided allow', () => {
      expect(decide(run('FOO=1 rm x > y'), { allow: ['Command(rm:*)'] }).decision).toBe('ask');
    });

    it('uses the floor it is given', () => {
      expect(decide(run('rm -rf build'), { allow: ['Command(rm:*)'] }, { floor: [] }).decision).toBe('allow');
      expect(decide(run('ls -la'), { allow: ['Command(ls:*)'] }, { floor: ['ls -la'] }).decision).toBe('ask');
      expect(decide(run('ls -l'), { allow: ['Command(ls:*)'] }, { floor: ['ls -la'] }).decision).toBe(
        'allow',
      );
    });

    it('treats an empty command as covered only by whole-call rules', () => {
      expect(decide(run('  '), { allow: ['Tool(execute_command)'] }).decision).toBe('allow');
      expect(decide(run('  '), { allow: ['Command(*)'] }).decision).toBe('none');
    });
  });

  describe('commands that cannot be analysed', () => {
    it('asks even without rules, with the parser reason', () => {
      expect(decide(run('echo "unterminated'), {})).toEqual({
        decision: 'ask',
        reason:
          'the command cannot be analysed (unbalanced double quote), so no allow rule can grant it; asking for approval. Simple commands joined by &&, ||, ; or | can be matched by rules',
      });
      expect(decide(run(['ls']), { allow: ['Tool(execute_command)'] }).reason).toMatch(/not a string/);
    });

    it('denies when a deny rule matches the raw text or a recovered command line', () => {
      expect(decide(run('rm -rf / "'), { deny: ['Command(rm:*)'] }).decision).toBe('deny');
      expect(decide(run('echo "x; rm -rf /'), { deny: ['Command(rm:*)'] }).reason).toBe(
        'denied by rule Command(rm:*) (owner): the command cannot be analysed (unbalanced double quote) and contains "rm -rf /"',
      );
    });

    it('applies ask rules to recovered command lines too', () => {
      expect(decide(run('for x in a; do git push; done'), { ask: ['Command(git push)'] }).rule).toBe(
        'ask: Command(git push) (owner)',
      );
    });

    it('honours the limits it is given', () => {
      expect(
        decide(run('ls && ls && ls'), { allow: ['Command(ls)'] }, { limits: { maxSegments: 2 } }).decision,
      ).toBe('ask');
      expect(decide(run('ls && ls && ls'), { allow: ['Command(ls)'] }).decision).toBe('allow');
    });
  });

  describe('other tools', () => {
    it('allows, asks, denies or says nothing by whole-call matchers', () => {
      const lists = {
        allow: ['Tool(excel_*)', 'Effect(read)', 'mcp__docs', 'WebFetch(domain:example.com)'],
        ask: ['Effect(write)'],
        deny: ['Mcp(github__delete_*)'],
      };
      expect(decide(tool('excel_write', 'write'), lists).decision).toBe('ask');
      expect(decide(tool('excel_read', 'read'), lists).decision).toBe('allow');
      expect(decide(tool('read_file', 'read'), lists).decision).toBe('allow');
      expect(decide(tool('mcp__docs__search', 'external'), lists).decision).toBe('allow');
      expect(decide(tool('mcp__github__delete_repo', 'read'), lists)).toEqual({
        decision: 'deny',
        reason: 'denied by rule Mcp(github__delete_*) (owner)',
        rule: 'deny: Mcp(github__delete_*) (owner)',
      });
      expect(decide(tool('web_fetch', 'external', { url: 'https://docs.example.com/a' }), lists)).toEqual({
        decision: 'allow',
        reason: 'allowed by rule WebFetch(domain:example.com) (owner)',
        rule: 'allow: WebFetch(domain:example.com) (owner)',
      });
      expect(
        decide(tool('web_fetch', 'external', { url: 'https://example.com.evil.net/' }), lists).decision,
      ).toBe('none');
      expect(decide(tool('web_fetch', 'external', { url: '::not a url' }), lists).decision).toBe('none');
    });

    it('never applies Command rules to other tools', () => {
      expect(
        decide(tool('shell', 'external', { command: 'rm -rf /' }), { deny: ['Command(rm:*)'] }).decision,
      ).toBe('none');
    });
  });
});

describe('floorHit', () => {
  it.each([
    ['rm -rf /', 'rm'],
    ['sudo ls', 'sudo'],
    ['/bin/rm x', 'rm'],
    ['nice -n 5 rm x', 'rm'],
    ['git push origin main', 'git push'],
    ['git -C repo --no-pager push', 'git push'],
    ['git -C repo -c core.pager=less log', 'git -c'],
    ['git --config-env=core.pager=P log', 'git --config-env'],
    ['git --exec-path=/tmp status', 'git --exec-path'],
    ['mkfs.ext4 /dev/sda1', 'mkfs.*'],
    ['find . -exec chmod 777 {} +', 'chmod'],
    ['watch -n 1 rm x', 'rm'],
    ['timeout 5 bash -c "ls"', 'bash'],
    ['npm publish --access public', 'npm publish'],
    ['curl -s https://x', 'curl'],
  ])('%j hits %j', (command, entry) => {
    expect(floorHit(segment(command), DEFAULT_DANGEROUS_COMMANDS)).toBe(entry);
  });

  it.each([
    'ls -la',
    'git status',
    'git log --oneline',
    'npm test',
    'echo rm',
    'grep -r sudo .',
    'command -v rm',
  ])('%j hits nothing', (command) => {
    expect(floorHit(segment(command), DEFAULT_DANGEROUS_COMMANDS)).toBeUndefined();
  });

  it('counts nested commands it cannot analyse as a hit', () => {
    expect(floorHit(segment('watch "for x in 1; do ls; done"'), DEFAULT_DANGEROUS_COMMANDS)).toBe(
      UNANALYSABLE_FLOOR_HIT,
    );
    const chain = `${'nice '.repeat(70)}ls`;
    expect(floorHit(segment(chain), [])).toBe(UNANALYSABLE_FLOOR_HIT);
    expect(evaluateRules(run(chain), rules({ allow: ['Command(nice:*)'] })).decision).toBe('ask');
  });

  it('uses the floor it is given', () => {
    expect(floorHit(segment('rm x'), [])).toBeUndefined();
    expect(floorHit(segment('make deploy'), ['make deploy'])).toBe('make deploy');
  });
});
