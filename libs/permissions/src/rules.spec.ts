import { matchesCall } from './evaluate';
import { parseMatcher, type Matcher, type ToolCall } from './matchers';
import { MAX_RULES_PER_LIST, describeRule, parseRules, type RuleLists } from './rules';

function matcher(text: string): Matcher {
  const r = parseMatcher(text);
  if (!r.ok) throw new Error(`expected ${text} to parse: ${r.message}`);
  return r.matcher;
}

function parseError(text: string): string {
  const r = parseMatcher(text);
  if (r.ok) throw new Error(`expected ${text} to be rejected, got ${JSON.stringify(r.matcher)}`);
  return r.message;
}

const lists = (partial: Partial<RuleLists>): RuleLists => ({ allow: [], ask: [], deny: [], ...partial });
const command = (c: string): ToolCall => ({
  tool: 'execute_command',
  effect: 'external',
  arguments: { command: c },
});
const tool = (
  name: string,
  effect: ToolCall['effect'] = 'read',
  args: Record<string, unknown> = {},
): ToolCall => ({
  tool: name,
  effect,
  arguments: args,
});
const fetch = (url: unknown): ToolCall => tool('web_fetch', 'external', { url });

describe('parseRules', () => {
  it('parses every list with scope and trimmed text', () => {
    const r = parseRules(
      lists({ allow: ['  Command(git status)  '], deny: ['Tool(x)'], ask: ['Effect(write)'] }),
      'owner',
    );
    expect(r).toEqual({
      ok: true,
      rules: [
        { list: 'deny', scope: 'owner', text: 'Tool(x)', matcher: { kind: 'tool', pattern: 'x' } },
        { list: 'ask', scope: 'owner', text: 'Effect(write)', matcher: { kind: 'effect', effect: 'write' } },
        {
          list: 'allow',
          scope: 'owner',
          text: 'Command(git status)',
          matcher: { kind: 'command', form: 'prefix', words: ['git', 'status'] },
        },
      ],
    });
  });

  it('skips blank and # lines but counts them in line numbers, and reports every bad line', () => {
    const r = parseRules(
      lists({
        allow: ['# comment', '', 'Command(git status)', 'Bash(ls)', '   ', 'Tool(a b)'],
        deny: ['Effect(delete)', '#Command(', 'Command(rm'],
      }),
      'global',
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map(({ list, line, rule }) => ({ list, line, rule }))).toEqual([
      { list: 'deny', line: 1, rule: 'Effect(delete)' },
      { list: 'deny', line: 3, rule: 'Command(rm' },
      { list: 'allow', line: 4, rule: 'Bash(ls)' },
      { list: 'allow', line: 6, rule: 'Tool(a b)' },
    ]);
    expect(r.errors[0]?.message).toMatch(/Effect\(read\), Effect\(write\) or Effect\(external\)/);
    expect(r.errors[1]?.message).toMatch(/unbalanced parentheses/);
    expect(r.errors[2]?.message).toMatch(/unknown rule type "Bash" \(did you mean Command\?\)/);
    expect(r.errors[3]?.message).toMatch(/one tool name or glob/);
  });

  it('limits rules per list (comments do not count) and characters per rule', () => {
    const many = Array.from({ length: MAX_RULES_PER_LIST + 2 }, (_, i) => `Tool(t${i})`);
    expect(parseRules(lists({ ask: ['# c', ...many.slice(0, MAX_RULES_PER_LIST)] }), 'owner').ok).toBe(true);
    const r = parseRules(lists({ ask: many, allow: [`Tool(${'a'.repeat(995)})`] }), 'owner');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toEqual([
      expect.objectContaining({
        list: 'ask',
        line: 501,
        message: expect.stringMatching(/more than 500 rules/),
      }),
      expect.objectContaining({
        list: 'allow',
        line: 1,
        message: expect.stringMatching(/1001 characters long/),
      }),
    ]);
  });

  it('names a rule as list, text and scope', () => {
    const r = parseRules(lists({ deny: ['Command(rm:*)'] }), 'global');
    expect(r.ok && describeRule(r.rules[0]!)).toBe('deny: Command(rm:*) (global)');
  });
});

