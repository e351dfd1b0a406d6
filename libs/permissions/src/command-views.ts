/**
 * What a segment may really run, beyond its first word.
 *
 * `sudo rm -rf /`, `timeout 5 rm -rf /`, `/bin/rm -rf /`, `bash -c 'rm -rf /'`, `git -C . push` and
 * `find . -exec rm {} \;` all run a command that is not at the front of the segment. Deny rules, ask
 * rules and the dangerous-command floor look at every view so they catch these; allow rules never do
 * (they only ever grant the segment exactly as written), so an over-approximation here can only make
 * the outcome stricter.
 */

import { segmentCommand, type SegmentLimits } from './segment';

export interface CommandViews {
  /** The words themselves first, then every derived command line. */
  views: string[][];
  /**
   * Command text that runs but could not be split into views (a `bash -c` script using a `for` loop,
   * a nesting too deep, too many wrappers): callers must assume the worst about it.
   */
  opaque: string[];
}

/** Bounds the work per segment; hitting it makes the segment opaque rather than silently unchecked. */
const MAX_VIEWS = 64;

interface Wrapper {
  /** Options that take the next word as their value (short `-u` or long `--user`). */
  values?: readonly string[];
  /** Positional words before the command (timeout's duration, chroot's directory). */
  positionals?: number;
  /** `NAME=value` words may precede the command. */
  assignments?: boolean;
  /** Options after which no command is run (`command -v rm` only prints a path). */
  stop?: readonly string[];
  /** Options whose value is itself a command line (`env -S 'rm -rf /'`). */
  script?: readonly string[];
  /** The rest of the words is joined and run by a shell (`watch rm -rf /`). */
  joins?: boolean;
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
  env: { values: ['-u', '-C', '--unset', '--chdir'], assignments: true, script: ['-S', '--split-string'] },
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
  watch: { values: ['-n', '--interval'], joins: true },
};

/** Shells whose `-c` argument is a command line. */
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'csh', 'tcsh', 'su']);

/** git's global options that take the next word as their value. */
const GIT_VALUE_OPTIONS = new Set([
  '-C',
  '-c',
  '--git-dir',
  '--work-tree',
  '--namespace',
  '--super-prefix',
  '--config-env',
]);

interface Pending {
  words: string[];
  depth: number;
}

/**
 * Every view of `words`. `nested` controls whether command lines hidden in arguments (`bash -c`,
 * `eval`, `env -S`, `watch`) are parsed; it is off when scanning text that already failed to parse,
 * so the scan cannot recurse.
 */
export function commandViews(
  words: readonly string[],
  limits: SegmentLimits,
  options: { nested: boolean } = { nested: true },
): CommandViews {
  const result: CommandViews = { views: [], opaque: [] };
  const seen = new Set<string>();
  const queue: Pending[] = [{ words: [...words], depth: 0 }];
  while (queue.length > 0) {
    const next = queue.shift() as Pending;
    const key = next.words.join('\u0000');
    if (seen.has(key)) continue;
    if (result.views.length >= MAX_VIEWS) {
      result.opaque.push(words.join(' '));
      break;
    }
    seen.add(key);
    result.views.push(next.words);
    const push = (w: string[]) => queue.push({ words: w, depth: next.depth });
    const script = (text: string) => {
      if (!options.nested) return;
      if (next.depth + 1 > limits.maxDepth) return void result.opaque.push(text);
      const parsed = segmentCommand(text, limits);
      if (!parsed.ok) return void result.opaque.push(text);
      for (const s of parsed.segments) queue.push({ words: s.words, depth: next.depth + 1 });
    };
    deriveViews(next.words, push, script);
  }
  return result;
}

function deriveViews(v: string[], push: (w: string[]) => void, script: (text: string) => void): void {
  const head = v[0];
  if (head === undefined) return;
  const rest = v.slice(1);
  // `/usr/bin/rm` and `./node_modules/.bin/rm` run an `rm`.
  if (head.includes('/')) {
    const base = head.slice(head.lastIndexOf('/') + 1);
    if (base) push([base, ...rest]);
  }
  // Case-insensitive file systems (macOS) run `RM` as `rm`.
  if (head !== head.toLowerCase()) push([head.toLowerCase(), ...rest]);
  // `--config-env=X` is the option `--config-env` with a value, for word-prefix rules.
  if (v.some((w, i) => i > 0 && /^--[^=]+=/.test(w)))
    push(v.flatMap((w, i) => (i > 0 && /^--[^=]+=/.test(w) ? splitOnce(w, '=') : [w])));

  const wrapper = WRAPPERS[head];
  if (wrapper) unwrap(v, wrapper, push, script);
  if (head === 'git') gitViews(v, push);
  if (SHELLS.has(head)) {
    const inline = shellScript(v);
    if (inline !== undefined) script(inline);
  }
  if (head === 'eval' && rest.length > 0) script(rest.join(' '));
  if (head === 'find') findExecViews(v, push);
}

function splitOnce(w: string, sep: string): string[] {
  const i = w.indexOf(sep);
  return [w.slice(0, i), w.slice(i + 1)];
}

/** Skips a wrapper's options and positionals; what remains is the command it runs. */
function unwrap(
  v: string[],
  spec: Wrapper,
  push: (w: string[]) => void,
  script: (text: string) => void,
): void {
  const values = new Set(spec.values ?? []);
  let i = 1;
  while (i < v.length) {
    const w = v[i] as string;
    if (w === '--') {
      i++;
      break;
    }
    if (spec.stop?.includes(w)) return;
    if (spec.script?.some((o) => w === o || w.startsWith(`${o}=`))) {
      const value = w.includes('=') ? w.slice(w.indexOf('=') + 1) : v[i + 1];
      if (value !== undefined) script(value);
      return;
    }
    if (w.startsWith('--')) {
      i += !w.includes('=') && values.has(w) ? 2 : 1;
      continue;
    }
    if (w.startsWith('-') && w.length > 1) {
      i += shortClusterTakesNext(w, values) ? 2 : 1;
      continue;
    }
    if (spec.assignments && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) {
      i++;
      continue;
    }
    break;
  }
  i += spec.positionals ?? 0;
  const command = v.slice(i);
  if (command.length === 0) return;
  if (spec.joins) script(command.join(' '));
  else push(command);
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
function gitViews(v: string[], push: (w: string[]) => void): void {
  let i = 1;
  while (i < v.length && (v[i] as string).startsWith('-')) {
    const w = v[i] as string;
    if (i > 1) push(['git', ...v.slice(i)]);
    i += GIT_VALUE_OPTIONS.has(w) ? 2 : 1;
  }
  if (i > 1 && i < v.length) push(['git', ...v.slice(i)]);
}

/** The command string of `bash -c '…'`, `bash -lc '…'`, `su -c '…' user` or `su --command=…`. */
function shellScript(v: string[]): string | undefined {
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

/** `find … -exec cmd args {} ;` (and -execdir, -ok, -okdir) runs `cmd args {}`. */
function findExecViews(v: string[], push: (w: string[]) => void): void {
  for (let i = 1; i < v.length; i++) {
    if (!['-exec', '-execdir', '-ok', '-okdir'].includes(v[i] as string)) continue;
    let end = i + 1;
    while (end < v.length && v[end] !== ';' && v[end] !== '+') end++;
    if (end > i + 1) push(v.slice(i + 1, end));
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
