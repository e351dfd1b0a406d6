/**
 * Rule matchers: the text inside one rule line, parsed once when settings are saved so a typo is
 * reported to the person writing it instead of silently never matching.
 *
 *   Command(git status)          execute_command, word-boundary prefix of a segment
 *   Command(git:*)               the same prefix, spelled the legacy way
 *   Command(npm run * --watch)   glob over a segment's words joined by single spaces
 *   Tool(excel_*)                tool name glob (`*` any run, `?` one character)
 *   Effect(read|write|external)  the effect a tool declares
 *   Mcp(github__*), mcp__github  MCP tools (`mcp__<server>__<tool>`), glob after `mcp__`
 *   WebFetch(domain:example.com) web_fetch to that host or a subdomain of it
 */

import { globMatch } from './glob';
import { segmentCommand } from './segment';

export type ToolEffect = 'read' | 'write' | 'external';

export type Matcher =
  | { readonly kind: 'command'; readonly form: 'prefix'; readonly words: readonly string[] }
  | { readonly kind: 'command'; readonly form: 'glob'; readonly pattern: string }
  | { readonly kind: 'tool'; readonly pattern: string }
  | { readonly kind: 'effect'; readonly effect: ToolEffect }
  | { readonly kind: 'mcp'; readonly pattern: string }
  | { readonly kind: 'webfetch'; readonly domain: string };

export type CommandMatcher = Extract<Matcher, { kind: 'command' }>;

export type ParsedMatcher = { ok: true; matcher: Matcher } | { ok: false; message: string };

export interface ToolCall {
  tool: string;
  effect: ToolEffect;
  arguments: Record<string, unknown>;
  /** The tool itself asks before every call (a plugin's manifest says so), whatever the rules allow. */
  requiresApproval?: boolean;
}

/**
 * The call a gate judges, from the catalog's descriptor of the tool and the arguments: every gate
 * builds it here so a tool's own `requiresApproval` is never dropped on the way.
 */
export function toolCallOf(
  tool: {
    readonly name: string;
    readonly effect: ToolEffect;
    readonly requiresApproval?: boolean | undefined;
  },
  args: Record<string, unknown>,
): ToolCall {
  return {
    tool: tool.name,
    effect: tool.effect,
    arguments: args,
    ...(tool.requiresApproval === true ? { requiresApproval: true } : {}),
  };
}

/** The tool whose `command` argument Command rules judge. */
export const COMMAND_TOOL = 'execute_command';
/** The tool whose `url` argument WebFetch rules judge. */
export const WEB_FETCH_TOOL = 'web_fetch';

const VALID_FORMS =
  'Command(git status), Command(git:*), Tool(excel_*), Effect(read|write|external), Mcp(github__*), mcp__github or WebFetch(domain:example.com)';

const EFFECTS: readonly ToolEffect[] = ['read', 'write', 'external'];

/** Stands in for `*` while a glob spec goes through the shell tokenizer, which would mark it dynamic. */
const STAR = '\u0001';

function error(message: string): ParsedMatcher {
  return { ok: false, message };
}

export function parseMatcher(text: string): ParsedMatcher {
  const rule = text.trim();
  if (!rule) return error(`the rule is empty; write one of ${VALID_FORMS}`);
  if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(rule))
    return error('the rule contains a control character or line break; write one rule per line');
  if (rule.startsWith('mcp__')) return parseBareMcp(rule);

  const open = rule.indexOf('(');
  if (open < 0) return error(`"${rule}" is not a rule; write one of ${VALID_FORMS}`);
  const name = rule.slice(0, open).trim();
  if (!rule.endsWith(')'))
    return error(
      parenBalance(rule) > 0
        ? `unbalanced parentheses: "${name}(" is never closed; write one of ${VALID_FORMS}`
        : `unexpected text after the closing parenthesis; write one of ${VALID_FORMS}`,
    );
  const inner = rule.slice(open + 1, -1);
  if (parenBalance(inner) !== 0)
    return error(`unbalanced parentheses in "${rule}"; write one of ${VALID_FORMS}`);
  if (!inner.trim()) return error(`${name}() is empty; write one of ${VALID_FORMS}`);

  switch (name) {
    case 'Command':
      return parseCommandSpec(inner.trim());
    case 'Tool':
      return parseToolPattern(inner.trim());
    case 'Effect':
      return parseEffect(inner.trim());
    case 'Mcp':
      return parseMcpPattern(inner.trim());
    case 'WebFetch':
      return parseWebFetch(inner.trim());
    default:
      return error(`unknown rule type "${name}"${suggest(name)}; write one of ${VALID_FORMS}`);
  }
}

/** Net open parentheses, or -1 as soon as a `)` closes nothing. */
function parenBalance(text: string): number {
  let depth = 0;
  for (const c of text) {
    if (c === '(') depth++;
    if (c === ')' && --depth < 0) return -1;
  }
  return depth;
}

function suggest(name: string): string {
  const lower = name.toLowerCase();
  if (lower === 'bash' || lower === 'shell' || lower === 'exec') return ' (did you mean Command?)';
  const known = ['Command', 'Tool', 'Effect', 'Mcp', 'WebFetch'].find((k) => k.toLowerCase() === lower);
  return known ? ` (rule types are case-sensitive: did you mean ${known}?)` : '';
}

/**
 * The spec goes through the same tokenizer as the commands it will judge, so quoting means the same
 * on both sides: `Command(grep "a b")` matches the segment `grep 'a b'`.
 */
