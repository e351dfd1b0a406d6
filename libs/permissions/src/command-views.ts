/**
 * What a segment may really run, beyond its first word.
 *
 * `sudo rm -rf /`, `timeout 5 rm -rf /`, `/bin/rm -rf /`, `bash -c 'rm -rf /'`, `git -C . push`,
 * `find . -exec rm {} \;` and `GIT_SSH_COMMAND='rm -rf /' git fetch` all run a command that is not at
 * the front of the segment. Deny rules, ask rules and the dangerous-command floor look at every view
 * so they catch these; allow rules never do (they only ever grant the segment exactly as written), so
 * an over-approximation here can only make the outcome stricter.
 *
 * Some of what a segment runs cannot be turned into views at all: program text in another language
 * (`python3 -c`, `awk 'BEGIN{system(…)}'`), options that make a program run a command or load code
 * (`git -c core.pager=…`). Those are reported as `opaque` (see opaque.ts).
 */

import { GIT_VALUE_OPTIONS, deriveEnvironment, deriveOpaque, options } from './opaque';
import { segmentCommand, type Segment, type SegmentLimits } from './segment';

/** One command line a segment may run. */
export interface View {
  readonly words: readonly string[];
  /** Per word: its value is decided only at run time (`$X`, `$(…)`, a glob), so it could be anything. */
  readonly dynamic: readonly boolean[];
}

export interface CommandViews {
  /** The words themselves first, then every derived command line. */
  views: View[];
  /**
   * Shell text that runs but could not be split into views (a `bash -c` script using a `for` loop,
   * a nesting too deep, too many wrappers): callers must assume the worst about it.
   */
  unparsed: string[];
  /** What the segment runs that the gate cannot read, e.g. `python3 -c` or `git -c`. */
  opaque: string[];
}

/** What commandViews needs of a segment; nested command lines and loose scans give the same shape. */
export type CommandSource = Pick<Segment, 'words' | 'env' | 'dynamicWords' | 'piped'>;

/** Receives what one command line runs besides itself. */
export interface Derived {
  /** An argument vector it runs (a wrapper's command, `find -exec`). */
  view(view: View): void;
  /** Shell text it runs, parsed into further views (`bash -c`, `git -c core.pager=…`). */
  script(text: string): void;
  /** Something it runs that the gate cannot read, described for the person reading the decision. */
  opaque(what: string): void;
}

/** Bounds the work per segment; hitting it makes the segment unparsed rather than silently unchecked. */
const MAX_VIEWS = 64;

interface Wrapper {
  /** Options that take the next word as their value (short `-u` or long `--user`). */
  values?: readonly string[];
  /** Options that take the next two words (`bwrap --bind SRC DEST`). */
  pairs?: readonly string[];
  /** Positional words before the command (timeout's duration, chroot's directory). */
  positionals?: number;
  /** `NAME=value` words may precede the command. */
  assignments?: boolean;
  /** Options after which no command is run (`command -v rm` only prints a path). */
  stop?: readonly string[];
  /** Options whose value is itself a command line (`env -S 'rm -rf /'`, `flock -c`). */
  script?: readonly string[];
  /** The rest of the words is joined and run by a shell (`watch rm -rf /`). */
  joins?: boolean;
  /** The words after the options are not a command (`script -c cmd LOGFILE`). */
  noCommand?: boolean;
  /** With noCommand: options after which the rest of the words is the command (`nix develop -c cmd`). */
  commandAfter?: readonly string[];
}

/**
 * Commands that run the command that follows them. Option lists cover the forms in common use; an
 * unusual spelling leaves the wrapper unrecognised, which deny rules then miss but the floor (which
 * lists most of the dangerous wrappers themselves) still catches.
 */
