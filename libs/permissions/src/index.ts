/**
 * Permission rules for tool calls: parsing the allow/ask/deny lists a person writes, splitting shell
 * commands into the segments they run, and deciding a call (`decideToolCall`). Pure TypeScript with
 * no Node imports, so the settings page validates rules with the same code the executor enforces
 * them with.
 */
export {
  capabilityRefusal,
  decideToolCall,
  type HookVerdict,
  type ToolCallDecision,
  type ToolCallRequest,
} from './decide';
export { DEFAULT_DANGEROUS_COMMANDS, UNANALYSABLE_FLOOR_HIT, floorHit } from './floor';
export { evaluateRules, matchesCall, type EvaluateOptions, type RuleDecision } from './evaluate';
export {
  COMMAND_TOOL,
  WEB_FETCH_TOOL,
  parseMatcher,
  toolCallOf,
  type Matcher,
  type ParsedMatcher,
  type ToolCall,
  type ToolEffect,
} from './matchers';
export {
  MAX_RULES_PER_LIST,
  MAX_RULE_LENGTH,
  describeRule,
  parseRules,
  type ParsedRules,
  type Rule,
  type RuleError,
  type RuleList,
  type RuleLists,
  type RuleScope,
} from './rules';
export {
  DEFAULT_SEGMENT_LIMITS,
  segmentCommand,
  type Segment,
  type SegmentLimits,
  type SegmentResult,
} from './segment';
