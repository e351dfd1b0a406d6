/**
 * What a command line runs that the gate cannot read. Such a segment is *opaque*: no allow rule can
 * grant it, and it asks whenever command deny or ask rules are in force, because nothing shows the
 * code keeps to them. Three kinds:
 *
 * - Program text in a language other than the shell: `python3 -c`, `node -e`, `perl -e`, `ruby -e`,
 *   `php -r`, awk programs that call `system()` or open pipes, sed scripts with the `e` command, an
 *   interpreter reading its program from a pipe (`… | python3`), `vim -c`, `gdb -ex`.
 * - Options and variables that make a program run a command or load code on the side:
 *   `git -c <any key>`, `git --config-env`, `ssh -o ProxyCommand=…`, `rsync -e`, `tar --to-command`,
 *   `zip -TT`, `man -P`, `GIT_SSH_COMMAND=…`, `PAGER=…`, `NODE_OPTIONS=…`, `LD_PRELOAD=…`, `PATH=…`.
 *   Where the value is a shell command line it is also parsed into views, so a deny rule for `rm`
 *   still denies `git -c core.pager='rm -rf x' log` outright.
 * - Arguments decided at run time where such text or options could be (`python3 $ARGS`,
 *   `git rebase $X`, `tar $OPTS`).
 *
 * Ordinary use stays transparent: `python3 script.py`, `node app.js`, `python3 -m pytest`,
 * `awk '{print $1}'`, `sed -i 's/a/b/g' f`, `git log`, `tar -xzf a.tgz`.
 */

import type { Derived, View } from './command-views';

/** A long option list, written as lines of space-separated options. */
export function options(...lines: string[]): readonly string[] {
  return lines.join(' ').split(' ');
}

/** git's global options that take the next word as their value. */
export const GIT_VALUE_OPTIONS: ReadonlySet<string> = new Set([
  '-C',
  '-c',
  '--git-dir',
  '--work-tree',
  '--namespace',
  '--super-prefix',
  '--config-env',
]);

export function deriveOpaque(v: View, piped: boolean, derived: Derived): void {
  const name = v.words[0];
  if (name === undefined) return;
  const interpreter = interpreterFor(name);
  if (interpreter) return interpreted(name, v, interpreter, piped, derived);
  if (AWKS.has(name)) return awk(name, v, derived);
  if (name === 'sed' || name === 'gsed') return sed(name, v, piped, derived);
  if (name === 'git') return git(v, derived);
  if (name === 'pwsh' || name === 'powershell' || name === 'powershell.exe')
    return powershell(name, v, piped, derived);
  const bearing = BEARING[name];
  if (bearing) return bearingOptions(name, v, bearing, piped, derived);
}

// ── environment ─────────────────────────────────────────────────────────────────────────────────

/** Variables whose value is a command line some program runs (git, ssh, less, man, editors). */
const COMMAND_VARIABLES = new Set([
  'GIT_SSH_COMMAND',
  'GIT_SSH',
  'GIT_PAGER',
  'PAGER',
  'MANPAGER',
  'SYSTEMD_PAGER',
  'GIT_EDITOR',
  'GIT_SEQUENCE_EDITOR',
  'EDITOR',
  'VISUAL',
  'GIT_ASKPASS',
  'SSH_ASKPASS',
  'SUDO_ASKPASS',
  'GIT_EXTERNAL_DIFF',
  'GIT_PROXY_COMMAND',
  'LESSOPEN',
  'LESSCLOSE',
  'BROWSER',
  'PROMPT_COMMAND',
  'RSYNC_RSH',
]);

/** Variables that load code or change which program a name runs. */
const CODE_VARIABLES = new Set([
  'PATH',
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
  'LD_AUDIT',
  'DYLD_INSERT_LIBRARIES',
  'DYLD_LIBRARY_PATH',
  'BASH_ENV',
  'ENV',
  'SHELLOPTS',
  'BASHOPTS',
  'PS4',
  'NODE_OPTIONS',
  'PYTHONSTARTUP',
  'PYTHONPATH',
  'PYTHONHOME',
  'PERL5OPT',
  'PERL5LIB',
  'PERLLIB',
  'RUBYOPT',
  'RUBYLIB',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'GIT_CONFIG',
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_SYSTEM',
  'GIT_EXEC_PATH',
  'GIT_TEMPLATE_DIR',
]);

const CODE_VARIABLE_PATTERN =
  /^(GIT_CONFIG_(KEY|VALUE)_\d+|BASH_FUNC_.*|npm_config_(script_shell|node_options|shell))$/i;