const WRAPPERS: Record<string, Wrapper> = {
  sudo: {
    values: ['-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t', '-T', '-U', '-R'],
    assignments: true,
    stop: ['-l', '-v', '-k', '-K', '-e', '-V'],
  },
  doas: { values: ['-u', '-C'] },
  run0: {
    values: options(
      '-u --user -g --group -D --chdir --setenv --unit --property --description --slice --nice',
      '--background',
    ),
  },
  env: {
    values: ['-u', '-C', '--unset', '--chdir'],
    assignments: true,
    script: ['-S', '--split-string'],
  },
  nice: { values: ['-n', '--adjustment'] },
  ionice: { values: ['-c', '-n', '--class', '--classdata'] },
  timeout: { values: ['-s', '-k', '--signal', '--kill-after'], positionals: 1 },
  nohup: {},
  time: { values: ['-f', '-o', '--format', '--output'] },
  command: { stop: ['-v', '-V'] },
  builtin: {},
  exec: { values: ['-a'] },
  xargs: {
    values: ['-a', '-d', '-E', '-I', '-L', '-n', '-P', '-s', '--arg-file', '--delimiter', '--max-args'],
  },
  stdbuf: { values: ['-i', '-o', '-e', '--input', '--output', '--error'] },
  setsid: {},
  unbuffer: {},
  busybox: {},
  caffeinate: { values: ['-t', '-w'] },
  chroot: { values: ['--userspec', '--groups'], positionals: 1 },
  runuser: { values: ['-u', '-g', '-G', '--user', '--group'] },
  strace: { values: ['-e', '-o', '-p', '-s', '-u', '-a', '-b', '-E', '-I', '-O', '-P', '-S', '-X'] },
  ltrace: { values: ['-e', '-o', '-p', '-s', '-u', '-a', '-A', '-D', '-F', '-l', '-n'] },
  watch: { values: ['-n', '--interval'], joins: true },
  taskset: { stop: ['-p', '--pid'], positionals: 1 },
  chrt: { stop: ['-p', '--pid', '-m', '--max'], positionals: 1 },
  flock: {
    values: ['-w', '--timeout', '-E', '--conflict-exit-code'],
    positionals: 1,
    script: ['-c', '--command'],
  },
  script: {
    values: ['-E', '-I', '-O', '-B', '-T', '--echo', '--log-in', '--log-out'],
    script: ['-c', '--command'],
    noCommand: true,
  },
  nsenter: { values: ['-t', '--target', '-S', '--setuid', '-G', '--setgid'] },
  unshare: {},
  prlimit: { stop: ['-p', '--pid'] },
  firejail: {},
  bwrap: {
    values: options(
      '--tmpfs --proc --dev --dir --chdir --unsetenv --uid --gid --hostname --lock-file',
      '--remount-ro --perms --size --args --info-fd --seccomp --exec-label --file-label',
      '--cap-add --cap-drop --userns --pidns --sync-fd --block-fd --userns-block-fd',
      '--json-status-fd --mqueue --add-seccomp-fd',
    ),
    pairs: options(
      '--bind --ro-bind --dev-bind --bind-try --ro-bind-try --dev-bind-try --symlink --setenv',
      '--file --bind-data --ro-bind-data --chmod --bind-fd --ro-bind-fd',
    ),
  },
  'systemd-run': {
    values: options(
      '-p --property -u --unit -E --setenv --description --slice -H --host -M --machine --uid',
      '--gid --nice --working-directory --on-calendar --on-active --timer-property',
      '--path-property --socket-property',
    ),
  },
  fakeroot: { values: ['-l', '--lib', '--faked', '-s', '-i'] },
  torsocks: { values: ['-u', '-p', '-a', '-P', '--user', '--pass', '--address', '--port'] },
  proxychains: { values: ['-f'] },
  proxychains4: { values: ['-f'] },
  valgrind: {},
  catchsegv: {},
  'ssh-agent': { values: ['-a', '-E', '-P', '-t'], stop: ['-k', '-s', '-c', '-D', '-d', '-T'] },
  npx: { values: ['-p', '--package', '-w', '--workspace'], script: ['-c', '--call'] },
  pnpx: { values: ['-p', '--package'], script: ['-c'] },
  bunx: { values: ['-p', '--package'] },
  uvx: { values: ['--from', '--with', '-p', '--python', '--index', '--constraints'] },
};

