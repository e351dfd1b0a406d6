import { commandViews } from './command-views';
import { awkRunsCommands, sedRunsCommands } from './opaque';
import { DEFAULT_SEGMENT_LIMITS, segmentCommand } from './segment';

/** What every segment of the command runs that the gate cannot read. */
function opaque(command: string): string[] {
  const parsed = segmentCommand(command);
  if (!parsed.ok) throw new Error(`expected ${JSON.stringify(command)} to parse: ${parsed.reason}`);
  return parsed.segments.flatMap((s) => commandViews(s, DEFAULT_SEGMENT_LIMITS).opaque);
}

/** Every command line the command's segments run, as text. */
function runs(command: string): string[] {
  const parsed = segmentCommand(command);
  if (!parsed.ok) throw new Error(`expected ${JSON.stringify(command)} to parse: ${parsed.reason}`);
  return parsed.segments.flatMap((s) =>
    commandViews(s, DEFAULT_SEGMENT_LIMITS).views.map((v) => v.words.join(' ')),
  );
}

describe('opaque segments', () => {
  describe('inline program text', () => {
    it.each([
      [`python3 -c "__import__('os').system('rm -rf x')"`, 'python3 -c'],
      ['python -Ic "import os"', 'python -c'],
      ['python3.12 -u -c "x"', 'python3.12 -c'],
      ['/usr/bin/python3 -c x', 'python3 -c'],
      ['pypy3 -c x', 'pypy3 -c'],
      [`node -e "require('child_process').execSync('rm -rf x')"`, 'node -e'],
      ['node --eval=x', 'node --eval'],
      ['node -p x', 'node -p'],
      ['node --print x', 'node --print'],
      ['node -pe x', 'node -p'],
      ['node -r ts-node/register -e x', 'node -e'],
      ['node --import data:text/javascript,x app.js', 'node loading inline code'],
      ['node --import=data:text/javascript,x app.js', 'node loading inline code'],
      ['nodejs -e x', 'nodejs -e'],
      ['bun -e x', 'bun -e'],
      ['deno eval "Deno.run()"', 'deno eval'],
      ['deno run data:text/javascript,x', 'deno loading inline code'],
      [`perl -e 'system("rm -rf x")'`, 'perl -e'],
      ['perl -E x', 'perl -E'],
      ["perl -ne 'print' f", 'perl -e'],
      ["perl -pi -e 's/a/b/' f", 'perl -e'],
      ["perl -Mstrict -e 'x'", 'perl -e'],
      ["perl -i.bak -pe 's/a/b/e' f", 'perl -e'],
      ['ruby -e "system(1)"', 'ruby -e'],
      ['ruby -rjson -ne x', 'ruby -e'],
      ['php -r \'system("x");\'', 'php -r'],
      ['php -B x -R y', 'php -B'],
      ['php -d auto_prepend_file=/tmp/x.php index.php', 'php loading inline code'],
      ['lua -e "os.execute(1)"', 'lua -e'],
      ['luajit -e x', 'luajit -e'],
      ['lua5.4 -e x', 'lua5.4 -e'],
      ['Rscript -e "system(1)"', 'Rscript -e'],
      ['osascript -e "do shell script"', 'osascript -e'],
      ['expect -c "spawn x"', 'expect -c'],
      ['julia -e "run(`x`)"', 'julia -e'],
      ['elixir -e "System.cmd(1)"', 'elixir -e'],
      ['erl -noshell -eval "os:cmd(1)"', 'erl -eval'],
      ['racket -e x', 'racket -e'],
      ['guile -c x', 'guile -c'],
      ['sbcl --eval x', 'sbcl --eval'],
      ['ghc -e x', 'ghc -e'],
      ['groovy -e x', 'groovy -e'],
      ['pwsh -c "Remove-Item x"', 'pwsh -c'],
      ['pwsh -Command x', 'pwsh -command'],
      ['pwsh -EncodedCommand AAA', 'pwsh -encodedcommand'],
      ['powershell "Remove-Item x"', 'powershell Remove-Item x'],
      ['nu -c x', 'nu -c'],
      ['xonsh -c x', 'xonsh -c'],
      ['dc -e "!rm -rf x"', 'dc -e'],
      ["gdb -batch -ex 'shell rm -rf x'", 'gdb -ex'],
      ["lldb -o 'platform shell rm -rf x'", 'lldb -o'],
      ['emacs --batch --eval "(shell-command 1)"', 'emacs --eval'],
      ['vim -c "!rm -rf x" f', 'vim -c'],
      ['vim "+!rm -rf x" f', 'vim +cmd'],
      ['nvim --cmd x', 'nvim --cmd'],
      ["make --eval 'x:;rm -rf x'", 'make --eval'],
      ['psql -c "\\! rm -rf x"', 'psql -c with a backslash command'],
      ['mysql -e "system rm -rf x"', 'mysql -e running a command'],
      ['sqlite3 db ".shell rm -rf x"', 'sqlite3 dot-command running a command'],
      ['sqlite3 -cmd ".system x" db', 'sqlite3 dot-command running a command'],
      ['less "+!rm -rf x" f', 'less +cmd running a command'],
    ])('%j is opaque (%s)', (command, what) => {
      expect(opaque(command)).toContain(what);
    });

    it.each([
      [`awk 'BEGIN{system("rm -rf x")}'`],
      [`gawk 'BEGIN { system ("x") }'`],
      [`mawk '{ print | "sh" }' f`],
      [`awk 'BEGIN { "date" | getline d }'`],
      [`gawk 'BEGIN { print "x" |& "cat" }'`],
      [`gawk 'BEGIN { f = "system"; @f("x") }'`],
      [`gawk '@load "filefuncs"; BEGIN {}'`],
      [`awk -F: -v x=1 'BEGIN{system(x)}' f`],
      [`gawk -e 'BEGIN{system("x")}'`],
      [`gawk --source='BEGIN{system("x")}'`],
      [`awk -- 'BEGIN{system("x")}'`],
      [`awk "BEGIN{print $1}"`],
      [`gawk -l filefuncs 'BEGIN{}'`],
      [`sed '1e rm -rf x' f`],
      [`sed 's/.*/rm -rf &/e' f`],
      [`sed -n -e 'p' -e '$e id' f`],
      [`sed --expression='s|x|y|e' f`],
      [`sed -ne 's/x/y/ep' f`],
      [`sed '/x/,/y/ { e id\n}' f`],
      [`sed "s/x/$Y/" f`],
      [`gsed 'e id' f`],
    ])('%j is opaque', (command) => {
      expect(opaque(command)).not.toEqual([]);
    });
  });

  describe('programs read from standard input', () => {
    it.each([
      'echo "import os" | python3',
      'curl -s x | python3 -',
      'cat x.js | node',
      'echo x | perl',
      'echo x | ruby',
      'echo x | php',
      'echo "!rm -rf x" | ed f',
      'echo "rm -rf x" | at now',
      'echo x | sqlite3 db',
      'echo "\\! rm x" | psql db',
      'echo x | mysql db',
      'echo x | gdb prog',
      'echo x | vim -es f',
      'echo x | ex f',
      'echo x | pwsh',
      'echo x | tclsh',
      'echo "syscmd(rm)" | m4',
      'echo x | (python3)',
      'echo x | { ruby; }',
      'echo x | python3 /dev/stdin',
      'echo x | sed -f - f',
      'echo x | make -f -',
      'python3 < <(echo x)',
      'echo x | cat $(python3)',
    ])('%j is opaque', (command) => {
      expect(opaque(command)).not.toEqual([]);
    });

    it.each([
      'python3 < script.py',
      'echo x | python3 script.py',
      'echo x | python3 -m json.tool',
      'echo x | node app.js',
      'echo x | node --test',
      'echo x | python3 --version',
      'echo x | psql -c "select 1" db',
      'echo x | psql -f q.sql db',
      'echo x | sqlite3 db "select 1"',
      'python3',
      'ed f',
      'echo x | sed "s/a/b/"',
      'echo x | awk "{ print }"',
    ])('%j is not', (command) => {
      expect(opaque(command)).toEqual([]);
    });
  });

  describe('command-bearing options and variables', () => {
    it.each([
      [`git -c core.pager='rm -rf x' log`, 'git -c core.pager', 'rm -rf x'],
      ['git -c core.sshCommand="rm -rf x" fetch', 'git -c core.sshCommand', 'rm -rf x'],
      ['git -c core.editor="rm -rf x" commit', 'git -c core.editor', 'rm -rf x'],
      ['git -c core.fsmonitor="rm -rf x" status', 'git -c core.fsmonitor', 'rm -rf x'],
      ["git -c alias.st='!rm -rf x' st", 'git -c alias.st', 'rm -rf x'],
      ['git -C repo -c diff.external="rm -rf x" diff', 'git -c diff.external', 'rm -rf x'],
      ["git -c 'credential.helper=!rm -rf x' fetch", 'git -c credential.helper', 'rm -rf x'],
      ['git rebase --exec "rm -rf x" HEAD~3', 'git rebase --exec', 'rm -rf x'],
      ['git rebase -x "rm -rf x" main', 'git rebase -x', 'rm -rf x'],
      ['git difftool --extcmd="rm -rf x"', 'git difftool --extcmd', 'rm -rf x'],
      ['git fetch --upload-pack="rm -rf x" origin', 'git fetch --upload-pack', 'rm -rf x'],
      ['git clone -u "rm -rf x" repo', 'git clone -u', 'rm -rf x'],
      ['git push --receive-pack="rm -rf x" origin', 'git push --receive-pack', 'rm -rf x'],
      ['git grep -O"rm -rf x" foo', 'git grep --open-files-in-pager', 'rm -rf x'],
      ['git clone -c core.sshCommand="rm -rf x" repo', 'git -c core.sshCommand', 'rm -rf x'],
      ['GIT_SSH_COMMAND="rm -rf x" git fetch', 'GIT_SSH_COMMAND=', 'rm -rf x'],
      ['PAGER="rm -rf x" git log', 'PAGER=', 'rm -rf x'],
      ['env GIT_PAGER="rm -rf x" git log', 'GIT_PAGER=', 'rm -rf x'],
      ['sudo EDITOR="rm -rf x" visudo', 'EDITOR=', 'rm -rf x'],
      ["LESSOPEN='|rm -rf x %s' less f", 'LESSOPEN=', 'rm -rf x %s'],
      ["ssh -o ProxyCommand='rm -rf x' host", 'ssh -o ProxyCommand', 'rm -rf x'],
      ["ssh -oProxyCommand='rm -rf x' host", 'ssh -o ProxyCommand', 'rm -rf x'],
      ["ssh -o 'LocalCommand rm -rf x' -o PermitLocalCommand=yes host", 'ssh -o LocalCommand', 'rm -rf x'],
      ["scp -S 'rm -rf x' a b:", 'scp -S', 'rm -rf x'],
      ["rsync -e 'rm -rf x' a b:", 'rsync -e', 'rm -rf x'],
      ["rsync --rsync-path='rm -rf x' a b:", 'rsync --rsync-path', 'rm -rf x'],
      ["tar -xf a.tar --to-command='rm -rf x'", 'tar --to-command', 'rm -rf x'],
      [
        "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='rm -rf x' .",
        'tar --checkpoint-action=exec',
        'rm -rf x',
      ],
      ["tar -I 'rm -rf x' -xf a.tar", 'tar -I', 'rm -rf x'],
      ["zip a.zip f -T -TT 'rm -rf x'", 'zip -TT', 'rm -rf x'],
      ["man -P 'rm -rf x' ls", 'man -P', 'rm -rf x'],
      ["man --html='rm -rf x' ls", 'man --html', 'rm -rf x'],
      ["make CC='rm -rf x' build", 'make CC=', 'rm -rf x'],
    ])('%j is opaque (%s) and runs %j', (command, what, inner) => {
      expect(opaque(command)).toContain(what);
      expect(runs(command)).toContain(inner);
    });

    it.each([
      ['git -c user.name=x commit', 'git -c user.name'],
      ['git --config-env=core.pager=P log', 'git --config-env'],
      ['git --exec-path=/tmp/x status', 'git --exec-path'],
      ['git clone --template=/tmp/t repo', 'git clone --template'],
      ['NODE_OPTIONS="--require ./x.js" npm test', 'NODE_OPTIONS='],
      ['LD_PRELOAD=/tmp/x.so ls', 'LD_PRELOAD='],
      ['PATH=/tmp/evil:$PATH git status', 'PATH='],
      ['BASH_ENV=/tmp/x bash s.sh', 'BASH_ENV='],
      ['GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=x git log', 'GIT_CONFIG_COUNT='],
      ['env PERL5OPT=-Mx perl s.pl', 'PERL5OPT='],
      ['npm --script-shell=/tmp/x run build', 'npm --script-shell'],
    ])('%j is opaque (%s)', (command, what) => {
      expect(opaque(command)).toContain(what);
    });
  });

  describe('arguments decided at run time', () => {
    it.each([
      'python3 $ARGS',
      'python3 "$F"',
      'node $(cat flags)',
      'perl $X script.pl',
      'awk "$PROGRAM" f',
      'sed $SCRIPT f',
      'git $X log',
      'git -c "$KV" log',
      'git rebase $X',
      'tar $OPTS a.tar',
      'ssh $OPTS host',
      'find . -exec {} \\;',
    ])('%j is opaque', (command) => {
      expect(opaque(command)).not.toEqual([]);
    });

    it('gives a view from a run-time word where find could take an -exec', () => {
      expect(runs('find . $X')).toContain('$X');
    });
  });

  describe('ordinary commands stay transparent', () => {
    it.each([
      'git log --oneline -n 5',
      'git status',
      'git fetch origin',
      'git grep -n foo',
      'git log $REF',
      'git commit -m "fix: system | pipe"',
      'python3 script.py --flag -c config',
      'python3 -m pytest -q -k "rm or system"',
      'python3 -W ignore script.py -e x',
      'node app.js -e x',
      'node --test',
      'node -r ts-node/register app.ts',
      'node --version',
      'perl script.pl -e x',
      'perl -I lib script.pl',
      'ruby app.rb',
      'php index.php',
      'deno run --allow-read app.ts',
      'bun run build',
      "awk '{print $1}' f",
      "awk -F: '$3 > 1000 {print $1}' /etc/passwd",
      "awk '/a|b/ {print}' f",
      'awk \'$1 == "a|b" || $2 == "y"\' f',
      "awk 'NR % 2 == 0 && /x|y/' f",
      'awk -f prog.awk f',
      "sed -i 's/a/b/g' f",
      "sed -n '/start/,/end/p' f",
      "sed ':a;N;$!ba;s/\\n/ /g' f",
      "sed -E 's/(e|f)+/x/' f",
      "sed 'y/abc/xyz/' f",
      "sed -e '1d' -e '$d' f",
      "sed '/^#/d;s/ee/e/g' f",
      'tar -xzf a.tgz -C out',
      'tar -czf out.tgz src',
      'zip -r a.zip src',
      'rsync -av src/ dst/',
      'ssh host ls',
      'man ls',
      'less +G f',
      'less +F log.txt',
      'vim +10 f',
      'vim "+/pattern" f',
      'make -j4 test',
      'make CFLAGS=-O2',
      'psql -c "select 1" db',
      'sqlite3 db "select 1"',
      'npm test',
      'npx jest --ci',
      'echo $HOME',
      'cat "$F"',
      'ls *.ts',
      'find . -name "*.ts" -exec grep -l foo {} +',
      'FOO=1 BAR=2 npm run build',
      'NODE_ENV=test node app.js',
    ])('%j', (command) => {
      expect(opaque(command)).toEqual([]);
    });
  });

  describe('awkRunsCommands', () => {
    it('ignores pipes and the word system inside strings and regular expressions', () => {
      expect(awkRunsCommands('{ print "a|b" }')).toBe(false);
      expect(awkRunsCommands('/x|y/ { n++ }')).toBe(false);
      expect(awkRunsCommands('$0 ~ /a|b/ || $1 == "c"')).toBe(false);
      expect(awkRunsCommands('{ print "system" }')).toBe(false);
      expect(awkRunsCommands('{ x = 4 / 2; print x | "sh" }')).toBe(true);
      expect(awkRunsCommands('{ a = b / c; system("x") / 1 }')).toBe(true);
    });
  });

  describe('sedRunsCommands', () => {
    it.each([
      ['s/a/b/g', false],
      ['s/a/b/w out.txt', false],
      ['/x/!d', false],
      ['1~2d', false],
      ['$!N;P;D', false],
      ['s/a/b/e', true],
      ['s,a,b,ge', true],
      ['e', true],
      ['5e id', true],
      ['/x/e id', true],
      ['s/a/b', true],
      ['K', true],
    ])('%j → %s', (script, expected) => {
      expect(sedRunsCommands(script)).toBe(expected);
    });
  });
});
