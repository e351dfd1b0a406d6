import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { forbidsCodegen } from './codegen';
import { AgentPlan, MAX_PLAN_STEPS, type PlanIssue, type ToolDescriptor } from '@switchyard/contracts';
import { describeRoot, exactPlaceholder, jsonPath, placeholdersIn, walkStrings } from './references';

/** Limits against hostile or runaway plans. */
export const MAX_PLAN_BYTES = 256 * 1024;
export const MAX_ARGUMENT_DEPTH = 32;

/** What validation needs of a tool; effect and idempotent enable the read-only and retry checks. */
export type ToolShape = Pick<ToolDescriptor, 'inputSchema'> &
  Partial<Pick<ToolDescriptor, 'effect' | 'idempotent'>>;

export interface ValidationOptions {
  /** Tools the plan may call, with their JSON Schemas (the caller's catalog). */
  readonly tools: ReadonlyMap<string, ToolShape> | readonly (ToolShape & Pick<ToolDescriptor, 'name'>)[];
  /** Names the run's inputs declare; `{{inputs.x}}` outside it is an error. Omitted: inputs unchecked. */
  readonly inputNames?: readonly string[];
  /** Every step must use a read-effect tool (read-only batches). */
  readonly readOnly?: boolean;
}

/** Retrying is safe only for tools that read, or that declare themselves idempotent. */
export function retrySafe(tool: Partial<Pick<ToolDescriptor, 'effect' | 'idempotent'>>): boolean {
  return tool.effect === 'read' || tool.idempotent === true;
}

/**
 * Tools whose argument schemas could not be checked here: where the page's Content-Security-Policy
 * forbids compiling code (Ajv builds validators with `new Function`), arguments are not checked
 * rather than silently passed; the caller must say so (the server checks them again anyway).
 */
export interface Unchecked {
  readonly uncheckedTools?: readonly string[];
}

export type ValidationResult =
  | ({ readonly ok: true; readonly plan: AgentPlan } & Unchecked)
  | ({ readonly ok: false; readonly issues: PlanIssue[] } & Unchecked);

// No logger: a schema that will not compile is handled (and reported) where compile is called.
const ajv = addFormats(new Ajv({ allErrors: true, strict: false, logger: false }));
/**
 * Compiled validators by schema text: catalogs arrive over NATS as fresh objects on every call, so
 * identity would never hit. Bounded; the oldest entry goes first.
 */
const compiled = new Map<string, ValidateFunction | null>();
const MAX_COMPILED = 1_000;
/** The same, by schema object: a catalog kept by its caller validates without serialising its schemas. */
const compiledByObject = new WeakMap<object, ValidateFunction | null>();
/** Set once compiling fails because code generation is forbidden (a strict CSP): nothing compiles then. */
let codegenForbidden = false;

/** The validator for a schema; undefined when the schema cannot compile, 'unavailable' under a no-eval policy. */
function validatorFor(schema: Record<string, unknown>): ValidateFunction | 'unavailable' | undefined {
  if (codegenForbidden) return 'unavailable';
  const known = compiledByObject.get(schema);
  if (known !== undefined) return known ?? undefined;
  // $id would register the schema globally in Ajv (a second tool with the same id would not compile).
  const { $schema: _schema, $id: _id, ...rest } = schema;
  const key = JSON.stringify(rest);
  let v = compiled.get(key);
  if (v === undefined) {
    try {
      v = ajv.compile(rest);
    } catch (err) {
      if (forbidsCodegen(err)) {
        codegenForbidden = true;
        return 'unavailable';
      }
      v = null; // a schema Ajv cannot compile is not the plan's fault
    }
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
    compiled.set(key, v);
  }
  compiledByObject.set(schema, v);
  return v ?? undefined;
}

function depth(value: unknown, limit: number, level = 0): number {
  if (level > limit) return level;
  if (Array.isArray(value)) return Math.max(level, ...value.map((v) => depth(v, limit, level + 1)));
  if (value && typeof value === 'object')
    return Math.max(level, ...Object.values(value).map((v) => depth(v, limit, level + 1)));
  return level;
}