/**
 * Tools whose subcommand runs the command that follows it (`uv run rm -rf /`, `bundle exec rm`).
 * The wrapper spec applies from the word after the subcommand.
 */
const SUBCOMMAND_WRAPPERS: Record<string, { readonly subcommands: readonly string[] } & Wrapper> = {
  uv: {
    subcommands: ['run'],
    values: options(
      '--with --python -p --directory --project --package --extra --group --env-file --from',
      '--index --with-requirements',
    ),
  },
  poetry: { subcommands: ['run'], values: ['-C', '--directory', '-P', '--project'] },
  pipenv: { subcommands: ['run'] },
  pdm: { subcommands: ['run'], values: ['-p', '--project'] },
  hatch: { subcommands: ['run'], values: ['-e', '--env'] },
  pipx: { subcommands: ['run'], values: ['--spec', '--python', '--index-url'] },
  conda: { subcommands: ['run'], values: ['-n', '--name', '-p', '--prefix', '--cwd'] },
  mamba: { subcommands: ['run'], values: ['-n', '--name', '-p', '--prefix', '--cwd'] },
  micromamba: { subcommands: ['run'], values: ['-n', '--name', '-p', '--prefix', '--cwd'] },
  bundle: { subcommands: ['exec'], values: ['--gemfile'] },
  npm: {
    subcommands: ['exec', 'x'],
    values: ['-p', '--package', '-w', '--workspace'],
    script: ['-c', '--call'],
  },
  pnpm: { subcommands: ['exec', 'dlx'], values: ['--package', '-C', '--dir', '--filter'], script: ['-c'] },
  yarn: { subcommands: ['exec', 'dlx'], values: ['-p', '--package'] },
  direnv: { subcommands: ['exec'], positionals: 1 },
  mise: { subcommands: ['exec', 'x'], values: ['-C', '--cd', '-E', '--env'], script: ['-c', '--command'] },
  'nix-shell': { subcommands: [], script: ['--run', '--command'], noCommand: true },
  nix: { subcommands: ['develop', 'shell'], commandAfter: ['-c', '--command'], noCommand: true },
};

/** Builtins whose `NAME=value` arguments set variables for the rest of the script (`export PATH=…`). */
const DECLARATIONS = new Set(['export', 'declare', 'typeset', 'local', 'readonly']);

/** Shells whose `-c` argument is a command line. */
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'csh', 'tcsh', 'su']);

interface Pending {
  view: View;
  env: readonly string[];
  piped: boolean;
  depth: number;
}

function slice(v: View, start: number, end?: number): View {
  return { words: v.words.slice(start, end), dynamic: v.dynamic.slice(start, end) };
}

function withHead(v: View, head: string): View {
  return { words: [head, ...v.words.slice(1)], dynamic: v.dynamic };
}

/**
 * Every view of a segment, and what it runs that cannot be read. `nested` controls whether command
 * lines hidden in arguments (`bash -c`, `eval`, `env -S`, `watch`) are parsed; it is off when
 * scanning text that already failed to parse, so the scan cannot recurse.
 */
