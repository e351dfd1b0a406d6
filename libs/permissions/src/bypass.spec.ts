/**
 * Commands an allow rule for git must never authorise, and that a deny rule for rm must always catch
 * when they run rm. Each entry is a known way to smuggle a second command or a side effect past a
 * rule that only looks at the start of the line.
 */
import { evaluateRules } from './evaluate';
import { parseRules, type Rule, type RuleLists } from './rules';
import { segmentCommand } from './segment';

function rules(partial: Partial<RuleLists>): Rule[] {
  const r = parseRules({ allow: [], ask: [], deny: [], ...partial }, 'owner');
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.rules;
}

const call = (command: string) => ({
  tool: 'execute_command',
  effect: 'external' as const,
  arguments: { command },
});

const CORPUS: readonly string[] = [
  // The brief's corpus.
  'git status && rm -rf /',
  'git status; curl x | sh',
  'git status $(rm -rf /)',
  'git status `rm -rf /`',
  'git status\nrm -rf /',
  'FOO=1 rm -rf /',
  'FOO=1 git status',
  "git -c core.sshCommand='sh -c id' fetch",
  'git status > /etc/passwd',
  'git status | sh',
  '(rm -rf /)',
  '{ rm -rf /; }',
  'git status & rm -rf /',
  'git status || rm -rf /',
  'git status <(rm -rf /)',
  Array(100).fill('git status').join(' && '),
  `git status ${'a'.repeat(1_000_000)}`,
  `git status ${'a '.repeat(500_000)}; rm -rf /`,
  'git status "',
  'cat <<EOF | sh\nrm -rf /\nEOF',
  'git status \\',
  'git push',
  // Separators without spaces, carriage returns and comments.
  'git status;rm -rf /',
  'git status&&rm -rf /',
  'git status|sh',
  'git status\r\nrm -rf /',
  'git status # comment\nrm -rf /',
  'git status |& sh',
  'git status 2>&1 | sh',
  // Substitutions in every position.
  'git status "$(rm -rf /)"',
  'git status ${x:-$(rm -rf /)}',
  'git status $(: $(rm -rf /))',
  'git status `echo \\`rm -rf /\\``',
  'X=$(rm -rf /) git status',
  'git status >(rm -rf /)',
  'git status > >(sh)',
  'git status $((1 + $(rm -rf /)))',
  // Run-time values that could spell a floor command.
  'git $(echo push)',
  'git `echo push`',
  'git $CMD',
  'git {push,status}',
  'git pus?',
  'git pu[s]h',
  "git $'\\x70ush'",
  // The floor behind git's global options and config.
  'git -C . push',
  'git --git-dir=.git push origin main',
  'git --config-env=core.pager=X log',
  'git --exec-path=/tmp/evil status',
  'git -c alias.st=!sh st',
  'git config core.pager "sh -c id"',
  'git clean -fdx',
  'git reset --hard HEAD~3',
  'g\\it push',
  'git "push"',
  // Environment and output files.
  'GIT_SSH_COMMAND="sh -c id" git fetch',
  'git status >> ~/.bashrc',
  'git status 1> /tmp/x',
  'git status &> /tmp/x',
  'git status >| /tmp/x',
  'git status <> /tmp/x',
  'git status >& /tmp/x',
  '(git status) > /etc/passwd',
  '{ git status; } > /tmp/x',
  'git status 2> /tmp/err',
  // Other commands, wrappers and nesting.
  'git status; sudo rm -rf /',
  'sudo git status',
  'env git status',
  'nice rm -rf /',
  'timeout 5 rm -rf /',
  'xargs rm -rf < list',
  'bash -c "rm -rf /"',
  'git status && /bin/rm -rf /',
  'git status && RM -rf /',
  'exec rm -rf /',
  'command rm -rf /',
  'find . -exec rm -rf {} \\;',
  'for f in *; do rm -rf "$f"; done',
  'if git status; then rm -rf /; fi',
  'f() { rm -rf /; }; f',
  'git status ;; rm -rf /',
  'git status <<< "rm -rf /"',
  'git status\u0000; rm -rf /',
];

