/**
 * A shell tokenizer that splits a command line into the simple commands ("segments") a POSIX shell
 * or bash would run, so permission rules can judge each one.
 *
 * It is deliberately a real character-level parser rather than regex splitting: `git status && rm`
 * must be two segments while `echo "a && b"` is one, and the content of `$( … )`, backticks and
 * `<( … )` runs too, so it is parsed recursively into further segments. Anything it cannot analyse
 * with certainty (here-documents, control structures, function definitions, unbalanced quotes, input
 * past the limits) is refused with a reason instead of guessed at: a refused command is never
 * granted by an allow rule.
 */

export interface Segment {
  /** The command and its arguments with quoting removed, as the shell would pass them. */
  words: string[];
  /** Leading `NAME=value` assignments, quoting removed. */
  env: string[];
  /** Redirections as `<fd><operator><target>`, e.g. `2>&1`, `>/dev/null`, `&>out.log`. */
  redirects: string[];
  /** Contains a parameter expansion, substitution, glob, brace expansion or `$'…'` string: some word's value is decided only at run time. */
  dynamic: boolean;
  /**
   * Per word: its value is decided only at run time (an expansion, a substitution, a glob, a brace
   * list). `$'…'` strings are decoded exactly, so they alone do not make a word dynamic here.
   */
  dynamicWords: boolean[];
  /**
   * Standard input comes from a pipe or a process substitution, so a program that reads its code
   * from standard input (`… | python3`) gets code written on the command line.
   */
  piped: boolean;
  /** The segment's source text. */
  text: string;
}

export interface SegmentLimits {
  maxLength: number;
  maxSegments: number;
  maxDepth: number;
}

/** Generous for real commands, small enough that a hostile input cannot make analysis expensive. */
export const DEFAULT_SEGMENT_LIMITS: SegmentLimits = { maxLength: 10_000, maxSegments: 50, maxDepth: 8 };

export type SegmentResult = { ok: true; segments: Segment[] } | { ok: false; reason: string };

/**
 * Reserved words that open or continue compound commands. Their bodies are not simple commands
 * (`for f in *; do rm "$f"; done` would otherwise look like segments `for …`, `do rm …`, `done`), so
 * a command using them is refused rather than half-understood.
 */
const CONTROL_WORDS = new Set([
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'for',
  'while',
  'until',
  'do',
  'done',
  'case',
  'esac',
  'select',
  'function',
  'coproc',
]);

/** Characters that end an unquoted word. */
const WORD_END = new Set([' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>']);

const REDIRECT = /^(?:(\d+)?(<<<|<<-|<<|>>|>&|>\||<>|<&|>|<)|(&>>|&>))/;

/** Distinguishes the parser's own refusals from bugs, which must still surface. */
class ShellSyntaxError extends Error {}

function fail(reason: string): never {
  throw new ShellSyntaxError(reason);
}

interface Parser {
  readonly src: string;
  pos: number;
  depth: number;
  readonly limits: SegmentLimits;
  readonly out: Segment[];
  /** The command being parsed reads a pipe (it follows `|`, or its group or substitution does). */
  piped: boolean;
}

interface Word {
  value: string;
  raw: string;
  dynamic: boolean;
  /** Some part was quoted or escaped: a quoted word is never a reserved word or an assignment. */
  quoted: boolean;
  /** Its value is decided at run time (`dynamic` minus exactly decoded `$'…'` strings). */
  runtime: boolean;
}

export function segmentCommand(command: string, limits: Partial<SegmentLimits> = {}): SegmentResult {
  const l: SegmentLimits = { ...DEFAULT_SEGMENT_LIMITS, ...limits };
  if (command.length > l.maxLength)
    return {
      ok: false,
      reason: `the command is ${command.length} characters long; at most ${l.maxLength} can be analysed`,
    };
  if (command.includes('\0')) return { ok: false, reason: 'the command contains a NUL character' };
  const out: Segment[] = [];
  try {
    parseSource(command, 0, l, out, false);
  } catch (e) {
    if (e instanceof ShellSyntaxError) return { ok: false, reason: e.message };
    throw e;
  }
  return { ok: true, segments: out };
}

function parseSource(
  src: string,
  depth: number,
  limits: SegmentLimits,
  out: Segment[],
  piped: boolean,
): void {
  parseList({ src, pos: 0, depth, limits, out, piped }, null);
}