export function commandViews(
  source: CommandSource,
  limits: SegmentLimits,
  options: { nested: boolean } = { nested: true },
): CommandViews {
  const result: CommandViews = { views: [], unparsed: [], opaque: [] };
  const seen = new Set<string>();
  const queue: Pending[] = [
    {
      view: { words: source.words, dynamic: source.words.map((_, i) => source.dynamicWords[i] === true) },
      env: source.env,
      piped: source.piped,
      depth: 0,
    },
  ];
  while (queue.length > 0) {
    const next = queue.shift() as Pending;
    const key = [...next.env, '', ...next.view.words].join('\u0000');
    if (seen.has(key)) continue;
    if (result.views.length >= MAX_VIEWS) {
      result.unparsed.push(source.words.join(' '));
      break;
    }
    seen.add(key);
    result.views.push(next.view);
    const derived: Derived = {
      view: (view) => queue.push({ view, env: [], piped: next.piped, depth: next.depth }),
      script: (text) => {
        if (!options.nested) return;
        if (next.depth + 1 > limits.maxDepth) return void result.unparsed.push(text);
        const parsed = segmentCommand(text, limits);
        if (!parsed.ok) return void result.unparsed.push(text);
        for (const s of parsed.segments)
          queue.push({
            view: { words: s.words, dynamic: s.dynamicWords },
            env: s.env,
            piped: s.piped || next.piped,
            depth: next.depth + 1,
          });
      },
      opaque: (what) => {
        if (!result.opaque.includes(what)) result.opaque.push(what);
      },
    };
    for (const assignment of next.env) deriveAssignment(assignment, derived);
    deriveViews(next.view, derived);
    deriveOpaque(next.view, next.piped, derived);
  }
  return result;
}

/** `NAME=value` before a command, or among a wrapper's words: some names carry a command or code. */
export function deriveAssignment(assignment: string, derived: Derived): void {
  const eq = assignment.indexOf('=');
  if (eq <= 0) return;
  deriveEnvironment(assignment.slice(0, eq), assignment.slice(eq + 1), derived);
}

function deriveViews(v: View, derived: Derived): void {
  const head = v.words[0];
  if (head === undefined) return;
  const rest = v.words.slice(1);
  // `/usr/bin/rm` and `./node_modules/.bin/rm` run an `rm`.
  if (head.includes('/')) {
    const base = head.slice(head.lastIndexOf('/') + 1);
    if (base) derived.view(withHead(v, base));
  }
  // Case-insensitive file systems (macOS) run `RM` as `rm`.
  if (head !== head.toLowerCase()) derived.view(withHead(v, head.toLowerCase()));
  // `--config-env=X` is the option `--config-env` with a value, for word-prefix rules.
  if (rest.some((w) => /^--[^=]+=/.test(w))) {
    const words: string[] = [];
    const dynamic: boolean[] = [];
    v.words.forEach((w, i) => {
      const parts = i > 0 && /^--[^=]+=/.test(w) ? splitOnce(w, '=') : [w];
      words.push(...parts);
      dynamic.push(...parts.map(() => v.dynamic[i] === true));
    });
    derived.view({ words, dynamic });
  }

  const wrapper = WRAPPERS[head];
  if (wrapper) unwrap(v, 1, wrapper, derived);
  const sub = SUBCOMMAND_WRAPPERS[head];
  if (sub) subcommandWrapper(v, sub, derived);
  if (head === 'git') gitViews(v, derived);
  if (SHELLS.has(head)) {
    const inline = shellScript(v.words);
    if (inline !== undefined) derived.script(inline);
  }
  if (head === 'eval' && rest.length > 0) derived.script(rest.join(' '));
  // `trap 'cmd' EXIT` runs cmd later; `alias r='cmd'` runs it when a later line says `r`.
  if (head === 'trap') {
    const action = rest[0] === '--' ? rest[1] : rest[0];
    if (action !== undefined && !action.startsWith('-') && rest.length > 1) derived.script(action);
  }
  if (head === 'alias')
    for (const w of rest) if (w.indexOf('=') > 0) derived.script(w.slice(w.indexOf('=') + 1));
  if (DECLARATIONS.has(head))
    for (const w of rest) if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) deriveAssignment(w, derived);
  if (head === 'find') findExecViews(v, derived);
}

function splitOnce(w: string, sep: string): string[] {
  const i = w.indexOf(sep);
  return [w.slice(0, i), w.slice(i + 1)];
}

