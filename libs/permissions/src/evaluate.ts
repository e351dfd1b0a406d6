/**
 * The rule step of the permission pipeline (decide.ts runs the whole of it):
 *
 *   deny rules → ask rules → what cannot be checked → the floor → allow rules → (mode default)
 *
 * Precedence is by list, never by position: a deny beats an ask beats an allow wherever each was
 * written. `none` means no rule spoke and the caller applies the permission mode's default.
 *
 * The two sides of a shell command are deliberately asymmetric. Deny and ask rules match if they
 * match any segment, seen through wrappers (`sudo rm` counts as `rm`), because missing a match there
 * lets something through. Allow rules grant only when every segment matches as written, with no
 * assignments, file-writing redirections, run-time expansions, floor commands or opaque code,
 * because a false match there runs something nobody approved.
 *
 * What the gate cannot see into, it does not allow. While command deny or ask rules are in force, a
 * segment asks when words decided at run time could spell what a rule names (`git $(echo push)`
 * against `Command(git push)`), and when it runs code the gate cannot read (`python3 -c`, opaque.ts).
 * A dangerous-command floor hit asks whatever the rules say, short of a deny.
 */

import { commandViews, looseCommandLines, type CommandViews, type View } from './command-views';
import { DEFAULT_DANGEROUS_COMMANDS, UNANALYSABLE_FLOOR_HIT, floorHitInViews } from './floor';
import {
  COMMAND_TOOL,
  matchesCommandWords,
  matchesWholeCall,
  type CommandMatcher,
  type Matcher,
  type ToolCall,
} from './matchers';
import { describeRule, type Rule, type RuleList } from './rules';
import { DEFAULT_SEGMENT_LIMITS, segmentCommand, type Segment, type SegmentLimits } from './segment';

export interface RuleDecision {
  decision: 'allow' | 'ask' | 'deny' | 'none';
  /** A sentence for the person and the model: what decided and about which part of the call. */
  reason: string;
  /** The deciding rule, e.g. `deny: Command(rm:*) (global)`. */
  rule?: string;
  /** The dangerous-command floor entry that made it ask, e.g. `git push`. */
  floor?: string;
}

export interface EvaluateOptions {
  /** Word prefixes no allow rule can grant; defaults to DEFAULT_DANGEROUS_COMMANDS, [] turns it off. */
  floor?: readonly string[];
  limits?: Partial<SegmentLimits>;
}

interface AnalysedSegment {
  segment: Segment;
  views: CommandViews;
}

type CommandAnalysis =
  | { ok: true; segments: AnalysedSegment[] }
  /** `lines` are rough command lines recovered from the text, for deny and ask rules only. */
  | { ok: false; reason: string; lines: string[][] };

/** Where a command matcher matched: the segment as written and the command line that matched. */
interface CommandHit {
  text: string;
  view: readonly string[];
  analysed: boolean;
}

export function evaluateRules(
  call: ToolCall,
  rules: readonly Rule[],
  opts: EvaluateOptions = {},
): RuleDecision {
  const limits: SegmentLimits = { ...DEFAULT_SEGMENT_LIMITS, ...opts.limits };
  const floor = opts.floor ?? DEFAULT_DANGEROUS_COMMANDS;
  // A fixed order makes the named rule, not just the decision, independent of how rules were listed.
  const ordered = [...rules].sort(canonicalOrder);
  const inList = (list: RuleList) => ordered.filter((r) => r.list === list);
  const analysis = call.tool === COMMAND_TOOL ? analyseCommand(call, limits) : undefined;

  for (const list of ['deny', 'ask'] as const) {
    for (const rule of inList(list)) {
      if (rule.matcher.kind !== 'command') {
        if (matchesWholeCall(rule.matcher, call))
          return { decision: list, reason: verb(list, rule), rule: describeRule(rule) };
        continue;
      }
      const hit = analysis && commandHit(rule.matcher, analysis, limits);
      if (hit)
        return {
          decision: list,
          reason: `${verb(list, rule)}: ${where(hit, analysis)}`,
          rule: describeRule(rule),
        };
    }
  }

  if (analysis && !analysis.ok)
    return {
      decision: 'ask',
      reason: `the command cannot be analysed (${analysis.reason}), so no allow rule can grant it; asking for approval. Simple commands joined by &&, ||, ; or | can be matched by rules`,
    };

  const allow = inList('allow');
  if (!analysis) {
    const rule = allow.find((r) => r.matcher.kind !== 'command' && matchesWholeCall(r.matcher, call));
    return rule
      ? { decision: 'allow', reason: `allowed by rule ${label(rule)}`, rule: describeRule(rule) }
      : NO_RULE;
  }
  const guards = [...inList('deny'), ...inList('ask')].flatMap((rule) =>
    rule.matcher.kind === 'command' ? [{ rule, matcher: rule.matcher }] : [],
  );
  return (
    unchecked(analysis.segments, guards) ??
    floorAsk(call, analysis.segments, allow, floor) ??
    allowCommand(call, analysis.segments, allow)
  );
}

/**
 * A segment the deny and ask rules could not be checked against: words decided at run time that
 * could spell what a rule names, or code the gate cannot read while any command rule is in force.
 */