/** `NAME=value` in front of a command (or among `env`'s or `sudo`'s words). */
export function deriveEnvironment(name: string, value: string, derived: Derived): void {
  if (COMMAND_VARIABLES.has(name)) {
    derived.opaque(`${name}=`);
    // LESSOPEN's `|cmd %s` and `||cmd %s` forms pipe through the command.
    derived.script(name.startsWith('LESS') ? value.replace(/^\|\|?/, '') : value);
  } else if (CODE_VARIABLES.has(name) || CODE_VARIABLE_PATTERN.test(name)) {
    derived.opaque(`${name}=`);
  }
}

// ── interpreters ────────────────────────────────────────────────────────────────────────────────

interface Interpreter {
  /** Options whose value is program text; short ones count inside a cluster too (`perl -ne`). */
  readonly code: readonly string[];
  /** Options taking a value: attached, or the next word unless that looks like an option. */
  readonly values?: readonly string[];
  /** Short options whose value can only be attached (`perl -i.bak`, `-Mstrict`): the rest of the cluster. */
  readonly attached?: string;
  /** Options naming the program another way (`python3 -m pytest`, `php -f x.php`). */
  readonly named?: readonly string[];
  /** Words that load code the gate cannot read (`node --import=data:…`). */
  readonly loads?: RegExp;
  /** Positional words to step over before the program (`deno run x.ts`). */
  readonly subcommands?: readonly string[];
  /** Reads its program from standard input when none is named, or always (`ed FILE`). */
  readonly stdin?: 'unnamed' | 'always';
  /** Options after which nothing is read from standard input as a program (`--version`). */
  readonly noStdin?: readonly string[];
}

const INFO = ['-v', '-V', '--version', '-h', '--help'];
const DATA_URL = /^data:|=data:/;

const PYTHON: Interpreter = {
  code: ['-c'],
  values: ['-W', '-X', '-Q'],
  named: ['-m'],
  stdin: 'unnamed',
  noStdin: [...INFO, '-?'],
};
const NODE: Interpreter = {
  code: ['-e', '--eval', '-p', '--print'],
  values: options(
    '-r --require --import --loader --experimental-loader -C --conditions --title',
    '--env-file --input-type --inspect-port --watch-path',
  ),
  named: ['--run'],
  loads: DATA_URL,
  stdin: 'unnamed',
  noStdin: [...INFO, '--v8-options', '--test', '-c', '--check'],
};
const RUBY: Interpreter = {
  code: ['-e'],
  values: ['-I', '-r', '-C', '-E', '--encoding', '--external-encoding', '--internal-encoding'],
  attached: '0FKTWx',
  stdin: 'unnamed',
  noStdin: [...INFO, '-c'],
};
const LUA: Interpreter = { code: ['-e'], values: ['-l'], stdin: 'unnamed', noStdin: INFO };
const DASH_E: Interpreter = { code: ['-e', '--eval'] };