describe('parseMatcher errors', () => {
  it.each([
    ['', /empty/],
    ['git status', /not a rule.*Command\(git status\)/],
    ['Command', /not a rule/],
    ['Command()', /Command\(\) is empty/],
    ['Command(  )', /empty/],
    ['Command(:*)', /names no command/],
    ['Command(git status', /never closed/],
    ['Command(git status))', /unbalanced|after the closing/],
    ['Command(git) x', /after the closing parenthesis/],
    ['Command(a && b)', /one simple command/],
    ['Command(a | b)', /one simple command/],
    ['Command(FOO=1 git)', /assignments/],
    ['Command(git > x)', /redirections/],
    ['Command(git "status)', /not a simple command: unbalanced double quote/],
    ['Command(for x)', /not a simple command/],
    ['Command(git * :*)', /either a trailing :\* or \* globs/],
    ['command(git)', /case-sensitive: did you mean Command/],
    ['Shell(ls)', /unknown rule type "Shell".*Command\(git status\), Command\(git:\*\), Tool/],
    ['Tool(excel_*, word_*)', /one rule per tool/],
    ['Effect(READ)', /not an effect/],
    ['Effect(delete)', /not an effect/],
    ['Mcp(github)', /names no tool; write Mcp\(github__\*\) or mcp__github/],
    ['Mcp(mcp__github__x)', /leave out the mcp__ prefix/],
    ['Mcp(git hub__x)', /one <server>__<tool>/],
    ['mcp__git*', /not an MCP rule/],
    ['mcp__', /not an MCP rule/],
    ['WebFetch(example.com)', /must name a domain/],
    ['WebFetch(domain:)', /empty|must name a domain/],
    ['WebFetch(domain:https://example.com)', /bare host name/],
    ['WebFetch(domain:example.com/path)', /bare host name/],
    ['WebFetch(domain:example.com:8080)', /bare host name/],
    ['WebFetch(domain:*.example.com)', /bare host name/],
    ['WebFetch(domain:user@example.com)', /bare host name/],
    ['Tool(x)\nTool(y)', /line break/],
  ])('rejects %j', (text, message) => {
    expect(parseError(text)).toMatch(message);
  });
});

describe('Command matchers', () => {
  it('parses prefix, legacy :* and glob forms with shell quoting', () => {
    expect(matcher('Command(git  status)')).toEqual({
      kind: 'command',
      form: 'prefix',
      words: ['git', 'status'],
    });
    expect(matcher('Command(git:*)')).toEqual({ kind: 'command', form: 'prefix', words: ['git'] });
    expect(matcher('Command(grep "a b":*)')).toEqual({
      kind: 'command',
      form: 'prefix',
      words: ['grep', 'a b'],
    });
    expect(matcher('Command(npm run *)')).toEqual({ kind: 'command', form: 'glob', pattern: 'npm run *' });
  });

  it.each([
    ['Command(git status)', 'git status', true],
    ['Command(git status)', 'git status --short', true],
    ['Command(git status)', "git 'status'", true],
    ['Command(git status)', 'git statusx', false],
    ['Command(git status)', 'git', false],
    ['Command(git status)', 'gitstatus', false],
    ['Command(git status)', 'git log && git status', true],
    ['Command(git:*)', 'git', true],
    ['Command(git:*)', 'git push --force', true],
    ['Command(git:*)', 'gitk', false],
    ['Command(git:*)', 'legit status', false],
    ['Command(npm run *)', 'npm run test', true],
    ['Command(npm run *)', 'npm run test -- --watch', true],
    ['Command(npm run *)', 'npm run', false],
    ['Command(npm run *)', 'npm install', false],
    ['Command(git * --force)', 'git push origin --force', true],
    ['Command(git * --force)', 'git push --force-with-lease', false],
    ['Command(*)', 'anything at all', true],
    ['Command(grep "a b")', "grep 'a b' file", true],
    ['Command(grep "a b")', 'grep a b', false],
  ])('%s on %j → %s', (rule, cmd, expected) => {
    expect(matchesCall(matcher(rule), command(cmd))).toBe(expected);
  });

  it('matches only execute_command calls with a string command', () => {
    expect(matchesCall(matcher('Command(git:*)'), tool('git'))).toBe(false);
    expect(
      matchesCall(matcher('Command(git:*)'), tool('execute_command', 'external', { command: ['git'] })),
    ).toBe(false);
  });

  it('sees through wrappers, paths and nested shells (hook and deny matching)', () => {
    const rm = matcher('Command(rm:*)');
    for (const c of [
      'sudo rm -rf /',
      'sudo -u root rm x',
      'env FOO=1 rm x',
      'nice -n 5 rm x',
      'timeout 5 rm x',
      'timeout -s KILL 5s rm x',
      'xargs rm',
      'xargs -0 -n 1 rm',
      'command rm x',
      'exec rm x',
      'nohup rm x',
      'time rm x',
      'FOO=1 rm x',
      '/bin/rm x',
      'RM x',
      'bash -c "rm -rf /"',
      "sh -lc 'cd /tmp && rm x'",
      'eval rm x',
      'find . -name x -exec rm {} \\;',
      'sudo env nice rm x',
    ])
      expect([c, matchesCall(rm, command(c))]).toEqual([c, true]);
    for (const c of ['echo rm', 'command -v rm', 'firm x', 'rmdir x', 'ls rm'])
      expect([c, matchesCall(rm, command(c))]).toEqual([c, false]);
  });

  it('matches git subcommands behind global options', () => {
    expect(matchesCall(matcher('Command(git push)'), command('git -C repo --no-pager push'))).toBe(true);
    expect(matchesCall(matcher('Command(git -c)'), command('git -C repo -c core.pager=sh log'))).toBe(true);
  });

  it('scans text the tokenizer refuses for the denied command', () => {
    expect(matchesCall(matcher('Command(rm:*)'), command('cat <<EOF | sh\nrm -rf /\nEOF'))).toBe(true);
    expect(matchesCall(matcher('Command(rm:*)'), command('for f in *; do rm "$f"; done'))).toBe(true);
    expect(matchesCall(matcher('Command(rm:*)'), command('for f in *; do echo "$f"; done'))).toBe(false);
  });
});