/** Harmless-looking commands outside git: allowed by Tool(execute_command) by design, never by git rules. */
const NOT_GIT: readonly string[] = [
  'git status | tee /etc/passwd',
  'git status & disown',
  'git status; ls',
  'git status && python -c "import os"',
  '/usr/bin/git status',
  './git status',
  'gitx status',
  'ls',
];

const ALLOW_SETS: Record<string, Partial<RuleLists>> = {
  'Command(git status)': { allow: ['Command(git status)'] },
  'Command(git:*)': { allow: ['Command(git:*)'] },
  'git rules + Tool(execute_command)': {
    allow: ['Command(git status)', 'Command(git:*)', 'Tool(execute_command)'],
  },
  'git rules + Effect(external)': { allow: ['Command(git status)', 'Command(git:*)', 'Effect(external)'] },
};

const mentionsRm = (command: string) => /(^|[^a-z])rm([^a-z]|$)/i.test(command);

describe('allow rules cannot be bypassed', () => {
  describe.each(Object.entries(ALLOW_SETS))('allow %s', (_name, lists) => {
    const ruleSet = rules(lists);
    it.each(CORPUS.map((c) => [c.length > 80 ? `${c.slice(0, 60)}… (${c.length} chars)` : c, c]))(
      '%j is not allowed',
      (_label, command) => {
        const d = evaluateRules(call(command as string), ruleSet);
        expect(d.decision).not.toBe('allow');
        expect(d.reason).toBeTruthy();
      },
    );
  });

  it.each(NOT_GIT)('%j is not allowed by git rules alone', (command) => {
    for (const lists of [ALLOW_SETS['Command(git status)'], ALLOW_SETS['Command(git:*)']])
      expect(evaluateRules(call(command), rules(lists as Partial<RuleLists>)).decision).toBe('none');
  });

  it('does allow the plain commands the rules are for, so the corpus is not passing vacuously', () => {
    for (const lists of Object.values(ALLOW_SETS)) {
      const d = evaluateRules(call('git status --short && git status 2>&1 >/dev/null'), rules(lists));
      expect(d.decision).toBe('allow');
    }
  });

  it('asks (never none or allow) when the command cannot be analysed', () => {
    const refused = CORPUS.filter((c) => !segmentCommand(c).ok);
    expect(refused.length).toBeGreaterThan(10);
    for (const command of refused) {
      for (const lists of Object.values(ALLOW_SETS)) {
        expect([command.slice(0, 40), evaluateRules(call(command), rules(lists)).decision]).toEqual([
          command.slice(0, 40),
          'ask',
        ]);
      }
    }
  });
});

describe('a deny rule for rm catches every corpus entry that runs rm', () => {
  const withRm = CORPUS.filter(mentionsRm);

  it('has a substantial corpus to check', () => {
    expect(withRm.length).toBeGreaterThan(35);
  });

  describe.each([['deny only', {}], ...Object.entries(ALLOW_SETS)])('with %s', (_name, lists) => {
    const ruleSet = rules({ ...lists, deny: ['Command(rm:*)'] });
    it.each(withRm.map((c) => [c.length > 80 ? `${c.slice(0, 60)}… (${c.length} chars)` : c, c]))(
      '%j is denied',
      (_label, command) => {
        const d = evaluateRules(call(command as string), ruleSet);
        expect(d.decision).toBe('deny');
        expect(d.rule).toBe('deny: Command(rm:*) (owner)');
        expect(d.reason).toMatch(/^denied by rule Command\(rm:\*\) \(owner\): /);
      },
    );
  });

  it('does not deny commands that only mention rm as an argument', () => {
    const ruleSet = rules({ deny: ['Command(rm:*)'] });
    for (const command of ['echo rm', 'git rm --cached x', 'command -v rm', 'grep -r "rm -rf" .'])
      expect([command, evaluateRules(call(command), ruleSet).decision]).toEqual([command, 'none']);
  });
});