const INTERPRETERS: Record<string, Interpreter> = {
  node: NODE,
  nodejs: NODE,
  'ts-node': { ...NODE, named: [] },
  tsx: { ...NODE, named: [] },
  bun: {
    code: ['-e', '--eval', '-p', '--print'],
    values: ['-r', '--preload', '--cwd', '--env-file', '--config', '-c'],
    subcommands: ['run'],
    loads: DATA_URL,
    stdin: 'unnamed',
    noStdin: INFO,
  },
  deno: {
    code: ['eval', '--eval'],
    values: options(
      '--config -c --import-map --location --seed --v8-flags --cert -L --log-level',
      '--env-file --ext',
    ),
    subcommands: ['run', 'repl', 'test', 'bench', 'serve'],
    loads: DATA_URL,
    stdin: 'unnamed',
    noStdin: INFO,
  },
  perl: {
    code: ['-e', '-E'],
    values: ['-I', '-M', '-m'],
    attached: 'ilx0CdDFV',
    stdin: 'unnamed',
    noStdin: INFO,
  },
  ruby: RUBY,
  irb: { code: [], stdin: 'unnamed', noStdin: INFO },
  php: {
    code: ['-r', '--run', '-B', '--process-begin', '-R', '--process-code', '-E', '--process-end'],
    values: options('-c --php-ini -d --define -z --zend-extension -t --docroot -S --server'),
    named: ['-f', '--file', '-F', '--process-file'],
    loads: /auto_(prepend|append)_file/,
    stdin: 'unnamed',
    noStdin: [...INFO, '-i', '--info', '-m', '--modules', '-l', '--syntax-check', '--ini', '-S', '--server'],
  },
  lua: LUA,
  luajit: LUA,
  Rscript: { code: ['-e', '--expr'], stdin: 'unnamed', noStdin: INFO },
  R: { code: ['-e'], named: ['-f', '--file'], stdin: 'always', noStdin: ['--version', '-h', '--help'] },
  tclsh: { code: [], stdin: 'unnamed' },
  wish: { code: [], stdin: 'unnamed' },
  expect: { code: ['-c'], named: ['-f'], stdin: 'unnamed', noStdin: ['-v'] },
  osascript: { code: ['-e'], values: ['-l', '-s'], stdin: 'unnamed' },
  julia: {
    code: ['-e', '--eval', '-E', '--print'],
    values: ['-J', '--sysimage', '-t', '--threads', '-p', '--procs', '-L', '--load'],
    stdin: 'unnamed',
    noStdin: INFO,
  },
  elixir: { code: ['-e', '--eval'], values: ['-r', '-pa', '-pz', '--erl', '--sname', '--name', '--cookie'] },
  erl: { code: ['-eval'] },
  racket: { code: ['-e', '--eval', '-E'] },
  guile: { code: ['-c'], values: ['-l', '-L', '-x'] },
  sbcl: { code: ['--eval'], values: ['--load', '--core'] },
  clisp: { code: ['-x'] },
  ghc: { code: ['-e'] },
  ghci: { code: ['-e'] },
  scala: DASH_E,
  groovy: DASH_E,
  clojure: DASH_E,
  clj: DASH_E,
  jshell: { code: [], stdin: 'unnamed', noStdin: INFO },
  dc: { code: ['-e', '--expression'], named: ['-f', '--file'], stdin: 'unnamed', noStdin: INFO },
  ed: { code: [], stdin: 'always', noStdin: INFO },
  at: {
    code: [],
    values: ['-q', '-t'],
    named: ['-f'],
    stdin: 'always',
    noStdin: ['-l', '-d', '-r', '-c', '-V'],
  },
  batch: { code: [], values: ['-q'], named: ['-f'], stdin: 'always' },
  m4: {
    code: [],
    values: ['-D', '-U', '-I', '-d', '-o', '-F', '-R', '-l', '-L'],
    stdin: 'unnamed',
    noStdin: INFO,
  },
  nu: { code: ['-c', '--commands'], stdin: 'unnamed', noStdin: INFO },
  xonsh: { code: ['-c'], stdin: 'unnamed', noStdin: INFO },
  elvish: { code: ['-c'], stdin: 'unnamed', noStdin: INFO },
  gdb: {
    code: options(
      '-ex --ex -eval-command --eval-command -iex --iex -init-eval-command',
      '--init-eval-command',
    ),
    values: ['-x', '--command', '-ix', '--init-command', '-p', '--pid', '-cd', '--cd', '-d', '--directory'],
    stdin: 'always',
    noStdin: INFO,
  },
  lldb: {
    code: ['-o', '--one-line', '-O', '--one-line-before-file', '-k', '--one-line-on-crash'],
    values: options('-s --source -S --source-before-file -a --arch -p --attach-pid -n --attach-name'),
  },
  emacs: { code: ['--eval', '-eval', '--execute', '-execute'], values: ['-l', '--load', '-f', '--funcall'] },
  emacsclient: { code: ['-e', '--eval'] },
};

/** python, python3, python3.12, pypy3, ipython; lua5.4; php8.3. */
function interpreterFor(name: string): Interpreter | undefined {
  if (Object.hasOwn(INTERPRETERS, name)) return INTERPRETERS[name];
  if (/^(python|pypy|ipython)(\d+(\.\d+)*)?$/.test(name)) return PYTHON;
  if (/^lua\d(\.\d+)?$/.test(name)) return LUA;
  if (/^php\d+(\.\d+)?$/.test(name)) return INTERPRETERS['php'];
  return undefined;
}

/** A value option takes the next word unless that word is itself an option. */
function valueFollows(next: string | undefined): boolean {
  return next !== undefined && !(next.startsWith('-') && next.length > 1);
}

function matchesOption(word: string, options: readonly string[]): string | undefined {
  return options.find((o) => word === o || (o.startsWith('--') && word.startsWith(`${o}=`)));
}

/** Stands for a program read from standard input. */
function isStdin(program: string): boolean {
  return program === '-' || program === '/dev/stdin' || /^\/(dev|proc\/self)\/fd\/\d+$/.test(program);
}