describe('Tool matchers', () => {
  it.each([
    ['Tool(excel_*)', 'excel_read', true],
    ['Tool(excel_*)', 'excel_', true],
    ['Tool(excel_*)', 'my_excel_read', false],
    ['Tool(excel_?ead)', 'excel_read', true],
    ['Tool(excel_?ead)', 'excel_rread', false],
    ['Tool(browser_navigate)', 'browser_navigate', true],
    ['Tool(browser_navigate)', 'browser_navigate2', false],
    ['Tool(*)', 'mcp__github__x', true],
  ])('%s on %s → %s', (rule, name, expected) => {
    expect(matchesCall(matcher(rule), tool(name))).toBe(expected);
  });
});

describe('Effect matchers', () => {
  it('matches the declared effect only', () => {
    expect(matchesCall(matcher('Effect(read)'), tool('x', 'read'))).toBe(true);
    expect(matchesCall(matcher('Effect(read)'), tool('x', 'write'))).toBe(false);
    expect(matchesCall(matcher('Effect(external)'), command('ls'))).toBe(true);
  });
});

describe('Mcp matchers', () => {
  it.each([
    ['Mcp(github__*)', 'mcp__github__create_issue', true],
    ['Mcp(github__*)', 'mcp__github_enterprise__create_issue', false],
    ['Mcp(github__*)', 'github__create_issue', false],
    ['Mcp(github__create_*)', 'mcp__github__create_issue', true],
    ['Mcp(github__create_*)', 'mcp__github__delete_issue', false],
    ['Mcp(*__search)', 'mcp__docs__search', true],
    ['mcp__github', 'mcp__github__create_issue', true],
    ['mcp__github', 'mcp__github', false],
    ['mcp__github', 'mcp__githubx__create_issue', false],
    ['mcp__github', 'mcp__gitlab__create_issue', false],
    ['mcp__github__create_issue', 'mcp__github__create_issue', true],
    ['mcp__github__create_issue', 'mcp__github__create_issues', false],
  ])('%s on %s → %s', (rule, name, expected) => {
    expect(matchesCall(matcher(rule), tool(name))).toBe(expected);
  });

  it('parses the bare forms into the same globs', () => {
    expect(matcher('mcp__github')).toEqual({ kind: 'mcp', pattern: 'github__*' });
    expect(matcher('mcp__github__x')).toEqual({ kind: 'mcp', pattern: 'github__x' });
  });
});

describe('WebFetch matchers', () => {
  const example = matcher('WebFetch(domain:example.com)');

  it('normalises the rule domain', () => {
    expect(matcher('WebFetch(domain:EXAMPLE.com.)')).toEqual({ kind: 'webfetch', domain: 'example.com' });
    expect(matcher('WebFetch(domain:bücher.de)')).toEqual({ kind: 'webfetch', domain: 'xn--bcher-kva.de' });
  });

  it.each([
    ['https://example.com/', true],
    ['http://example.com/page?q=1', true],
    ['https://a.example.com/x', true],
    ['https://a.b.example.com', true],
    ['https://EXAMPLE.COM/', true],
    ['https://example.com./', true],
    ['https://example.com:8443/', true],
    ['https://badexample.com/', false],
    ['https://example.com.evil.net/', false],
    ['https://evil.net/example.com', false],
    ['https://evil.net/?u=https://example.com', false],
    ['https://example.com@evil.net/', false],
    ['https://evil.net\\@example.com/', false],
    ['https://evil.net#@example.com', false],
    ['https://examp%6Ce.com/', true],
    ['ftp://example.com/', false],
    ['file:///example.com', false],
    ['example.com', false],
    ['not a url', false],
    ['', false],
    [42, false],
    [undefined, false],
  ])('%j → %s', (url, expected) => {
    expect(matchesCall(example, fetch(url))).toBe(expected);
  });

  it('compares internationalised hosts in punycode either way', () => {
    const books = matcher('WebFetch(domain:bücher.de)');
    expect(matchesCall(books, fetch('https://www.bücher.de/'))).toBe(true);
    expect(matchesCall(books, fetch('https://www.xn--bcher-kva.de/'))).toBe(true);
    expect(matchesCall(books, fetch('https://bucher.de/'))).toBe(false);
  });

  it('applies to web_fetch only', () => {
    expect(matchesCall(example, tool('browser_navigate', 'external', { url: 'https://example.com' }))).toBe(
      false,
    );
  });
});
