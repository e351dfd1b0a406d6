import { InputEnumSource, isRecord, PICKER_FILE_FORMAT, type FileGrantRequest } from '@switchyard/contracts';

/** `@file:<name>`: a grant name ends where identifier characters end. */
const PLACEHOLDER = /@file:([A-Za-z_][A-Za-z0-9_-]{0,63})/g;
const FILE_PLACEHOLDER_PREFIX = '@file:';

/** `"x-switchyard-auto": "shared-directory"` makes an input a fresh per-run directory. */
const AUTO_KEYWORD = 'x-switchyard-auto';
const SHARED_DIRECTORY = 'shared-directory';
/** `"x-switchyard-enum": {tool, valueField?, labelField?}` feeds an input's dropdown from a list tool. */
const ENUM_KEYWORD = 'x-switchyard-enum';

export interface FileInputs {
  /** `format: "switchyard-file"`: a file picked (uploaded) when the run starts. */
  readonly pickers: readonly string[];
  /** `x-switchyard-auto: shared-directory`: filled by the run with its own directory. */
  readonly sharedDirectories: readonly string[];
  /** `x-switchyard-enum`: a list tool feeds the input's choices. */
  readonly enums: ReadonlyMap<string, InputEnumSource>;
}

/** The inputs of a schema that are files, directories or live choices. */
export function fileInputsOf(schema: unknown): FileInputs {
  const props = isRecord(schema) && isRecord(schema['properties']) ? schema['properties'] : {};
  const pickers: string[] = [];
  const sharedDirectories: string[] = [];
  const enums = new Map<string, InputEnumSource>();
  for (const [name, p] of Object.entries(props)) {
    if (!isRecord(p)) continue;
    if (p['format'] === PICKER_FILE_FORMAT) pickers.push(name);
    if (p[AUTO_KEYWORD] === SHARED_DIRECTORY) sharedDirectories.push(name);
    const source = InputEnumSource.safeParse(p[ENUM_KEYWORD]);
    if (source.success) enums.set(name, source.data);
  }
  return { pickers, sharedDirectories, enums };
}

export function filePlaceholder(name: string): string {
  return `${FILE_PLACEHOLDER_PREFIX}${name}`;
}

/** Grant names a value mentions as `@file:<name>`, anywhere in its strings. */
export function fileNamesIn(value: unknown, into = new Set<string>()): Set<string> {
  if (typeof value === 'string') {
    for (const m of value.matchAll(PLACEHOLDER)) into.add(m[1] as string);
  } else if (Array.isArray(value)) {
    for (const v of value) fileNamesIn(v, into);
  } else if (isRecord(value)) {
    for (const v of Object.values(value)) fileNamesIn(v, into);
  }
  return into;
}

/**
 * Replaces every `@file:<name>` in the strings of `value` (an exact placeholder and one inside text
 * alike) with `pathOf(name)`. Keys are left alone. `pathOf` throws for a name it cannot bind.
 */
export function bindFilePlaceholders(value: unknown, pathOf: (name: string) => string): unknown {
  if (typeof value === 'string')
    return value.includes(FILE_PLACEHOLDER_PREFIX)
      ? value.replace(PLACEHOLDER, (_, name: string) => pathOf(name))
      : value;
  if (Array.isArray(value)) return value.map((v) => bindFilePlaceholders(v, pathOf));
  if (isRecord(value))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, bindFilePlaceholders(v, pathOf)]));
  return value;
}

export interface FileBinding {
  /** The grants to make: the caller's, plus a shared directory per auto input the caller did not give. */
  readonly grants: FileGrantRequest[];
  /** Inputs as given, with every picker and shared-directory input set to its `@file:<name>`. */
  readonly inputs: Record<string, unknown>;
  /** What does not fit: `path` and `message` per problem. */
  readonly issues: { path: string; message: string }[];
}

/**
 * How a start of a workflow fills its file inputs: a shared-directory input gets a directory of its
 * own (named after the input) and the value `@file:<input>`; a picker input takes the caller's grant
 * of the same name (uploaded files or a workspace path, never a shared directory) and the same value.
 * A value the caller typed for either is refused: the run decides those paths.
 */
export function bindFileInputs(
  schema: unknown,
  inputs: Record<string, unknown>,
  given: readonly FileGrantRequest[],
): FileBinding {
  const { pickers, sharedDirectories } = fileInputsOf(schema);
  const byName = new Map(given.map((g) => [g.name, g]));
  const grants = [...given];
  const bound: Record<string, unknown> = { ...inputs };
  const issues: { path: string; message: string }[] = [];
  for (const name of sharedDirectories) {
    const g = byName.get(name);
    if (g && !('createSharedDirectory' in g))
      issues.push({ path: `files.${name}`, message: 'this input is a shared directory the run creates' });
    else if (!g) grants.push({ name, createSharedDirectory: true });
    if (inputs[name] !== undefined && inputs[name] !== filePlaceholder(name))
      issues.push({
        path: `inputs.${name}`,
        message: 'filled by the run (a shared directory): leave it out',
      });
    bound[name] = filePlaceholder(name);
  }
  for (const name of pickers) {
    const g = byName.get(name);
    if (g && 'createSharedDirectory' in g)
      issues.push({
        path: `files.${name}`,
        message: 'a file input takes uploaded files or a workspace path',
      });
    if (inputs[name] !== undefined && inputs[name] !== filePlaceholder(name))
      issues.push({
        path: `inputs.${name}`,
        message: `a file input is given as a grant in files ({"name": "${name}", "refs": [...]}), not as a value`,
      });
    if (g) bound[name] = filePlaceholder(name);
    else delete bound[name];
  }
  return { grants, inputs: bound, issues };
}