function interpreted(name: string, v: View, spec: Interpreter, piped: boolean, derived: Derived): void {
  const { words, dynamic } = v;
  const values = new Set(spec.values ?? []);
  let program: string | undefined;
  let named = false;
  let noStdin = false;
  let subcommandsLeft = spec.subcommands ? 1 : 0;
  const loads = (word: string | undefined): boolean =>
    word !== undefined && spec.loads !== undefined && spec.loads.test(word);
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as string;
    if (dynamic[i]) return derived.opaque(`${name} with arguments decided at run time`);
    if (loads(w)) return derived.opaque(`${name} loading inline code`);
    if (w === '--') {
      program = words[i + 1];
      break;
    }
    const code = matchesOption(w, spec.code);
    if (code !== undefined) return derived.opaque(`${name} ${code}`);
    const namedBy = spec.named && matchesOption(w, spec.named);
    if (namedBy !== undefined) {
      named = true;
      program = w.includes('=') ? w.slice(w.indexOf('=') + 1) : words[i + 1];
      break;
    }
    if (spec.noStdin?.includes(w)) noStdin = true;
    if (w.startsWith('--')) {
      if (!w.includes('=') && values.has(w) && valueFollows(words[i + 1])) {
        if (loads(words[i + 1]) || dynamic[i + 1]) return derived.opaque(`${name} loading inline code`);
        i++;
      }
      continue;
    }
    if (w.startsWith('-') && w.length > 1) {
      for (let j = 1; j < w.length; j++) {
        const option = `-${w[j]}`;
        if (spec.code.includes(option)) return derived.opaque(`${name} ${option}`);
        if (spec.named?.includes(option)) {
          named = true;
          program = j < w.length - 1 ? w.slice(j + 1) : words[i + 1];
          break;
        }
        if (values.has(option)) {
          const value = j < w.length - 1 ? w.slice(j + 1) : words[i + 1];
          if (loads(value) || (j === w.length - 1 && dynamic[i + 1] === true))
            return derived.opaque(`${name} loading inline code`);
          if (j === w.length - 1 && valueFollows(words[i + 1])) i++;
          break;
        }
        if (spec.attached?.includes(w[j] as string)) break;
      }
      if (named) break;
      continue;
    }
    if (subcommandsLeft > 0 && spec.subcommands?.includes(w)) {
      subcommandsLeft--;
      continue;
    }
    program = w;
    break;
  }
  if (program !== undefined && loads(program)) return derived.opaque(`${name} loading inline code`);
  if (!piped || noStdin || spec.stdin === undefined) return;
  const fromStdin = program === undefined ? !named : isStdin(program) || (spec.stdin === 'always' && !named);
  if (fromStdin) derived.opaque(`${name} reading its program from standard input`);
}

/** PowerShell takes `-Command`/`-EncodedCommand` in any case and any unambiguous abbreviation. */
function powershell(name: string, v: View, piped: boolean, derived: Derived): void {
  for (let i = 1; i < v.words.length; i++) {
    if (v.dynamic[i]) return derived.opaque(`${name} with arguments decided at run time`);
    const w = (v.words[i] as string).toLowerCase();
    if (!w.startsWith('-')) {
      // Windows PowerShell runs a bare argument as a command; pwsh treats it as a script file.
      if (name !== 'pwsh') derived.opaque(`${name} ${v.words[i] as string}`);
      return;
    }
    const option = w.replace(/^--?/, '').split(':')[0] as string;
    if (
      option.length > 0 &&
      ('command'.startsWith(option) || 'encodedcommand'.startsWith(option) || option === 'ec')
    )
      return derived.opaque(`${name} -${option}`);
    if (option === 'file' || option === 'f') {
      if (piped && isStdin(v.words[i + 1] ?? ''))
        derived.opaque(`${name} reading its program from standard input`);
      return;
    }
  }
  if (piped) derived.opaque(`${name} reading its program from standard input`);
}

// ── awk and sed ─────────────────────────────────────────────────────────────────────────────────

const AWKS = new Set(['awk', 'gawk', 'mawk', 'nawk', 'original-awk']);
const AWK_VALUES = new Set(['-F', '-v', '-W', '--field-separator', '--assign']);

/** awk runs commands through `system()`, pipes (`print | "cmd"`, `"cmd" | getline`) and gawk's `@` calls. */
function awk(name: string, v: View, derived: Derived): void {
  const { words, dynamic } = v;
  const programs: string[] = [];
  let fromFile = false;
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as string;
    if (dynamic[i]) return derived.opaque(`${name} with arguments decided at run time`);
    if (w === '--') {
      if (!fromFile && programs.length === 0 && words[i + 1] !== undefined)
        programs.push(words[i + 1] as string);
      break;
    }
    if (w === '-l' || w === '--load' || w.startsWith('--load=') || /^-l./.test(w))
      return derived.opaque(`${name} loading an extension`);
    const source = matchesOption(w, ['-e', '--source']);
    if (source !== undefined) {
      const text = w.includes('=') ? w.slice(w.indexOf('=') + 1) : words[++i];
      if (dynamic[i]) return derived.opaque(`${name} with arguments decided at run time`);
      if (text !== undefined) programs.push(text);
      continue;
    }
    if (matchesOption(w, ['-f', '--file', '-E', '--exec', '-i', '--include']) !== undefined) {
      fromFile = true;
      if (!w.includes('=')) i++;
      continue;
    }
    if (/^-[fEi]./.test(w)) {
      fromFile = true;
      continue;
    }
    if (w.startsWith('-') && w.length > 1) {
      if (AWK_VALUES.has(w)) i++;
      continue;
    }
    if (!fromFile && programs.length === 0) programs.push(w);
    break;
  }
  if (programs.some(awkRunsCommands)) derived.opaque(`${name} program running commands (system, pipes or @)`);
}

