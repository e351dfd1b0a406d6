import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

interface Case {
  readonly name: string;
  readonly file: string;
  readonly code: string;
  /** Rule that must fire, or null when the file must be clean. */
  readonly rule: RegExp | null;
}

const CASES: Case[] = [
  {
    name: 'an app importing another app',
    file: 'apps/planner/src/x.ts',
    code: "import { bootstrap } from '../../gateway/src/bootstrap';\nexport const b = bootstrap;\n",
    rule: /enforce-module-boundaries/,
  },
  {
    name: 'an app importing the testing lib outside tests',
    file: 'apps/executor/src/x.ts',
    code: "import { waitFor } from '@switchyard/testing';\nexport const w = waitFor;\n",
    rule: /enforce-module-boundaries/,
  },
  {
    name: 'contracts importing Nest',
    file: 'libs/contracts/src/x.ts',
    code: "import { Injectable } from '@nestjs/common';\nexport const i = Injectable;\n",
    rule: /enforce-module-boundaries/,
  },
  {
    name: 'contracts importing a server lib',
    file: 'libs/contracts/src/x.ts',
    code: "import { Bus } from '@switchyard/server-bus';\nexport const b = Bus;\n",
    rule: /enforce-module-boundaries/,
  },
  {
    name: 'the permissions lib importing a node: built-in',
    file: 'libs/permissions/src/x.ts',
    code: "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;\n",
    rule: /no-restricted-imports/,
  },
  {
    name: 'the plan lib importing a bare Node built-in',
    file: 'libs/plan/src/x.ts',
    code: "import { createHash } from 'crypto';\nexport const h = createHash;\n",
    rule: /no-restricted-imports/,
  },
  {
    name: 'contracts importing a node: built-in',
    file: 'libs/contracts/src/x.ts',
    code: "import { join } from 'node:path';\nexport const j = join;\n",
    rule: /no-restricted-imports/,
  },
  {
    name: 'the permissions lib importing a server lib',
    file: 'libs/permissions/src/x.ts',
    code: "import { Bus } from '@switchyard/server-bus';\nexport const b = Bus;\n",
    rule: /enforce-module-boundaries/,
  },
  {
    name: 'the permissions lib importing contracts',
    file: 'libs/permissions/src/x.ts',
    code: "import type { PermissionMode } from '@switchyard/contracts';\nexport const m: PermissionMode = 'ask';\n",
    rule: null,
  },
  {
    name: 'an app importing nats directly',
    file: 'apps/scheduler/src/x.ts',
    code: "import { connect } from 'nats';\nexport const c = connect;\n",
    rule: /no-restricted-imports/,
  },
  {
    name: 'an app importing Prisma directly',
    file: 'apps/planner/src/x.ts',
    code: "import { PrismaClient } from '@prisma/client';\nexport const p = PrismaClient;\n",
    rule: /no-restricted-imports/,
  },
  {
    name: 'an app reading process.env',
    file: 'apps/gateway/src/x.ts',
    code: "export const port = process.env['PORT'];\n",
    rule: /no-restricted-properties/,
  },
  {
    name: 'an explicit any',
    file: 'libs/server/bus/src/x.ts',
    code: 'export const x: any = 1;\n',
    rule: /no-explicit-any/,
  },
  {
    name: 'an app importing contracts and infra libs',
    file: 'apps/planner/src/x.ts',
    code: "import { Rpc } from '@switchyard/contracts';\nimport { Bus } from '@switchyard/server-bus';\nexport const both = [Rpc, Bus];\n",
    rule: null,
  },
  {
    name: 'an app importing a benchmark peer (DBOS Transact)',
    file: 'apps/executor/src/x.ts',
    code: "import { DBOS } from '@dbos-inc/dbos-sdk';\nexport const d = DBOS;\n",
    rule: /enforce-module-boundaries/,
  },
  {
    name: 'a server lib importing a benchmark peer (LangGraph checkpointer)',
    file: 'libs/server/db/src/x.ts',
    code: "import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';\nexport const s = PostgresSaver;\n",
    rule: /enforce-module-boundaries/,
  },
  {
    name: 'an app test importing a benchmark peer (LangGraph)',
    file: 'apps/planner/src/x.spec.ts',
    code: "import { StateGraph } from '@langchain/langgraph';\nexport const g = StateGraph;\n",
    rule: /enforce-module-boundaries/,
  },
  {
    name: 'the benchmark importing its peers',
    file: 'bench/peers/x.ts',
    code: "import { DBOS } from '@dbos-inc/dbos-sdk';\nimport { StateGraph } from '@langchain/langgraph';\nexport const both = [DBOS, StateGraph];\n",
    rule: null,
  },
  {
    name: 'an app importing LangChain core (not a peer)',
    file: 'apps/planner/src/x.ts',
    code: "import { AIMessage } from '@langchain/core/messages';\nexport const m = AIMessage;\n",
    rule: null,
  },
  {
    name: 'a test file importing the testing lib',
    file: 'apps/planner/src/x.int-spec.ts',
    code: "import { waitFor } from '@switchyard/testing';\nexport const w = waitFor;\n",
    rule: null,
  },
  {
    name: 'contracts importing node:fs (bannedExternalImports alone lets it through)',
    file: 'libs/contracts/src/x.ts',
    code: "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;\n",
    rule: /no-restricted-imports/,
  },
  {
    name: 'plan importing a bare Node built-in',
    file: 'libs/plan/src/x.ts',
    code: "import { join } from 'path';\nexport const j = join;\n",
    rule: /no-restricted-imports/,
  },
  {
    name: 'permissions importing node:crypto',
    file: 'libs/permissions/src/x.ts',
    code: "import { createHash } from 'node:crypto';\nexport const h = createHash;\n",
    rule: /no-restricted-imports/,
  },
  {
    name: 'plan importing fs/promises',
    file: 'libs/plan/src/x.ts',
    code: "import { readFile } from 'fs/promises';\nexport const r = readFile;\n",
    rule: /no-restricted-imports/,
  },
  {
    name: 'plan importing a server lib',
    file: 'libs/plan/src/x.ts',
    code: "import { RunsRepository } from '@switchyard/server-db-runs';\nexport const r = RunsRepository;\n",
    rule: /no-restricted-imports/,
  },
  {
    name: 'permissions importing Nest',
    file: 'libs/permissions/src/x.ts',
    code: "import { Injectable } from '@nestjs/common';\nexport const i = Injectable;\n",
    rule: /no-restricted-imports/,
  },
  {
    name: 'a browser-safe lib importing zod, ajv and contracts',
    file: 'libs/plan/src/x.ts',
    code: "import { z } from 'zod';\nimport Ajv from 'ajv';\nimport { AgentPlan } from '@switchyard/contracts';\nexport const all = [z, Ajv, AgentPlan];\n",
    rule: null,
  },
  {
    name: 'a test of a browser-safe lib using Node',
    file: 'libs/plan/src/x.spec.ts',
    code: "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;\n",
    rule: null,
  },
  // Data ownership: each service's tables behind its own repository lib (libs/server/db-<owner>).
  {
    name: "an app importing another service's repositories (the gateway writing runs)",
    file: 'apps/gateway/src/x.ts',
    code: "import { RunsRepository } from '@switchyard/server-db-runs';\nexport const r = RunsRepository;\n",
    rule: /enforce-module-boundaries/,
  },
  {
    name: "an app importing another service's repositories (the scheduler reading workflows)",
    file: 'apps/scheduler/src/x.ts',
    code: "import { WorkflowsRepository } from '@switchyard/server-db-workflows';\nexport const w = WorkflowsRepository;\n",
    rule: /enforce-module-boundaries/,
  },
  {
    name: "an app importing another service's repositories (the planner reading tasks)",
    file: 'apps/planner/src/x.ts',
    code: "import { TasksRepository } from '@switchyard/server-db-tasks';\nexport const t = TasksRepository;\n",
    rule: /enforce-module-boundaries/,
  },
  {
    name: "an app importing another service's repositories (the executor reading tool records)",
    file: 'apps/executor/src/x.ts',
    code: "import { McpToolRepository } from '@switchyard/server-db-tools';\nexport const m = McpToolRepository;\n",
    rule: /enforce-module-boundaries/,
  },
  {
    name: "an app importing another service's repositories (the tool registry reading tokens)",
    file: 'apps/tool-registry/src/x.ts',
    code: "import { IdentityRepository } from '@switchyard/server-db-identity';\nexport const i = IdentityRepository;\n",
    rule: /enforce-module-boundaries/,
  },
  {
    name: 'the gateway importing the read-only run-events reader and its own repositories',
    file: 'apps/gateway/src/x.ts',
    code: "import { RunEventsReader } from '@switchyard/server-db-run-events';\nimport { IdentityRepository } from '@switchyard/server-db-identity';\nexport const both = [RunEventsReader, IdentityRepository];\n",
    rule: null,
  },
  {
    name: 'the executor importing its own repositories',
    file: 'apps/executor/src/x.ts',
    code: "import { PermissionsRepository, RunsRepository } from '@switchyard/server-db-runs';\nexport const both = [PermissionsRepository, RunsRepository];\n",
    rule: null,
  },
  {
    name: 'the run-events reader importing the run writer',
    file: 'libs/server/db-run-events/src/x.ts',
    code: "import { RunsRepository } from '@switchyard/server-db-runs';\nexport const r = RunsRepository;\n",
    rule: /enforce-module-boundaries/,
  },
  {
    name: 'a shared lib importing a repository lib',
    file: 'libs/server/runtime/src/x.ts',
    code: "import { TasksRepository } from '@switchyard/server-db-tasks';\nexport const t = TasksRepository;\n",
    rule: /enforce-module-boundaries/,
  },
  {
    name: 'the shared database core importing a repository lib',
    file: 'libs/server/db/src/x.ts',
    code: "import { IdentityRepository } from '@switchyard/server-db-identity';\nexport const i = IdentityRepository;\n",
    rule: /enforce-module-boundaries/,
  },
  {
    name: 'an app importing pg directly',
    file: 'apps/executor/src/x.ts',
    code: "import { Pool } from 'pg';\nexport const p = Pool;\n",
    rule: /no-restricted-imports/,
  },
  {
    name: "an app taking the service's Prisma client (every service's tables)",
    file: 'apps/gateway/src/x.ts',
    code: "import { PRISMA } from '@switchyard/server-runtime';\nexport const p = PRISMA;\n",
    rule: /no-restricted-imports/,
  },
  {
    name: 'an app opening its own pg pool',
    file: 'apps/scheduler/src/x.ts',
    code: "import { createPgPool } from '@switchyard/server-db';\nexport const c = createPgPool;\n",
    rule: /no-restricted-imports/,
  },
  {
    name: 'an app importing the shared database core for storable text and secrets',
    file: 'apps/tool-registry/src/x.ts',
    code: "import { SecretBox, storableText } from '@switchyard/server-db';\nexport const both = [SecretBox, storableText];\n",
    rule: null,
  },
  {
    name: "a test seeding another service's fixtures (owners, runs, workflows)",
    file: 'apps/scheduler/src/x.int-spec.ts',
    code: "import { createPrisma } from '@switchyard/server-db';\nimport { IdentityRepository } from '@switchyard/server-db-identity';\nimport { RunsRepository } from '@switchyard/server-db-runs';\nimport { WorkflowsRepository } from '@switchyard/server-db-workflows';\nexport const all = [createPrisma, IdentityRepository, RunsRepository, WorkflowsRepository];\n",
    rule: null,
  },
  {
    name: "a test importing another service's repositories beyond the fixtures",
    file: 'apps/gateway/src/x.int-spec.ts',
    code: "import { TasksRepository } from '@switchyard/server-db-tasks';\nexport const t = TasksRepository;\n",
    rule: /enforce-module-boundaries/,
  },
  {
    name: 'the CLI bootstrapping the admin token',
    file: 'tools/cli/x.ts',
    code: "import { IdentityRepository } from '@switchyard/server-db-identity';\nexport const i = IdentityRepository;\n",
    rule: null,
  },
  {
    name: 'the CLI importing a run repository',
    file: 'tools/cli/x.ts',
    code: "import { RunsRepository } from '@switchyard/server-db-runs';\nexport const r = RunsRepository;\n",
    rule: /enforce-module-boundaries/,
  },
];