function unchecked(
  segments: readonly AnalysedSegment[],
  guards: ReadonlyArray<{ rule: Rule; matcher: CommandMatcher }>,
): RuleDecision | undefined {
  for (const { rule, matcher } of guards) {
    for (const { segment, views } of segments) {
      const view = views.views.find((v) => couldMatch(matcher, v));
      if (view)
        return {
          decision: 'ask',
          reason: `segment ${quote(segment.text)} has words decided at run time (${quote(view.words.join(' '))}) that could make it what rule ${label(rule)} ${rule.list === 'deny' ? 'denies' : 'asks about'}; asking for approval`,
        };
    }
  }
  const first = guards[0];
  if (!first) return undefined;
  for (const { segment, views } of segments) {
    if (views.opaque.length === 0) continue;
    const more = guards.length > 1 ? ` and ${guards.length - 1} more` : '';
    return {
      decision: 'ask',
      reason: `segment ${quote(segment.text)} runs what the gate cannot read (${views.opaque.join(', ')}), so command rules such as ${label(first.rule)}${more} cannot be checked against it; asking for approval`,
    };
  }
  return undefined;
}

/**
 * Whether some run-time values of the view's dynamic words make the matcher match. A dynamic word
 * may expand to no word or to several, so everything from the first one on is unknown.
 */
function couldMatch(matcher: CommandMatcher, view: View): boolean {
  const first = view.dynamic.indexOf(true);
  if (first < 0) return false;
  if (matcher.form === 'prefix') return matcher.words.slice(0, first).every((w, i) => view.words[i] === w);
  const known = view.words.slice(0, first).join(' ');
  return globCanExtend(matcher.pattern, first > 0 ? `${known} ` : '');
}

/** Whether some text starting with `prefix` matches the glob (`*` only, as Command globs use). */
function globCanExtend(pattern: string, prefix: string): boolean {
  for (let i = 0; i < prefix.length; i++) {
    const p = pattern[i];
    if (p === '*') return true;
    if (p !== prefix[i]) return false;
  }
  return true;
}

/** The floor asks for a segment whatever the allow rules and the permission mode say. */
function floorAsk(
  call: ToolCall,
  segments: readonly AnalysedSegment[],
  allow: readonly Rule[],
  floor: readonly string[],
): RuleDecision | undefined {
  for (const { segment, views } of segments) {
    const hit = floorHitInViews(views, floor);
    if (hit === undefined) continue;
    const what =
      hit === UNANALYSABLE_FLOOR_HIT
        ? 'runs a nested command that cannot be analysed'
        : `hits the dangerous-command floor entry "${hit}"`;
    const rule = coveringRule(call, segment, allow);
    return {
      decision: 'ask',
      reason: rule
        ? `segment ${quote(segment.text)} ${what}, so allow rule ${label(rule)} does not apply; asking for approval`
        : `segment ${quote(segment.text)} ${what}, which asks for approval in every permission mode`,
      floor: hit,
    };
  }
  return undefined;
}

function coveringRule(call: ToolCall, segment: Segment, allow: readonly Rule[]): Rule | undefined {
  return (
    allow.find((r) => r.matcher.kind !== 'command' && matchesWholeCall(r.matcher, call)) ??
    allow.find((r) => r.matcher.kind === 'command' && matchesCommandWords(r.matcher, segment.words))
  );
}

const NO_RULE: RuleDecision = { decision: 'none', reason: 'no permission rule matches this call' };

function canonicalOrder(a: Rule, b: Rule): number {
  if (a.scope !== b.scope) return a.scope === 'global' ? -1 : 1;
  return a.text < b.text ? -1 : a.text > b.text ? 1 : 0;
}

function label(rule: Rule): string {
  return `${rule.text} (${rule.scope})`;
}

function verb(list: 'deny' | 'ask', rule: Rule): string {
  return list === 'deny' ? `denied by rule ${label(rule)}` : `rule ${label(rule)} requires approval`;
}

function quote(text: string): string {
  const flat = text.replace(/\s*\n\s*/g, ' ');
  return `"${flat.length > 200 ? `${flat.slice(0, 197)}...` : flat}"`;
}

function where(hit: CommandHit, analysis: CommandAnalysis): string {
  if (!analysis.ok)
    return `the command cannot be analysed (${analysis.reason}) and contains ${quote(hit.view.join(' '))}`;
  const runs = hit.view.join(' ');
  return runs === hit.text || !hit.analysed
    ? `segment ${quote(hit.text)}`
    : `segment ${quote(hit.text)} runs ${quote(runs)}`;
}

function analyseCommand(call: ToolCall, limits: SegmentLimits): CommandAnalysis {
  const command = call.arguments['command'];
  if (typeof command !== 'string')
    return { ok: false, reason: 'the command argument is not a string', lines: [] };
  const parsed = segmentCommand(command, limits);
  if (!parsed.ok) return { ok: false, reason: parsed.reason, lines: looseViews(command, limits) };
  return {
    ok: true,
    segments: parsed.segments.map((segment) => ({ segment, views: commandViews(segment, limits) })),
  };
}