/**
 * Strings and regular-expression literals are blanked first so `/a|b/` and `"a|b"` do not count as
 * pipes; a `/` starts a regular expression only where awk expects an operand, as awk itself decides.
 */
export function awkRunsCommands(program: string): boolean {
  const text = program
    .replace(/"(?:[^"\\\n]|\\.)*"/g, '""')
    .replace(
      /(^|[(,~!{};&|=\n]|\b(?:print|printf|return|if|while)\b)(\s*)\/(?:[^/\\\n[]|\\.|\[(?:[^\]\\\n]|\\.)*\])*\//g,
      '$1$2//',
    )
    .replace(/\|\|/g, '');
  return /\bsystem\b|\||@/.test(text);
}

/** sed runs commands with the `e` command and the `e` flag of `s` (GNU); `--sandbox` forbids both. */
function sed(name: string, v: View, piped: boolean, derived: Derived): void {
  const { words, dynamic } = v;
  if (words.includes('--sandbox')) return;
  const scripts: string[] = [];
  let fromFile = false;
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as string;
    if (dynamic[i]) return derived.opaque(`${name} with arguments decided at run time`);
    if (w === '--') {
      if (!fromFile && scripts.length === 0 && words[i + 1] !== undefined)
        scripts.push(words[i + 1] as string);
      break;
    }
    if (w.startsWith('--')) {
      const expression = matchesOption(w, ['--expression']);
      const file = matchesOption(w, ['--file']);
      const value = w.includes('=') ? w.slice(w.indexOf('=') + 1) : words[i + 1];
      if (expression !== undefined || file !== undefined) {
        if (!w.includes('=')) i++;
        if (dynamic[i]) return derived.opaque(`${name} with arguments decided at run time`);
        if (value === undefined) continue;
        if (expression !== undefined) scripts.push(value);
        else {
          fromFile = true;
          if (piped && isStdin(value))
            return derived.opaque(`${name} reading its script from standard input`);
        }
      } else if (w === '--line-length') i++;
      continue;
    }
    if (w.startsWith('-') && w.length > 1) {
      for (let j = 1; j < w.length; j++) {
        const c = w[j];
        if (c === 'e' || c === 'f' || c === 'l') {
          const value = j < w.length - 1 ? w.slice(j + 1) : words[++i];
          if (dynamic[i]) return derived.opaque(`${name} with arguments decided at run time`);
          if (c === 'e' && value !== undefined) scripts.push(value);
          if (c === 'f') {
            fromFile = true;
            if (piped && value !== undefined && isStdin(value))
              return derived.opaque(`${name} reading its script from standard input`);
          }
          break;
        }
        if (c === 'i') break;
      }
      continue;
    }
    if (!fromFile && scripts.length === 0) scripts.push(w);
    break;
  }
  if (scripts.some(sedRunsCommands)) derived.opaque(`${name} script running commands (the e command)`);
}

const SED_SIMPLE = new Set([...'dDgGhHnNpPxz=F']);

/**
 * Walks a sed script command by command. Anything it does not recognise counts as running a command,
 * so an unusual spelling makes the segment opaque rather than slipping past.
 */
export function sedRunsCommands(script: string): boolean {
  const s = script;
  let i = 0;
  const toEndOfLine = () => {
    while (i < s.length && s[i] !== '\n') i++;
  };
  const delimited = (delim: string): boolean => {
    // Returns false when the delimiter never closes (sed refuses the script; so do we, by opacity).
    for (; i < s.length; i++) {
      if (s[i] === '\\') i++;
      else if (s[i] === delim) {
        i++;
        return true;
      } else if (s[i] === '\n') return false;
    }
    return false;
  };
  const address = (): boolean => {
    const c = s[i];
    if (c === undefined) return true;
    if (/[0-9]/.test(c)) {
      while (i < s.length && /[0-9~]/.test(s[i] as string)) i++;
    } else if (c === '$') i++;
    else if (c === '/' || c === '\\') {
      const delim = c === '/' ? '/' : s[i + 1];
      i += c === '/' ? 1 : 2;
      if (delim === undefined || !delimited(delim)) return false;
      while (s[i] === 'I' || s[i] === 'M') i++;
    } else if (c === '+' || c === '~') {
      i++;
      while (i < s.length && /[0-9]/.test(s[i] as string)) i++;
    }
    return true;
  };
  while (i < s.length) {
    while (i < s.length && /[\s;{}!]/.test(s[i] as string)) i++;
    if (i >= s.length) return false;
    if (!address()) return true;
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (s[i] === ',') {
      i++;
      while (s[i] === ' ' || s[i] === '\t') i++;
      if (!address()) return true;
    }
    while (i < s.length && /[\s!]/.test(s[i] as string)) i++;
    const cmd = s[i];
    if (cmd === undefined) return false;
    i++;
    if (cmd === 'e') return true;
    if (cmd === 's' || cmd === 'y') {
      const delim = s[i];
      if (delim === undefined || delim === '\n' || delim === '\\') return true;
      i++;
      if (!delimited(delim) || !delimited(delim)) return true;
      if (cmd === 'y') continue;
      while (i < s.length && /[gpiImMe0-9w]/.test(s[i] as string)) {
        if (s[i] === 'e') return true;
        if (s[i] === 'w') {
          toEndOfLine();
          break;
        }
        i++;
      }
      continue;
    }
    if ('aic'.includes(cmd) || 'rRwW'.includes(cmd) || cmd === '#') {
      toEndOfLine();
      continue;
    }
    if (':btTv'.includes(cmd)) {
      while (i < s.length && s[i] !== ';' && s[i] !== '\n') i++;
      continue;
    }
    if ('qQlL'.includes(cmd)) {
      while (i < s.length && /[\s0-9]/.test(s[i] as string) && s[i] !== '\n') i++;
      continue;
    }
    if (SED_SIMPLE.has(cmd) || cmd === '{' || cmd === '}') continue;
    return true;
  }
  return false;
}