function enter(p: Parser): void {
  p.depth++;
  if (p.depth > p.limits.maxDepth)
    fail(`the command nests subshells or substitutions deeper than ${p.limits.maxDepth} levels`);
}

function isWordEnd(c: string | undefined): boolean {
  return c === undefined || WORD_END.has(c);
}

/** The unquoted word `w` stands alone at the current position (used for `{`, `}` and `!`). */
function atWord(p: Parser, w: string): boolean {
  return p.src.startsWith(w, p.pos) && isWordEnd(p.src[p.pos + w.length]);
}

/** Spaces, tabs and line continuations between tokens. */
function skipBlanks(p: Parser): void {
  for (;;) {
    const c = p.src[p.pos];
    if (c === ' ' || c === '\t') p.pos++;
    else if (c === '\\' && p.src[p.pos + 1] === '\n') p.pos += 2;
    else return;
  }
}

/** A `#` at the start of a token comments out the rest of the line (comments are on in `sh -c`). */
function skipComment(p: Parser): void {
  if (p.src[p.pos] !== '#') return;
  const nl = p.src.indexOf('\n', p.pos);
  p.pos = nl < 0 ? p.src.length : nl;
}

function describeAt(p: Parser): string {
  const rest = p.src.slice(p.pos, p.pos + 20).split('\n')[0] ?? '';
  return rest ? `"${rest}"` : 'the end of the line';
}

/** After `&&`, `||` or `|` a command must follow, possibly on the next line. */
function requireCommandNext(p: Parser, operator: string): void {
  for (;;) {
    skipBlanks(p);
    skipComment(p);
    if (p.src[p.pos] === '\n') p.pos++;
    else break;
  }
  const c = p.src[p.pos];
  if (c === undefined || c === ';' || c === '&' || c === '|' || c === ')')
    fail(`"${operator}" must be followed by a command`);
}

/** A list of pipelines joined by `&&`, `||`, `;`, `&` or newlines, up to `closer` or the end. */
function parseList(p: Parser, closer: ')' | '}' | null): void {
  const { src } = p;
  for (;;) {
    skipBlanks(p);
    skipComment(p);
    if (p.pos >= src.length) {
      if (closer) fail(`unbalanced ${closer === ')' ? '"("' : '"{"'}: it is never closed`);
      return;
    }
    const c = src[p.pos];
    if (c === '\n') {
      p.pos++;
      continue;
    }
    if (closer === ')' && c === ')') {
      p.pos++;
      return;
    }
    if (closer === '}' && atWord(p, '}')) {
      p.pos++;
      return;
    }
    parsePipeline(p);
    skipBlanks(p);
    skipComment(p);
    const d = src[p.pos];
    if (d === undefined || d === '\n') continue;
    if (src.startsWith('&&', p.pos) || src.startsWith('||', p.pos)) {
      const op = src.slice(p.pos, p.pos + 2);
      p.pos += 2;
      requireCommandNext(p, op);
      continue;
    }
    if (d === ';') {
      if (src[p.pos + 1] === ';' || src[p.pos + 1] === '&')
        fail('case-statement terminators (;; and ;&) are not analysed');
      p.pos++;
      continue;
    }
    if (d === '&') {
      p.pos++;
      continue;
    }
    if (d === ')') {
      if (closer === ')') {
        p.pos++;
        return;
      }
      fail('unbalanced ")": nothing opened it');
    }
    fail(`unexpected ${describeAt(p)}`);
  }
}

/** Commands joined by `|` or `|&`, optionally negated with `!`. */
function parsePipeline(p: Parser): void {
  skipBlanks(p);
  // `!` only inverts the exit status; it runs nothing itself.
  if (atWord(p, '!')) {
    p.pos++;
    skipBlanks(p);
  }
  const inherited = p.piped;
  for (;;) {
    parseCommand(p);
    skipBlanks(p);
    if (p.src[p.pos] === '|' && p.src[p.pos + 1] !== '|') {
      const op = p.src[p.pos + 1] === '&' ? '|&' : '|';
      p.pos += op.length;
      requireCommandNext(p, op);
      skipBlanks(p);
      p.piped = true;
      continue;
    }
    p.piped = inherited;
    return;
  }
}