/** Skips a wrapper's options and positionals from `start`; what remains is the command it runs. */
function unwrap(v: View, start: number, spec: Wrapper, derived: Derived): void {
  const values = new Set(spec.values ?? []);
  const pairs = new Set(spec.pairs ?? []);
  const { words } = v;
  if (spec.noCommand) return commandOptions(v, start, spec, derived);
  let i = start;
  while (i < words.length) {
    const w = words[i] as string;
    if (w === '--') {
      i++;
      break;
    }
    if (spec.stop?.includes(w)) return;
    const script = scriptOption(words, i, spec);
    if (script) {
      if (script.value !== undefined) derived.script(script.value);
      return;
    }
    if (w.startsWith('--')) {
      i += w.includes('=') ? 1 : pairs.has(w) ? 3 : values.has(w) ? 2 : 1;
      continue;
    }
    if (w.startsWith('-') && w.length > 1) {
      i += shortClusterTakesNext(w, values) ? 2 : 1;
      continue;
    }
    if (spec.assignments && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) {
      deriveAssignment(w, derived);
      i++;
      continue;
    }
    break;
  }
  i += spec.positionals ?? 0;
  // `flock LOCKFILE -c 'cmd'`: the option may also follow the positionals.
  const late = scriptOption(words, i, spec);
  if (late) {
    if (late.value !== undefined) derived.script(late.value);
    return;
  }
  const command = slice(v, i);
  if (command.words.length === 0) return;
  if (spec.joins) derived.script(command.words.join(' '));
  else derived.view(command);
}

function subcommandWrapper(
  v: View,
  spec: { readonly subcommands: readonly string[] } & Wrapper,
  derived: Derived,
): void {
  if (spec.subcommands.length === 0) return unwrap(v, 1, spec, derived);
  // The subcommand is the first word that is not an option (`uv --quiet run …`).
  const at = v.words.findIndex((w, i) => i > 0 && !w.startsWith('-'));
  if (at > 0 && spec.subcommands.includes(v.words[at] as string)) unwrap(v, at + 1, spec, derived);
}

/** A tool that runs commands only through options (`script -c cmd log`, `nix shell pkg -c cmd`). */
function commandOptions(v: View, start: number, spec: Wrapper, derived: Derived): void {
  for (let i = start; i < v.words.length; i++) {
    const w = v.words[i] as string;
    if (w === '--') return;
    if (spec.commandAfter?.includes(w)) {
      if (i + 1 < v.words.length) derived.view(slice(v, i + 1));
      return;
    }
    const script = scriptOption(v.words, i, spec);
    if (!script) continue;
    if (script.value !== undefined) derived.script(script.value);
    if (script.next) i++;
  }
}

/** `-c cmd`, `-qc cmd`, `--command=cmd` or `--command cmd` at `words[i]`, for a spec's script options. */
function scriptOption(
  words: readonly string[],
  i: number,
  spec: Wrapper,
): { value: string | undefined; next: boolean } | undefined {
  const w = words[i];
  if (w === undefined || !spec.script) return undefined;
  for (const o of spec.script) {
    if (w === o) return { value: words[i + 1], next: true };
    if (o.startsWith('--') && w.startsWith(`${o}=`)) return { value: w.slice(o.length + 1), next: false };
    // A short flag cluster ending in the option letter (`script -qc cmd`).
    if (o.length === 2 && /^-[A-Za-z]+$/.test(w) && w.endsWith(o[1] as string))
      return { value: words[i + 1], next: true };
  }
  return undefined;
}

/** `-u root` and `-nu root` take the next word; `-uroot` carries its value inline. */
function shortClusterTakesNext(w: string, values: ReadonlySet<string>): boolean {
  for (let j = 1; j < w.length; j++) {
    if (values.has(`-${w[j]}`)) return j === w.length - 1;
  }
  return false;
}

/**
 * `git -C dir push` runs `git push`; `git -C dir -c k=v fetch` also carries `-c`, so every global
 * option gets a view starting at it (the floor lists `git -c`) and the subcommand gets one too.
 */