// ── git ─────────────────────────────────────────────────────────────────────────────────────────

/** Configuration keys whose value is a command git runs (alias and credential values after a `!`). */
const GIT_COMMAND_KEYS =
  /^(core\.(pager|sshcommand|editor|fsmonitor|askpass|gitproxy)|pager\..+|sequence\.editor|diff\.external|diff\..+\.(command|textconv)|difftool\..+\.cmd|mergetool\..+\.cmd|merge\..+\.driver|filter\..+\.(clean|smudge|process)|credential\.(.+\.)?helper|alias\..+|gpg\.(.+\.)?program|web\.browser|browser\..+\.cmd|man\..+\.cmd|sendemail\.(smtpserver|tocmd|cccmd|headercmd|sendmailcmd)|uploadpack\.packobjectshook|remote\..+\.(uploadpack|receivepack))$/i;

/** Subcommand options whose value is a command line git runs. */
const GIT_SUBCOMMAND_COMMANDS: Record<string, readonly string[]> = {
  rebase: ['-x', '--exec'],
  difftool: ['-x', '--extcmd'],
  fetch: ['--upload-pack'],
  pull: ['--upload-pack'],
  'ls-remote': ['--upload-pack'],
  clone: ['-u', '--upload-pack'],
  'fetch-pack': ['--upload-pack', '--exec'],
  push: ['--receive-pack', '--exec'],
  'send-pack': ['--receive-pack', '--exec'],
  archive: ['--exec'],
  'send-email': ['--to-cmd', '--cc-cmd', '--header-cmd', '--sendmail-cmd', '--smtp-server'],
};

/**
 * Any `-c` (or `--config-env`, `--exec-path=`) is opaque: git has too many keys that name programs,
 * hooks directories or include files to list them all; the known command keys are parsed as well.
 */
function git(v: View, derived: Derived): void {
  const { words, dynamic } = v;
  let i = 1;
  while (i < words.length && ((words[i] as string).startsWith('-') || dynamic[i])) {
    const w = words[i] as string;
    if (dynamic[i]) return derived.opaque('git with options decided at run time');
    if (w === '-c') gitConfig(words[i + 1], dynamic[i + 1] === true, derived);
    if (w === '--config-env' || w.startsWith('--config-env=')) derived.opaque('git --config-env');
    if (w.startsWith('--exec-path=')) derived.opaque('git --exec-path');
    i += GIT_VALUE_OPTIONS.has(w) ? 2 : 1;
  }
  const sub = words[i];
  if (sub === undefined) return;
  const options = GIT_SUBCOMMAND_COMMANDS[sub];
  if (!options && sub !== 'clone' && sub !== 'grep') return;
  for (let k = i + 1; k < words.length; k++) {
    const w = words[k] as string;
    if (dynamic[k]) return derived.opaque(`git ${sub} with arguments decided at run time`);
    if (sub === 'clone' && (w === '-c' || w === '--config' || w.startsWith('--config=')))
      gitConfig(w.startsWith('--config=') ? w.slice(9) : words[k + 1], dynamic[k + 1] === true, derived);
    if (sub === 'clone' && (w === '--template' || w.startsWith('--template=')))
      derived.opaque('git clone --template');
    // `git grep -O` alone opens the configured pager; only a command written here is new.
    if (sub === 'grep' && (/^-O./.test(w) || w.startsWith('--open-files-in-pager='))) {
      derived.opaque('git grep --open-files-in-pager');
      derived.script(w.startsWith('-O') ? w.slice(2) : w.slice(w.indexOf('=') + 1));
    }
    const option = options && matchesOption(w, options);
    const short = options?.find((o) => o.length === 2 && w.startsWith(o) && w.length > 2);
    if (option === undefined && short === undefined) continue;
    derived.opaque(`git ${sub} ${option ?? short}`);
    const value =
      option === undefined ? w.slice(2) : w.includes('=') ? w.slice(w.indexOf('=') + 1) : words[k + 1];
    if (value !== undefined) derived.script(value);
  }
}