/**
 * The architecture rules are enforced by lint, so lint must actually fail on a violation. Each case
 * lints a would-be source file with the repository's real ESLint config.
 */
describe('module boundaries (ESLint, real config)', () => {
  let results: string[][];

  beforeAll(() => {
    const env = { ...process.env, NX_DAEMON: 'false' };
    // The Nx rule reads the cached project graph; without it the rule silently skips.
    execFileSync(process.execPath, [join(ROOT, 'node_modules/nx/dist/bin/nx.js'), 'show', 'projects'], {
      cwd: ROOT,
      env,
      stdio: 'ignore',
    });
    // ESLint loads its flat config with a dynamic import, which jest's VM cannot do: lint in a child.
    const script = `
      const { ESLint } = require('eslint');
      const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));
      const eslint = new ESLint({ cwd: process.cwd() });
      Promise.all(cases.map((c) => eslint.lintText(c.code, { filePath: c.file }))).then((all) =>
        process.stdout.write(JSON.stringify(all.map(([r]) => r.messages.map((m) => (m.ruleId || 'fatal') + ': ' + m.message)))),
      );
    `;
    const out = execFileSync(process.execPath, ['-e', script], {
      cwd: ROOT,
      env,
      input: JSON.stringify(CASES.map((c) => ({ code: c.code, file: join(ROOT, c.file) }))),
    });
    results = JSON.parse(out.toString()) as string[][];
  }, 60_000);

  it.each(CASES.map((c, i) => [c.rule ? 'rejects' : 'accepts', c.name, i] as const))('%s %s', (_, __, i) => {
    const c = CASES[i] as Case;
    const found = results[i] ?? [];
    if (c.rule) expect(found.some((p) => (c.rule as RegExp).test(p))).toBe(true);
    else expect(found).toEqual([]);
  });
});
