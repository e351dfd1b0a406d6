import { describeRoot, exactPlaceholder, placeholdersIn, type PathPart, type Reference } from './references';

/** A reference that cannot be resolved at run time: the step fails with this message. */
export class ReferenceError extends Error {
  override readonly name = 'ReferenceError';
}

export interface ResolutionContext {
  /** Plan step ids in order (for steps.N and last). */
  readonly stepIds: readonly string[];
  /** Position of the step whose arguments are being resolved. */
  readonly currentIndex: number;
  /** Results of completed steps by id. */
  readonly results: ReadonlyMap<string, unknown>;
  readonly inputs: Readonly<Record<string, unknown>>;
}

function follow(value: unknown, path: PathPart[], ref: Reference): unknown {
  let current = value;
  let walked = describeRoot(ref.root) + (ref.root.kind === 'input' ? '' : '.result');
  for (const part of path) {
    walked += typeof part === 'number' ? `[${part}]` : `.${part}`;
    if (typeof part === 'number') {
      if (!Array.isArray(current) || part >= current.length)
        throw new ReferenceError(`${ref.raw}: ${walked} does not exist`);
      current = current[part];
    } else {
      if (
        current === null ||
        typeof current !== 'object' ||
        Array.isArray(current) ||
        !Object.hasOwn(current, part)
      ) {
        throw new ReferenceError(`${ref.raw}: ${walked} does not exist`);
      }
      current = (current as Record<string, unknown>)[part];
    }
  }
  return current;
}

export function resolveReference(ref: Reference, ctx: ResolutionContext): unknown {
  const root = ref.root;
  if (root.kind === 'input') {
    if (!Object.hasOwn(ctx.inputs, root.name))
      throw new ReferenceError(`${ref.raw}: input ${root.name} was not given`);
    return follow(ctx.inputs[root.name], ref.path, ref);
  }
  const id =
    root.kind === 'node'
      ? root.id
      : root.kind === 'last'
        ? ctx.stepIds[ctx.currentIndex - 1]
        : ctx.stepIds[root.index];
  if (id === undefined || !ctx.results.has(id)) {
    throw new ReferenceError(
      `${ref.raw}: step ${id ?? describeRoot(root)} has no result (it has not completed)`,
    );
  }
  return follow(ctx.results.get(id), ref.path, ref);
}

function render(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return JSON.stringify(value);
}

/**
 * Substitutes every reference in a step's arguments: an exact placeholder becomes the value (any
 * JSON type), placeholders inside text render as text. Throws ReferenceError on the first one that
 * does not resolve.
 */
export function resolveArguments(args: unknown, ctx: ResolutionContext): unknown {
  if (typeof args === 'string') {
    const exact = exactPlaceholder(args);
    if (exact) {
      if (!exact.ok) throw new ReferenceError(exact.error);
      return resolveReference(exact.ref, ctx);
    }
    if (!args.includes('{{')) return args;
    for (const p of placeholdersIn(args)) if (!p.ok) throw new ReferenceError(p.error);
    return args.replace(/\{\{(.*?)\}\}/gs, (raw) => {
      const parsed = exactPlaceholder(raw);
      if (!parsed?.ok) throw new ReferenceError(`${raw} is not a reference`);
      return render(resolveReference(parsed.ref, ctx));
    });
  }
  if (Array.isArray(args)) return args.map((a) => resolveArguments(a, ctx));
  if (args && typeof args === 'object') {
    return Object.fromEntries(
      Object.entries(args as Record<string, unknown>).map(([k, v]) => [k, resolveArguments(v, ctx)]),
    );
  }
  return args;
}