function parseCommand(p: Parser): void {
  const { src } = p;
  skipBlanks(p);
  if (src[p.pos] === '(') return parseGroup(p, ')');
  if (atWord(p, '{')) return parseGroup(p, '}');

  const start = p.pos;
  const seg = newSegment(p.piped);
  for (;;) {
    skipBlanks(p);
    skipComment(p);
    const c = src[p.pos];
    if (c === undefined || c === '\n' || c === ';' || c === '|' || c === ')') break;
    if (c === '&' && src[p.pos + 1] !== '>') break;
    if (c === '(')
      fail(
        seg.words.length > 0
          ? `unexpected "(" after "${seg.words[seg.words.length - 1]}": function definitions and extended globs are not analysed`
          : 'unexpected "(": array assignments are not analysed',
      );
    if (parseRedirect(p, seg)) continue;
    const word = parseWord(p);
    if (word.raw === '') fail(`unexpected ${describeAt(p)}`);
    seg.dynamic ||= word.dynamic;
    if (seg.words.length === 0 && /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(word.raw)) {
      seg.env.push(word.value);
      continue;
    }
    if (seg.words.length === 0 && seg.env.length === 0 && !word.quoted) {
      if (CONTROL_WORDS.has(word.value))
        fail(
          `shell control structures ("${word.value}") are not analysed; run simple commands joined by &&, ||, ; or | instead`,
        );
      if (word.value === '}') fail('unbalanced "}": nothing opened it');
    }
    seg.words.push(word.value);
    seg.dynamicWords.push(word.runtime);
  }
  if (seg.words.length === 0 && seg.env.length === 0 && seg.redirects.length === 0)
    fail(`expected a command at ${describeAt(p)}`);
  seg.text = src.slice(start, p.pos).trim();
  pushSegment(p, seg);
}

function newSegment(piped: boolean): Segment {
  return { words: [], env: [], redirects: [], dynamic: false, dynamicWords: [], piped, text: '' };
}

function pushSegment(p: Parser, seg: Segment): void {
  if (p.out.length >= p.limits.maxSegments)
    fail(
      `the command has more than ${p.limits.maxSegments} simple commands; at most that many can be analysed`,
    );
  p.out.push(seg);
}

/** `( list )` or `{ list; }`, then optional redirections that apply to every command inside. */
function parseGroup(p: Parser, closer: ')' | '}'): void {
  const first = p.out.length;
  p.pos++;
  enter(p);
  parseList(p, closer);
  p.depth--;
  if (p.out.length === first) fail(`empty ${closer === ')' ? '( )' : '{ }'} group`);
  const outer = newSegment(false);
  for (;;) {
    skipBlanks(p);
    if (!parseRedirect(p, outer)) break;
  }
  skipComment(p);
  const c = p.src[p.pos];
  if (!(c === undefined || c === '\n' || c === ';' || c === '&' || c === '|' || c === ')'))
    fail(`unexpected ${describeAt(p)} after "${closer}"`);
  for (const seg of p.out.slice(first)) {
    seg.redirects.push(...outer.redirects);
    seg.dynamic ||= outer.dynamic;
    seg.piped ||= outer.piped;
  }
}

/** Consumes a redirection if one starts here; here-documents and here-strings are refused. */
function parseRedirect(p: Parser, seg: Segment): boolean {
  const m = REDIRECT.exec(p.src.slice(p.pos, p.pos + 16));
  if (!m) return false;
  const fd = m[1] ?? '';
  const op = (m[2] ?? m[3]) as string;
  // `<(` and `>(` are process substitutions: words, not redirections.
  if (!fd && (op === '<' || op === '>') && p.src[p.pos + 1] === '(') return false;
  if (op.startsWith('<<'))
    fail(
      'here-documents and here-strings (<<, <<-, <<<) are not analysed; pass the text as an argument or a file',
    );
  p.pos += m[0].length;
  skipBlanks(p);
  const target = parseWord(p);
  if (target.raw === '') fail(`the redirection "${fd}${op}" has no target`);
  seg.redirects.push(`${fd}${op}${target.value}`);
  seg.dynamic ||= target.dynamic;
  // `python3 < <(echo 'code')` reads its program from a process, like a pipe.
  if ((fd === '' || fd === '0') && op === '<' && target.raw.startsWith('<(')) seg.piped = true;
  return true;
}