function gitConfig(pair: string | undefined, isDynamic: boolean, derived: Derived): void {
  if (pair === undefined) return;
  const eq = pair.indexOf('=');
  const key = eq < 0 ? pair : pair.slice(0, eq);
  derived.opaque(isDynamic ? 'git -c decided at run time' : `git -c ${key}`);
  if (eq >= 0 && GIT_COMMAND_KEYS.test(key)) derived.script(pair.slice(eq + 1).replace(/^!/, ''));
}

// ── other programs with command-bearing options ─────────────────────────────────────────────────

interface Found {
  /** How the decision describes it, e.g. `-o ProxyCommand`. */
  what: string;
  /** The command line it runs, when there is one to parse. */
  command?: string;
}

interface Bearing {
  /** Options whose value is a command line the program runs (`rsync -e`, `tar --to-command`). */
  readonly commands?: readonly string[];
  /** Options whose value is code the gate cannot read (`vim -c`, `make --eval`). */
  readonly code?: readonly string[];
  /** Of those, the ones that count only with a value attached (`man -Hbrowser`, `--html=browser`). */
  readonly attachedOnly?: readonly string[];
  /** Options whose value decides whether a command follows (`ssh -o ProxyCommand=…`). */
  readonly select?: {
    readonly options: readonly string[];
    choose(option: string, value: string): Found | undefined;
  };
  /** A word, wherever it stands, that is code (`less '+!cmd'`, `vim +cmd`, `make SHELL=…`). */
  readonly word?: (word: string) => Found | undefined;
  /** Options naming a file the commands are read from (`psql -f`, `make -f`). */
  readonly named?: readonly string[];
  /** Reads commands from a pipe unless the line gives them or names a file (`… | sqlite3 db`). */
  readonly stdin?: boolean;
  /** Flags that make it read commands from standard input (`vim -es`). */
  readonly stdinFlags?: readonly string[];
  /** Arguments after the first are commands, so standard input is data (`sqlite3 db 'select 1'`). */
  readonly argumentCommands?: boolean;
}

const SSH_COMMAND_OPTIONS = /^(proxycommand|localcommand|knownhostscommand|permitlocalcommand)$/i;

const SSH: Bearing = {
  select: {
    options: ['-o'],
    choose(_option, value) {
      const m = /^\s*([A-Za-z]+)\s*(?:=|\s)\s*(.*)$/s.exec(value);
      if (!m) return undefined;
      const key = m[1] as string;
      if (/^match$/i.test(key) && /\bexec\b/i.test(m[2] as string)) return { what: '-o Match exec' };
      if (!SSH_COMMAND_OPTIONS.test(key)) return undefined;
      return /^permitlocalcommand$/i.test(key)
        ? { what: `-o ${key}` }
        : { what: `-o ${key}`, command: m[2] as string };
    },
  },
};

const VIM: Bearing = {
  code: ['-c', '--cmd'],
  // `+42` and `+/pattern` only move the cursor; any other `+cmd` is an Ex command.
  word: (w) => (/^\+(?!\d*$|\/)/.test(w) ? { what: '+cmd' } : undefined),
  stdinFlags: ['-e', '-E', '-es', '-Es'],
};

const LESS: Bearing = {
  word: (w) => (/^\+.*[!|]/.test(w) ? { what: '+cmd running a command' } : undefined),
};

const MAKE_COMMAND_VARIABLES = /^(SHELL|\.SHELLFLAGS|MAKE|CC|CXX|CPP|LD|AR|AS|RM)=(.*)$/s;

const NPM: Bearing = { code: ['--script-shell', '--node-options'] };

const MYSQL: Bearing = {
  select: {
    options: ['-e', '--execute'],
    choose: (_option, value) =>
      /\\!|\bsystem\b/i.test(value) ? { what: '-e running a command' } : undefined,
  },
  stdin: true,
};

