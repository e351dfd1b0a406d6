import { segmentCommand, type Segment } from './segment';

function segments(command: string): Segment[] {
  const r = segmentCommand(command);
  if (!r.ok) throw new Error(`expected ${JSON.stringify(command)} to parse, got: ${r.reason}`);
  return r.segments;
}

const words = (command: string) => segments(command).map((s) => s.words);

function refusal(command: string, limits = {}): string {
  const r = segmentCommand(command, limits);
  if (r.ok)
    throw new Error(`expected ${JSON.stringify(command)} to be refused, got ${JSON.stringify(r.segments)}`);
  return r.reason;
}

describe('segmentCommand', () => {
  describe('words and quoting', () => {
    it('splits on blanks and keeps one segment for a simple command', () => {
      expect(segments('git   status\t--short')).toEqual([
        {
          words: ['git', 'status', '--short'],
          env: [],
          redirects: [],
          dynamic: false,
          dynamicWords: [false, false, false],
          piped: false,
          text: 'git   status\t--short',
        },
      ]);
    });

    it('removes single quotes, double quotes and backslashes the way the shell does', () => {
      expect(words(`echo 'a b' "c d" e\\ f g"h"'i' \\'`)).toEqual([
        ['echo', 'a b', 'c d', 'e f', 'ghi', "'"],
      ]);
      expect(words('r\\m -rf /')).toEqual([['rm', '-rf', '/']]);
      expect(words(`"r"'m' x`)).toEqual([['rm', 'x']]);
    });

    it('applies backslash escapes inside double quotes only to $ ` " \\ and newline', () => {
      expect(words('echo "a\\"b" "\\$x" "\\n" "a\\\\b"')).toEqual([['echo', 'a"b', '$x', '\\n', 'a\\b']]);
      expect(segments('echo "\\$x"')[0]?.dynamic).toBe(false);
    });

    it('keeps operators inside quotes as part of the word', () => {
      expect(words(`echo "(h)" '$(i)' '\`j\`' "a|b" x\\;y`)).toEqual([
        ['echo', '(h)', '$(i)', '`j`', 'a|b', 'x;y'],
      ]);
      expect(words(`echo "a && b; c | d" 'e || f & g'`)).toEqual([['echo', 'a && b; c | d', 'e || f & g']]);
      expect(words('grep -e "x\ny" file')).toEqual([['grep', '-e', 'x\ny', 'file']]);
    });

    it('joins lines ending in a backslash', () => {
      expect(words('git \\\nstatus')).toEqual([['git', 'status']]);
      expect(words('gi\\\nt status')).toEqual([['git', 'status']]);
    });

    it('treats # at the start of a word as a comment and elsewhere as a letter', () => {
      expect(words('git status # && rm -rf /')).toEqual([['git', 'status']]);
      expect(words('echo a#b')).toEqual([['echo', 'a#b']]);
      expect(words('git status # c\nrm -rf /')).toEqual([
        ['git', 'status'],
        ['rm', '-rf', '/'],
      ]);
    });

    it("decodes $'…' strings but marks them dynamic", () => {
      const [s] = segments("$'\\x72\\x6d' -rf $'\\057'");
      expect(s?.words).toEqual(['rm', '-rf', '/']);
      expect(s?.dynamic).toBe(true);
    });

    it('allows an empty command', () => {
      expect(segments('')).toEqual([]);
      expect(segments('  # nothing\n\n')).toEqual([]);
    });
  });

  describe('operators', () => {
    it.each([
      ['a && b', 2],
      ['a || b', 2],
      ['a; b', 2],
      ['a | b', 2],
      ['a |& b', 2],
      ['a & b', 2],
      ['a &', 1],
      ['a\nb', 2],
      ['a&&b||c;d|e&f', 6],
      ['a;', 1],
      ['a &&\n  b', 2],
      ['! a | b', 2],
    ])('%j has %i segments', (command, n) => {
      expect(segments(command)).toHaveLength(n);
    });

    it('records each segment text', () => {
      expect(segments('git status && rm -rf / | sh').map((s) => s.text)).toEqual([
        'git status',
        'rm -rf /',
        'sh',
      ]);
    });

    it('does not treat ! as a command word', () => {
      expect(words('! git diff --quiet')).toEqual([['git', 'diff', '--quiet']]);
    });

    it.each(['&& a', 'a &&', 'a ||', 'a |', '| a', '; a', 'a ;; b', 'a ;& b', 'a & ; b', 'a || || b'])(
      'refuses the malformed chain %j',
      (command) => {
        expect(refusal(command)).toBeTruthy();
      },
    );
  });

  describe('groups and substitutions', () => {
    it('parses subshells and brace groups into their commands', () => {
      expect(words('(rm -rf /)')).toEqual([['rm', '-rf', '/']]);
      expect(words('{ rm -rf /; }')).toEqual([['rm', '-rf', '/']]);
      expect(words('(a; (b && c)) | { d; }')).toEqual([['a'], ['b'], ['c'], ['d']]);
    });

    it('applies a group redirection to every command inside it', () => {
      expect(segments('{ a; b; } > out.txt').map((s) => s.redirects)).toEqual([['>out.txt'], ['>out.txt']]);
    });

    it('treats braces that are not a group as words', () => {
      expect(words('echo { } x}')).toEqual([['echo', '{', '}', 'x}']]);
    });

    it('parses $( ) recursively and marks the outer word dynamic', () => {
      const s = segments('git status $(rm -rf /)');
      expect(s.map((x) => x.words)).toEqual([
        ['rm', '-rf', '/'],
        ['git', 'status', '$(rm -rf /)'],
      ]);
      expect(s.map((x) => x.dynamic)).toEqual([false, true]);
    });

    it('parses backticks recursively, including escaped nested backticks', () => {
      expect(words('git status `rm -rf /`')).toEqual([
        ['rm', '-rf', '/'],
        ['git', 'status', '`rm -rf /`'],
      ]);
      expect(words('echo `echo \\`rm -rf /\\``')).toEqual([
        ['rm', '-rf', '/'],
        ['echo', '`rm -rf /`'],
        ['echo', '`echo \\`rm -rf /\\``'],
      ]);
    });

    it('parses substitutions inside double quotes and parameter expansions', () => {
      expect(words('echo "x $(rm a) `rm b`"').slice(0, 2)).toEqual([
        ['rm', 'a'],
        ['rm', 'b'],
      ]);
      expect(words('echo ${x:-$(rm c)}')[0]).toEqual(['rm', 'c']);
      expect(words('echo "${x:-$(rm d)}"')[0]).toEqual(['rm', 'd']);
    });

    it('parses process substitution', () => {
      expect(words('diff <(ls a) >(rm -rf /)')).toEqual([
        ['ls', 'a'],
        ['rm', '-rf', '/'],
        ['diff', '<(ls a)', '>(rm -rf /)'],
      ]);
    });

    it('marks parameters, globs and brace expansion dynamic, and plain words not', () => {
      const dynamic = (c: string) => segments(c).at(-1)?.dynamic;
      expect(dynamic('echo $HOME')).toBe(true);
      expect(dynamic('echo "$1"')).toBe(true);
      expect(dynamic('echo ${HOME}')).toBe(true);
      expect(dynamic('ls *.ts')).toBe(true);
      expect(dynamic('ls file?.ts')).toBe(true);
      expect(dynamic('ls [ab].ts')).toBe(true);
      expect(dynamic('git {push,status}')).toBe(true);
      expect(dynamic('echo {1..3}')).toBe(true);
      expect(dynamic('ls \'*.ts\' "?" \\*')).toBe(false);
      expect(dynamic('echo $ {} [ ] a=b ~/x')).toBe(false);
      expect(dynamic('find . -exec grep x {} \\;')).toBe(false);
    });

    it('parses arithmetic expansion as nested commands rather than skipping it', () => {
      expect(segments('echo $((1 + 2))').at(-1)?.dynamic).toBe(true);
    });
  });

  describe('redirections and assignments', () => {
    it('records redirections with their descriptor and target', () => {
      expect(segments('cmd >out 2>&1 2> err >>log <in &>all &>>all2 >|clob 1>&2 3<>rw <&0 2>&-')[0]).toEqual({
        words: ['cmd'],
        env: [],
        redirects: [
          '>out',
          '2>&1',
          '2>err',
          '>>log',
          '<in',
          '&>all',
          '&>>all2',
          '>|clob',
          '1>&2',
          '3<>rw',
          '<&0',
          '2>&-',
        ],
        dynamic: false,
        dynamicWords: [false],
        piped: false,
        text: 'cmd >out 2>&1 2> err >>log <in &>all &>>all2 >|clob 1>&2 3<>rw <&0 2>&-',
      });
    });

    it('takes quoted targets and keeps digits that are not a descriptor as words', () => {
      expect(segments('echo 12 > "a b"')[0]).toMatchObject({ words: ['echo', '12'], redirects: ['>a b'] });
      expect(segments('echo a2>x')[0]).toMatchObject({ words: ['echo', 'a2'], redirects: ['>x'] });
    });

    it('records leading NAME=value assignments as env, later ones as words', () => {
      expect(segments('FOO=1 BAR="a b" git status X=2')[0]).toMatchObject({
        words: ['git', 'status', 'X=2'],
        env: ['FOO=1', 'BAR=a b'],
      });
      expect(segments('FOO=1')[0]).toMatchObject({ words: [], env: ['FOO=1'] });
      expect(segments('"FOO"=1 x')[0]).toMatchObject({ words: ['FOO=1', 'x'], env: [] });
    });

    it('parses substitutions inside assignments', () => {
      expect(words('X=$(rm -rf /) git status')[0]).toEqual(['rm', '-rf', '/']);
    });
  });

  describe('refusals', () => {
    it.each([
      ['git status "', /double quote/],
      ["git status '", /single quote/],
      ['git status `x', /backtick/],
      ['git status $(x', /unbalanced "\("/],
      ['git status ${x', /\$\{/],
      ['(git status', /unbalanced "\("/],
      ['git status)', /unbalanced "\)"/],
      ['{ git status', /unbalanced "\{"/],
      ['{ git status }', /unbalanced "\{"/],
      ['}', /unbalanced "\}"/],
      ['git status \\', /backslash/],
      ['cat <<EOF\nrm -rf /\nEOF', /here-doc/],
      ['cat <<-EOF\nx\nEOF', /here-doc/],
      ['sh <<< "rm -rf /"', /here-doc/],
      ['for f in *; do rm "$f"; done', /control structures \("for"\)/],
      ['if true; then rm x; fi', /control structures \("if"\)/],
      ['while true; do x; done', /control/],
      ['case x in a) rm;; esac', /control/],
      ['f() { rm -rf /; }; f', /function definitions/],
      ['function f { rm; }', /control/],
      ['echo @(a|b)', /unexpected "\("/],
      ['a=(1 2)', /array/],
      ['echo >', /no target/],
      ['( )', /empty/],
      ['(a) b', /after/],
      ['echo "${x:-"y"}"', /quotes inside/],
      ['echo \u0000', /NUL/],
    ])('refuses %j', (command, reason) => {
      expect(refusal(command)).toMatch(reason);
    });

    it('does not treat quoted reserved words as control structures', () => {
      expect(words("'if' x")).toEqual([['if', 'x']]);
    });

    it('enforces the length limit', () => {
      expect(refusal('x'.repeat(10_001))).toMatch(/10001 characters long; at most 10000/);
      expect(segmentCommand('x'.repeat(10_000)).ok).toBe(true);
      expect(refusal('echo hello', { maxLength: 5 })).toMatch(/at most 5/);
    });

    it('enforces the segment limit, counting nested segments', () => {
      expect(segmentCommand(Array(50).fill('a').join(' && ')).ok).toBe(true);
      expect(refusal(Array(51).fill('a').join(' && '))).toMatch(/more than 50 simple commands/);
      expect(refusal('a $(b) $(c) $(d)', { maxSegments: 3 })).toMatch(/more than 3/);
    });

    it('enforces the depth limit for every kind of nesting', () => {
      const nest = (n: number, open: string, close: string) => `${open.repeat(n)}x${close.repeat(n)}`;
      expect(segmentCommand(nest(8, '(', ')')).ok).toBe(true);
      expect(refusal(nest(9, '(', ')'))).toMatch(/deeper than 8 levels/);
      expect(refusal(`echo ${nest(9, '$(echo ', ')')}`)).toMatch(/deeper than 8/);
      expect(refusal(nest(9, '{ ', '; }'))).toMatch(/deeper than 8/);
      expect(refusal('echo $(echo $(echo x))', { maxDepth: 1 })).toMatch(/deeper than 1/);
      expect(refusal('echo `echo \\`echo x\\``', { maxDepth: 1 })).toMatch(/deeper than 1/);
    });
  });
});