/** One word: quotes and escapes removed, expansions kept as written and flagged dynamic. */
function parseWord(p: Parser): Word {
  const { src } = p;
  const start = p.pos;
  let value = '';
  let dynamic = false;
  let runtime = false;
  let quoted = false;
  let bracket = false;
  let braceOpen = false;
  let braceList = false;
  while (p.pos < src.length) {
    const c = src[p.pos] as string;
    if ((c === '<' || c === '>') && src[p.pos + 1] === '(') {
      value += parseSubstitution(p, 2);
      dynamic = runtime = true;
      continue;
    }
    if (WORD_END.has(c)) break;
    if (c === '\\') {
      const n = src[p.pos + 1];
      if (n === undefined) fail('the command ends with a backslash');
      p.pos += 2;
      if (n !== '\n') {
        value += n;
        quoted = true;
      }
      continue;
    }
    if (c === "'") {
      const end = src.indexOf("'", p.pos + 1);
      if (end < 0) fail('unbalanced single quote');
      value += src.slice(p.pos + 1, end);
      p.pos = end + 1;
      quoted = true;
      continue;
    }
    if (c === '"') {
      const q = parseDoubleQuoted(p);
      value += q.value;
      dynamic ||= q.dynamic;
      runtime ||= q.dynamic;
      quoted = true;
      continue;
    }
    if (c === '$') {
      const d = parseDollar(p, false);
      value += d.value;
      dynamic ||= d.dynamic;
      runtime ||= d.runtime;
      quoted ||= d.quoted;
      continue;
    }
    if (c === '`') {
      value += parseBackticks(p, false);
      dynamic = runtime = true;
      continue;
    }
    // Globs and brace expansion turn one written word into other words (`git {push,status}`).
    if (c === '*' || c === '?') dynamic = runtime = true;
    if (c === '[') bracket = true;
    if (c === ']' && bracket) dynamic = runtime = true;
    if (c === '{') braceOpen = true;
    if (braceOpen && (c === ',' || (c === '.' && src[p.pos + 1] === '.'))) braceList = true;
    if (c === '}' && braceList) dynamic = runtime = true;
    value += c;
    p.pos++;
  }
  return { value, raw: src.slice(start, p.pos), dynamic, quoted, runtime };
}

function parseDoubleQuoted(p: Parser): { value: string; dynamic: boolean } {
  const { src } = p;
  p.pos++;
  let value = '';
  let dynamic = false;
  for (;;) {
    const c = src[p.pos];
    if (c === undefined) fail('unbalanced double quote');
    if (c === '"') {
      p.pos++;
      return { value, dynamic };
    }
    if (c === '\\') {
      const n = src[p.pos + 1];
      if (n === undefined) fail('unbalanced double quote');
      if (n === '\n') {
        p.pos += 2;
      } else if (n === '$' || n === '`' || n === '"' || n === '\\') {
        value += n;
        p.pos += 2;
      } else {
        value += c;
        p.pos++;
      }
      continue;
    }
    if (c === '$') {
      const d = parseDollar(p, true);
      value += d.value;
      dynamic ||= d.dynamic;
      continue;
    }
    if (c === '`') {
      value += parseBackticks(p, true);
      dynamic = true;
      continue;
    }
    value += c;
    p.pos++;
  }
}

interface Dollar {
  value: string;
  dynamic: boolean;
  /** Decided at run time: everything dynamic except a `$'…'` string, which is decoded exactly. */
  runtime: boolean;
  quoted: boolean;
}