function parseCommandSpec(spec: string): ParsedMatcher {
  const legacyPrefix = spec.endsWith(':*');
  const body = legacyPrefix ? spec.slice(0, -2).trim() : spec;
  if (!body) return error('Command(:*) names no command; write e.g. Command(git:*)');
  const glob = body.includes('*');
  if (legacyPrefix && glob) return error(`use either a trailing :* or * globs in Command(${spec}), not both`);
  const parsed = segmentCommand(glob ? body.replaceAll('*', STAR) : body);
  if (!parsed.ok) return error(`Command(${spec}) is not a simple command: ${parsed.reason}`);
  const [segment, ...others] = parsed.segments;
  if (!segment || others.length > 0)
    return error(
      `Command(${spec}) must be one simple command; write one rule per command (a chain is checked segment by segment)`,
    );
  if (segment.env.length > 0)
    return error(
      `Command(${spec}) cannot include NAME=value assignments; commands with assignments are never allowed by rules`,
    );
  if (segment.redirects.length > 0)
    return error(`Command(${spec}) cannot include redirections; they are judged separately`);
  if (segment.words.length === 0) return error(`Command(${spec}) names no command`);
  if (!glob) return { ok: true, matcher: { kind: 'command', form: 'prefix', words: segment.words } };
  return {
    ok: true,
    matcher: { kind: 'command', form: 'glob', pattern: segment.words.join(' ').replaceAll(STAR, '*') },
  };
}

function parseToolPattern(pattern: string): ParsedMatcher {
  if (!/^[A-Za-z0-9_.:*?-]+$/.test(pattern))
    return error(
      `Tool(${pattern}) takes one tool name or glob (letters, digits, _ - . : and the wildcards * ?); write one rule per tool`,
    );
  return { ok: true, matcher: { kind: 'tool', pattern } };
}

function parseEffect(effect: string): ParsedMatcher {
  const found = EFFECTS.find((e) => e === effect);
  if (!found)
    return error(`Effect(${effect}) is not an effect; write Effect(read), Effect(write) or Effect(external)`);
  return { ok: true, matcher: { kind: 'effect', effect: found } };
}

function parseMcpPattern(pattern: string): ParsedMatcher {
  if (pattern.startsWith('mcp__'))
    return error(`leave out the mcp__ prefix inside Mcp(…): write Mcp(${pattern.slice(5)})`);
  if (!/^[A-Za-z0-9_*?-]+$/.test(pattern))
    return error(`Mcp(${pattern}) takes one <server>__<tool> name or glob (letters, digits, _ - and * ?)`);
  if (!pattern.includes('__') && !/[*?]/.test(pattern))
    return error(
      `Mcp(${pattern}) names no tool; write Mcp(${pattern}__*) or mcp__${pattern} for every tool of the server ${pattern}`,
    );
  return { ok: true, matcher: { kind: 'mcp', pattern } };
}

/** `mcp__github` is every tool of the server; `mcp__github__create_issue` is one tool. */
function parseBareMcp(rule: string): ParsedMatcher {
  const rest = rule.slice('mcp__'.length);
  if (!/^[A-Za-z0-9_-]+$/.test(rest))
    return error(`"${rule}" is not an MCP rule; write mcp__<server>, mcp__<server>__<tool> or Mcp(<glob>)`);
  return { ok: true, matcher: { kind: 'mcp', pattern: rest.includes('__') ? rest : `${rest}__*` } };
}

function parseWebFetch(spec: string): ParsedMatcher {
  const m = /^domain:\s*(.+)$/.exec(spec);
  if (!m) return error(`WebFetch(${spec}) must name a domain: write WebFetch(domain:example.com)`);
  const domain = normaliseDomain(m[1] as string);
  if (!domain)
    return error(
      `WebFetch(${spec}) needs a bare host name such as example.com (no scheme, port, path or wildcard; subdomains are included)`,
    );
  return { ok: true, matcher: { kind: 'webfetch', domain } };
}

/** Lower case, punycode for IDN and no trailing dot, via the WHATWG URL parser the fetch itself uses. */
function normaliseDomain(text: string): string | undefined {
  if (!/^[^\s/:@*?#\\]+$/.test(text)) return undefined;
  let url: URL;
  try {
    url = new URL(`http://${text}/`);
  } catch {
    return undefined;
  }
  if (url.port || url.username || url.pathname !== '/') return undefined;
  const host = url.hostname.replace(/\.$/, '');
  return host && !host.startsWith('.') ? host : undefined;
}

/** The host of an http(s) URL, normalised like rule domains; undefined when it does not parse. */
function hostOf(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  return parsed.hostname.replace(/\.$/, '') || undefined;
}

/** Matchers that judge the call as a whole; command matchers need segments and live in evaluate. */
export function matchesWholeCall(matcher: Exclude<Matcher, CommandMatcher>, call: ToolCall): boolean {
  switch (matcher.kind) {
    case 'tool':
      return globMatch(matcher.pattern, call.tool, { question: true });
    case 'effect':
      return call.effect === matcher.effect;
    case 'mcp':
      return (
        call.tool.startsWith('mcp__') && globMatch(matcher.pattern, call.tool.slice(5), { question: true })
      );
    case 'webfetch': {
      if (call.tool !== WEB_FETCH_TOOL) return false;
      const host = hostOf(call.arguments['url']);
      return host !== undefined && (host === matcher.domain || host.endsWith(`.${matcher.domain}`));
    }
  }
}

/** A command matcher against one command line (a segment's words or one of its views). */
export function matchesCommandWords(matcher: CommandMatcher, words: readonly string[]): boolean {
  if (matcher.form === 'glob') return globMatch(matcher.pattern, words.join(' '), { question: false });
  return matcher.words.length <= words.length && matcher.words.every((w, i) => w === words[i]);
}