/** Finds one cycle in the dependency graph (as step ids, first repeated at the end), if any. */
function findCycle(deps: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (id: string): string[] | undefined => {
    state.set(id, 'visiting');
    stack.push(id);
    for (const next of deps.get(id) ?? []) {
      if (!deps.has(next)) continue;
      if (state.get(next) === 'visiting') return [...stack.slice(stack.indexOf(next)), next];
      if (!state.has(next)) {
        const found = visit(next);
        if (found) return found;
      }
    }
    stack.pop();
    state.set(id, 'done');
    return undefined;
  };
  for (const id of deps.keys()) {
    if (!state.has(id)) {
      const found = visit(id);
      if (found) return found;
    }
  }
  return undefined;
}

/** All steps a step transitively waits for. */
function ancestors(id: string, deps: Map<string, string[]>): Set<string> {
  const seen = new Set<string>();
  const todo = [...(deps.get(id) ?? [])];
  while (todo.length) {
    const next = todo.pop() as string;
    if (seen.has(next)) continue;
    seen.add(next);
    todo.push(...(deps.get(next) ?? []));
  }
  return seen;
}

/**
 * Checks a plan before any tool runs, reporting every problem with its JSON path: shape, size,
 * ids, dependencies and cycles, tools, arguments against each tool's schema (a placeholder counts
 * as a valid value of any type), and references (malformed, dangling, or to a step that is not a
 * dependency and so may not have finished).
 */