/** `$…` in any form. The value of an expansion is its source text; the caller marks it dynamic. */
function parseDollar(p: Parser, inDouble: boolean): Dollar {
  const { src } = p;
  const n = src[p.pos + 1];
  const expansion = (value: string, quoted = false): Dollar => ({
    value,
    dynamic: true,
    runtime: true,
    quoted,
  });
  if (n === '(') return expansion(parseSubstitution(p, 2));
  if (n === '{') return expansion(parseParameter(p, inDouble));
  if (!inDouble && n === "'") return { value: parseAnsiC(p), dynamic: true, runtime: false, quoted: true };
  // `$"…"` is translated through the locale's message catalog: its value is not the text written.
  if (!inDouble && n === '"') {
    p.pos++;
    return expansion(parseDoubleQuoted(p).value, true);
  }
  if (n !== undefined && /[A-Za-z_]/.test(n)) {
    let end = p.pos + 2;
    while (end < src.length && /[A-Za-z0-9_]/.test(src[end] as string)) end++;
    const value = src.slice(p.pos, end);
    p.pos = end;
    return expansion(value);
  }
  if (n !== undefined && /[0-9@*#?$!-]/.test(n)) {
    p.pos += 2;
    return expansion(`$${n}`);
  }
  p.pos++;
  return { value: '$', dynamic: false, runtime: false, quoted: false };
}

/** `$( … )`, `<( … )` or `>( … )` (`open` is the length of the opener): the content is a list of its own. */
function parseSubstitution(p: Parser, open: number): string {
  const start = p.pos;
  p.pos += open;
  enter(p);
  parseList(p, ')');
  p.depth--;
  return p.src.slice(start, p.pos);
}

/** `${ … }`; command substitutions inside it are parsed like any other. */
function parseParameter(p: Parser, inDouble: boolean): string {
  const { src } = p;
  const start = p.pos;
  p.pos += 2;
  enter(p);
  for (;;) {
    const c = src[p.pos];
    if (c === undefined) fail('unbalanced "${": it is never closed');
    if (c === '}') {
      p.pos++;
      break;
    }
    if (c === '\\') {
      if (src[p.pos + 1] === undefined) fail('the command ends with a backslash');
      p.pos += 2;
    } else if (c === "'" || c === '"') {
      // Shells disagree on quotes inside "${…}"; guessing wrong would misplace the closing brace.
      if (inDouble) fail('quotes inside "${…}" are not analysed');
      if (c === '"') parseDoubleQuoted(p);
      else {
        const end = src.indexOf("'", p.pos + 1);
        if (end < 0) fail('unbalanced single quote');
        p.pos = end + 1;
      }
    } else if (c === '$') {
      parseDollar(p, false);
    } else if (c === '`') {
      parseBackticks(p, inDouble);
    } else {
      p.pos++;
    }
  }
  p.depth--;
  return src.slice(start, p.pos);
}

/** `` `…` ``: unescape `\$`, `` \` `` and `\\` (and `\"` inside double quotes), then parse the content. */
function parseBackticks(p: Parser, inDouble: boolean): string {
  const { src } = p;
  const start = p.pos;
  p.pos++;
  let inner = '';
  for (;;) {
    const c = src[p.pos];
    if (c === undefined) fail('unbalanced backtick');
    if (c === '`') {
      p.pos++;
      break;
    }
    if (c === '\\') {
      const n = src[p.pos + 1];
      if (n === undefined) fail('unbalanced backtick');
      if (n === '$' || n === '`' || n === '\\' || (inDouble && n === '"')) {
        inner += n;
        p.pos += 2;
        continue;
      }
    }
    inner += c;
    p.pos++;
  }
  enter(p);
  parseSource(inner, p.depth, p.limits, p.out, p.piped);
  p.depth--;
  return src.slice(start, p.pos);
}

/** `$'…'`, decoded the way bash does so deny rules see `$'\x72m'` as `rm`. */
function parseAnsiC(p: Parser): string {
  const { src } = p;
  let i = p.pos + 2;
  for (;;) {
    const c = src[i];
    if (c === undefined) fail("unbalanced $'…' quote");
    if (c === "'") break;
    i += c === '\\' ? 2 : 1;
  }
  const body = src.slice(p.pos + 2, i);
  p.pos = i + 1;
  return decodeAnsiC(body);
}

const SIMPLE_ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

function decodeAnsiC(body: string): string {
  return body.replace(
    /\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)/gs,
    (all, esc: string) => {
      const head = esc[0] as string;
      if (head === 'x' || head === 'u' || head === 'U') {
        const code = parseInt(esc.slice(1), 16);
        return code <= 0x10ffff ? String.fromCodePoint(code) : all;
      }
      if (/[0-7]/.test(head)) return String.fromCharCode(parseInt(esc, 8) & 0xff);
      if (head === 'c' && esc.length === 2) return String.fromCharCode(esc.charCodeAt(1) & 0x1f);
      return SIMPLE_ESCAPES[head] ?? all;
    },
  );
}