function gitViews(v: View, derived: Derived): void {
  const { words } = v;
  let i = 1;
  while (i < words.length && (words[i] as string).startsWith('-')) {
    const w = words[i] as string;
    if (i > 1) derived.view({ words: ['git', ...words.slice(i)], dynamic: [false, ...v.dynamic.slice(i)] });
    i += GIT_VALUE_OPTIONS.has(w) ? 2 : 1;
  }
  if (i > 1 && i < words.length)
    derived.view({ words: ['git', ...words.slice(i)], dynamic: [false, ...v.dynamic.slice(i)] });
  // `git bisect run cmd args` runs cmd.
  if (words[1] === 'bisect' && words[2] === 'run' && words.length > 3) derived.view(slice(v, 3));
  // `git submodule foreach 'cmd'` runs cmd through the shell in every submodule.
  if (words[1] === 'submodule' && words[2] === 'foreach') {
    let at = 3;
    while (words[at] === '--recursive' || words[at] === '--quiet' || words[at] === '-q') at++;
    if (at < words.length) derived.script(words.slice(at).join(' '));
  }
}

/** The command string of `bash -c '…'`, `bash -lc '…'`, `su -c '…' user` or `su --command=…`. */
function shellScript(v: readonly string[]): string | undefined {
  let sawC = false;
  for (let i = 1; i < v.length; i++) {
    const w = v[i] as string;
    if (w.startsWith('--command=')) return w.slice('--command='.length);
    if (w === '--command') return v[i + 1];
    if (w === '--rcfile' || w === '--init-file') {
      i++;
      continue;
    }
    if (w.startsWith('--')) continue;
    if ((w.startsWith('-') || w.startsWith('+')) && w.length > 1) {
      if (w.includes('c')) sawC = true;
      if (/[oO]/.test(w)) i++;
      continue;
    }
    if (sawC) return w;
    // `su user -c '…'`: keep looking past the user name.
    if (v[0] !== 'su') return undefined;
  }
  return undefined;
}

/**
 * `find … -exec cmd args {} ;` (and -execdir, -ok, -okdir) runs `cmd args {}`; `-exec {} ;` runs
 * the files it finds. A word decided at run time could itself be `-exec …`, so it starts a view too.
 */
function findExecViews(v: View, derived: Derived): void {
  const { words } = v;
  for (let i = 1; i < words.length; i++) {
    if (v.dynamic[i]) derived.view(slice(v, i));
    if (!['-exec', '-execdir', '-ok', '-okdir'].includes(words[i] as string)) continue;
    let end = i + 1;
    while (end < words.length && words[end] !== ';' && words[end] !== '+') end++;
    if (end > i + 1) {
      const command = slice(v, i + 1, end);
      if ((command.words[0] as string).includes('{}'))
        derived.opaque('find -exec running the files it finds');
      derived.view(command);
    }
    i = end;
  }
}

/** Reserved words that precede a command inside loops and conditionals (`do rm "$f"`). */
const LEADING_KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'while', 'until', 'do', '!', 'time']);

/**
 * Rough command lines from text that failed to parse: split on every shell operator, quote and
 * bracket, strip leading assignments, reserved words and backslashes. Only deny/ask rules and hook matchers use this,
 * to answer "might this run `rm`?" for input the tokenizer refused (a here-document fed to `sh`, a
 * `for` loop, a 1 MB command).
 */
export function looseCommandLines(text: string): string[][] {
  const lines: string[][] = [text.trim().split(/\s+/).filter(Boolean)];
  for (const chunk of text.split(/[\n;&|(){}<>`$"']+/)) {
    const words = chunk
      .split(/\s+/)
      .filter(Boolean)
      .map((w) => w.replace(/\\/g, ''));
    while (
      words.length > 0 &&
      (LEADING_KEYWORDS.has(words[0] as string) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0] as string))
    )
      words.shift();
    if (words.length > 0) lines.push(words);
  }
  return lines;
}