const BEARING: Record<string, Bearing> = {
  tar: {
    commands: [
      '--to-command',
      '-I',
      '--use-compress-program',
      '--rsh-command',
      '-F',
      '--info-script',
      '--new-volume-script',
    ],
    select: {
      options: ['--checkpoint-action'],
      choose: (_option, value) =>
        value.startsWith('exec=') ? { what: '--checkpoint-action=exec', command: value.slice(5) } : undefined,
    },
  },
  zip: { commands: ['-TT', '--unzip-command'] },
  rsync: { commands: ['-e', '--rsh', '--rsync-path'] },
  ssh: SSH,
  autossh: SSH,
  scp: { ...SSH, commands: ['-S'] },
  sftp: { ...SSH, commands: ['-S', '-D'] },
  man: { commands: ['-P', '--pager', '-H', '--html'], attachedOnly: ['-H', '--html'] },
  less: LESS,
  more: LESS,
  vim: VIM,
  vi: VIM,
  nvim: VIM,
  view: VIM,
  vimdiff: VIM,
  gvim: VIM,
  ex: { ...VIM, stdin: true },
  make: {
    code: ['--eval', '-E'],
    named: ['-f', '--file', '--makefile'],
    word: (w) => {
      const m = MAKE_COMMAND_VARIABLES.exec(w);
      return m ? { what: `${m[1] as string}=`, command: m[2] as string } : undefined;
    },
  },
  // `enable -f lib.so name` loads a builtin from a shared object; `hash -p /bin/rm ls` makes `ls` run rm.
  enable: { code: ['-f'] },
  hash: { commands: ['-p'] },
  npm: NPM,
  pnpm: NPM,
  yarn: NPM,
  psql: {
    named: ['-f', '--file'],
    select: {
      options: ['-c', '--command'],
      choose: (_option, value) =>
        value.includes('\\') ? { what: '-c with a backslash command' } : undefined,
    },
    stdin: true,
  },
  mysql: MYSQL,
  mariadb: MYSQL,
  sqlite3: {
    select: { options: ['-cmd'], choose: (_option, value) => sqliteDotCommand(value) },
    word: sqliteDotCommand,
    stdin: true,
    argumentCommands: true,
  },
};

function sqliteDotCommand(text: string): Found | undefined {
  return /(^|[\n;])\s*\.(shell|system)\b|\.(once|output|import|read|excel)\s+['"]?\|/.test(text)
    ? { what: 'dot-command running a command' }
    : undefined;
}

/** Every option a Bearing names, with its value wherever it is written. */
function bearingOptions(name: string, v: View, spec: Bearing, piped: boolean, derived: Derived): void {
  const { words, dynamic } = v;
  const options = [
    ...(spec.commands ?? []),
    ...(spec.code ?? []),
    ...(spec.named ?? []),
    ...(spec.select?.options ?? []),
  ];
  const report = (found: Found) => {
    derived.opaque(`${name} ${found.what}`);
    if (found.command !== undefined) derived.script(found.command);
  };
  // Whether the line itself says what to run, or names a file to read it from: then stdin is data.
  let given = false;
  let positionals = 0;
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as string;
    if (dynamic[i]) return derived.opaque(`${name} with arguments decided at run time`);
    if (!w.startsWith('-') && spec.argumentCommands && ++positionals > 1) given = true;
    if (piped && spec.stdinFlags?.includes(w)) derived.opaque(`${name} reading commands from standard input`);
    const byWord = spec.word?.(w);
    if (byWord) {
      report(byWord);
      continue;
    }
    const found = optionWithValue(words, i, options);
    if (!found) continue;
    const { option, value, consumed } = found;
    if (spec.attachedOnly?.includes(option) && consumed) continue;
    if (consumed) i++;
    if (value === undefined) continue;
    if (consumed && dynamic[i]) return derived.opaque(`${name} with arguments decided at run time`);
    given = true;
    if (spec.commands?.includes(option)) report({ what: option, command: value });
    else if (spec.code?.includes(option)) report({ what: option });
    else if (spec.named?.includes(option)) {
      if (piped && isStdin(value)) derived.opaque(`${name} reading commands from standard input`);
    } else {
      const chosen = spec.select?.choose(option, value);
      if (chosen) report(chosen);
    }
  }
  if (piped && spec.stdin && !given) derived.opaque(`${name} reading commands from standard input`);
}

/**
 * `--opt value`, `--opt=value` or `-Xvalue` (two-letter options) at `words[i]`; `consumed` says the
 * value is the next word.
 */
function optionWithValue(
  words: readonly string[],
  i: number,
  options: readonly string[],
): { option: string; value: string | undefined; consumed: boolean } | undefined {
  const w = words[i] as string;
  for (const option of options) {
    if (w === option) return { option, value: words[i + 1], consumed: true };
    if (w.startsWith(`${option}=`) && option.length > 2)
      return { option, value: w.slice(option.length + 1), consumed: false };
    if (option.length === 2 && !w.startsWith('--') && w.startsWith(option) && w.length > 2)
      return { option, value: w.slice(2), consumed: false };
  }
  return undefined;
}