export function validatePlan(input: unknown, opts: ValidationOptions): ValidationResult {
  const issues: PlanIssue[] = [];
  const unchecked: string[] = [];
  let size: number;
  try {
    size = JSON.stringify(input ?? null).length;
  } catch {
    return { ok: false, issues: [{ path: '$', code: 'invalid', message: 'the plan is not JSON' }] };
  }
  if (size > MAX_PLAN_BYTES) {
    return {
      ok: false,
      issues: [
        { path: '$', code: 'too_large', message: `the plan is ${size} bytes; at most ${MAX_PLAN_BYTES}` },
      ],
    };
  }
  const rawSteps = (input as { steps?: unknown } | null)?.steps;
  if (Array.isArray(rawSteps) && rawSteps.length > MAX_PLAN_STEPS) {
    return {
      ok: false,
      issues: [
        {
          path: '$.steps',
          code: 'too_many_steps',
          message: `${rawSteps.length} steps; a plan has at most ${MAX_PLAN_STEPS}`,
        },
      ],
    };
  }
  const parsed = AgentPlan.safeParse(input);
  if (!parsed.success) {
    for (const i of parsed.error.issues) {
      const path = i.path.reduce<string>(
        (acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : jsonPath(acc, String(p))),
        '$',
      );
      issues.push({ path, code: 'invalid', message: i.message });
    }
    return { ok: false, issues };
  }
  const plan = parsed.data;
  const tools =
    opts.tools instanceof Map
      ? opts.tools
      : new Map((opts.tools as Array<ToolShape & Pick<ToolDescriptor, 'name'>>).map((t) => [t.name, t]));
  const ids = plan.steps.map((s) => s.id);
  /** Each id's first step: a plan's checks look ids up once per dependency and reference. */
  const firstOf = new Map<string, number>();
  ids.forEach((id, i) => firstOf.has(id) || firstOf.set(id, i));
  const deps = new Map<string, string[]>();
  const tooDeep = new Set<number>();

  plan.steps.forEach((step, i) => {
    const at = `$.steps[${i}]`;
    if (firstOf.get(step.id) !== i)
      issues.push({
        path: `${at}.id`,
        code: 'duplicate_id',
        message: `step id ${step.id} is used more than once`,
      });
    deps.set(step.id, step.dependsOn);
    step.dependsOn.forEach((dep, j) => {
      if (dep === step.id)
        issues.push({
          path: `${at}.dependsOn[${j}]`,
          code: 'self_dependency',
          message: `step ${step.id} depends on itself`,
        });
      else if (!firstOf.has(dep))
        issues.push({
          path: `${at}.dependsOn[${j}]`,
          code: 'missing_dependency',
          message: `step ${step.id} depends on ${dep}, which is not a step of this plan`,
        });
    });
    if (depth(step.arguments, MAX_ARGUMENT_DEPTH) > MAX_ARGUMENT_DEPTH) {
      tooDeep.add(i);
      issues.push({
        path: `${at}.arguments`,
        code: 'too_large',
        message: `arguments nest deeper than ${MAX_ARGUMENT_DEPTH} levels`,
      });
    }
  });

  const cycle = findCycle(new Map([...deps].map(([k, v]) => [k, v.filter((d) => d !== k)])));
  if (cycle) {
    const first = firstOf.get(cycle[0] as string) ?? 0;
    issues.push({
      path: `$.steps[${first}].dependsOn`,
      code: 'cycle',
      message: `dependency cycle: ${cycle.join(' → ')}`,
    });
  }

  plan.steps.forEach((step, i) => {
    // Refused already; walking thousands of levels would overflow the stack.
    if (tooDeep.has(i)) return;
    const at = `$.steps[${i}]`;
    // What the step waits for, found only for a step that references another (most do not).
    let before: Set<string> | undefined;
    const referencedPaths = new Set<string>();
    walkStrings(step.arguments, `${at}.arguments`, (text, path) => {
      const exact = exactPlaceholder(text);
      if (exact?.ok) referencedPaths.add(path);
      for (const p of placeholdersIn(text)) {
        if (!p.ok) {
          issues.push({ path, code: 'malformed_reference', message: p.error });
          continue;
        }
        const root = p.ref.root;
        if (root.kind === 'input') {
          if (opts.inputNames && !opts.inputNames.includes(root.name)) {
            issues.push({
              path,
              code: 'unknown_input',
              message: `${p.ref.raw}: the inputs declare no ${root.name}`,
            });
          }
          continue;
        }
        const target = root.kind === 'node' ? root.id : root.kind === 'last' ? ids[i - 1] : ids[root.index];
        if (target === undefined || !firstOf.has(target)) {
          const why =
            root.kind === 'last'
              ? 'the first step has no previous step'
              : `there is no ${describeRoot(root)} in this plan`;
          issues.push({ path, code: 'dangling_reference', message: `${p.ref.raw}: ${why}` });
        } else if (target === step.id) {
          issues.push({
            path,
            code: 'dangling_reference',
            message: `${p.ref.raw}: a step cannot use its own result`,
          });
        } else if (!cycle && !(before ??= ancestors(step.id, deps)).has(target)) {
          issues.push({
            path,
            code: 'reference_not_a_dependency',
            message: `${p.ref.raw}: step ${target} is not among the dependencies of ${step.id}, so it may not have finished; add it to dependsOn`,
          });
        }
      }
    });

    const tool = tools.get(step.tool);
    if (!tool) {
      issues.push({
        path: `${at}.tool`,
        code: 'unknown_tool',
        message: `no tool named ${step.tool} in the catalog`,
      });
      return;
    }
    if (opts.readOnly && tool.effect !== 'read') {
      issues.push({
        path: `${at}.tool`,
        code: 'not_read_only',
        message: `${step.tool} is a ${tool.effect ?? 'non-read'} tool; this run may use read tools only`,
      });
    }
    if (step.retry && step.retry.attempts > 1 && !retrySafe(tool)) {
      issues.push({
        path: `${at}.retry`,
        code: 'retry_not_allowed',
        message: `${step.tool} is a ${tool.effect ?? 'non-read'} tool that is not idempotent: retrying it could repeat its effect`,
      });
    }
    const validate = validatorFor(tool.inputSchema);
    if (validate === 'unavailable') {
      if (!unchecked.includes(step.tool)) unchecked.push(step.tool);
    } else if (validate && !validate(step.arguments)) {
      for (const e of validate.errors ?? []) {
        const parts = e.instancePath
          .split('/')
          .filter(Boolean)
          .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
        let path = `${at}.arguments`;
        for (const part of parts) path = /^\d+$/.test(part) ? `${path}[${part}]` : jsonPath(path, part);
        // A placeholder stands for a value of any type: errors at or under it do not count.
        if (
          [...referencedPaths].some((r) => path === r || path.startsWith(`${r}.`) || path.startsWith(`${r}[`))
        )
          continue;
        if (e.keyword === 'required') path = jsonPath(path, String(e.params['missingProperty']));
        issues.push({ path, code: 'invalid_arguments', message: `${step.tool}: ${e.message ?? 'invalid'}` });
      }
    }
  });

  const extra = unchecked.length ? { uncheckedTools: unchecked } : {};
  return issues.length ? { ok: false, issues, ...extra } : { ok: true, plan, ...extra };
}