function looseViews(text: string, limits: SegmentLimits): string[][] {
  return looseCommandLines(text).flatMap((line) =>
    commandViews({ words: line, env: [], dynamicWords: [], piped: false }, limits, {
      nested: false,
    }).views.map((v) => [...v.words]),
  );
}

/** The deny/ask side: any segment, any view, and a rough scan of anything that could not be parsed. */
function commandHit(
  matcher: CommandMatcher,
  analysis: CommandAnalysis,
  limits: SegmentLimits,
): CommandHit | undefined {
  if (!analysis.ok) {
    const line = analysis.lines.find((l) => matchesCommandWords(matcher, l));
    return line && { text: line.join(' '), view: line, analysed: false };
  }
  for (const { segment, views } of analysis.segments) {
    const view = views.views.find((v) => matchesCommandWords(matcher, v.words));
    if (view) return { text: segment.text, view: view.words, analysed: true };
    for (const text of views.unparsed) {
      const line = looseViews(text, limits).find((l) => matchesCommandWords(matcher, l));
      if (line) return { text: segment.text, view: line, analysed: true };
    }
  }
  return undefined;
}

/** The allow side for execute_command: every segment covered, then nothing that voids the grant. */
function allowCommand(
  call: ToolCall,
  segments: readonly AnalysedSegment[],
  allow: readonly Rule[],
): RuleDecision {
  // Tool(execute_command) or Effect(external) cover every segment, but the checks below still apply.
  const whole = allow.find((r) => r.matcher.kind !== 'command' && matchesWholeCall(r.matcher, call));
  if (segments.length === 0) {
    return whole
      ? { decision: 'allow', reason: `allowed by rule ${label(whole)}`, rule: describeRule(whole) }
      : NO_RULE;
  }
  const matching = segments.map(({ segment }) => coveringRule(call, segment, allow));
  // An opaque segment never satisfies an allow rule: the rule was written for the words, not the code.
  const opaque = segments.findIndex(({ views }, i) => views.opaque.length > 0 && matching[i] !== undefined);
  if (opaque >= 0) {
    const { segment, views } = segments[opaque] as AnalysedSegment;
    return {
      decision: 'none',
      reason: `allow rule ${label(matching[opaque] as Rule)} does not apply: segment ${quote(segment.text)} runs what the gate cannot read (${views.opaque.join(', ')})`,
    };
  }
  const missing = matching.findIndex((r) => r === undefined);
  if (missing >= 0) {
    if (!matching.some(Boolean)) return NO_RULE;
    return {
      decision: 'none',
      reason: `no allow rule matches segment ${quote((segments[missing] as AnalysedSegment).segment.text)}; a chain is allowed only when every segment matches an allow rule`,
    };
  }
  const rules = matching as Rule[];

  for (const [i, { segment }] of segments.entries()) {
    const problem = voidingProblem(segment);
    if (problem)
      return {
        decision: 'none',
        reason: `allow rule ${label(rules[i] as Rule)} does not apply: segment ${quote(segment.text)} ${problem}`,
      };
  }

  const used = [...new Set(rules)];
  return {
    decision: 'allow',
    reason:
      used.length === 1 && segments.length === 1
        ? `allowed by rule ${label(used[0] as Rule)}`
        : `allowed: every segment matches an allow rule (${used.map(label).join(', ')})`,
    rule: describeRule(used[0] as Rule),
  };
}

/** Why an allow rule that matched the words still cannot vouch for the segment, if it cannot. */
function voidingProblem(segment: Segment): string | undefined {
  if (segment.env.length > 0)
    return `sets environment variables (${segment.env.join(' ')}), which can change what the command runs`;
  const write = segment.redirects.find(writesFile);
  if (write)
    return `writes to a file (${write}); only 2>&1-style descriptor copies and /dev/null are allowed`;
  if (segment.dynamic)
    return 'contains expansions ($VAR, $(…), backticks, globs or braces) whose values cannot be checked; write the values out';
  return undefined;
}

/** Output redirections other than descriptor copies (`2>&1`, `>&2`) and /dev/null. */
function writesFile(redirect: string): boolean {
  const m = /^(\d*|&)(>>|>\||>&|<>|<&|>|<)(.*)$/s.exec(redirect);
  if (!m) return true;
  const [, fd, op, target] = m as unknown as [string, string, string, string];
  if (op === '<' || op === '<&') return false;
  if (op === '>&' && fd !== '&' && /^(\d+|-)$/.test(target)) return false;
  return target !== '/dev/null';
}

/**
 * Whether one matcher matches a call, for hook matchers and callers that need a single rule's answer.
 * A command matcher matches if it matches any segment, seen the way deny rules see it.
 */
export function matchesCall(matcher: Matcher, call: ToolCall, limits: Partial<SegmentLimits> = {}): boolean {
  if (matcher.kind !== 'command') return matchesWholeCall(matcher, call);
  if (call.tool !== COMMAND_TOOL) return false;
  const l: SegmentLimits = { ...DEFAULT_SEGMENT_LIMITS, ...limits };
  return commandHit(matcher, analyseCommand(call, l), l) !== undefined;
}
