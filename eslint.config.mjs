import { builtinModules } from 'node:module';
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import reactHooks from 'eslint-plugin-react-hooks';

const TESTS = ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts'];

const TRANSPORTS = ['nats', 'ioredis', 'bullmq', '@prisma/client', '@prisma/adapter-pg', 'pg'].map(
  (name) => ({
    name,
    message: 'import it through libs/server/* (bus, queue, db) instead',
  }),
);

/**
 * An app reaches tables only through its own repositories (libs/server/db-<owner>, injected): not through
 * the service's Prisma client or a pg pool, which would reach every service's tables. Tests may seed.
 */
const RAW_DATABASE = [
  {
    name: '@switchyard/server-db',
    importNames: ['Prisma', 'PrismaClient', 'createPrisma', 'createPgPool', 'PgPool', 'PRISMA'],
    message:
      "an app reaches its tables through its repositories (libs/server/db-<owner>), not the database's clients",
  },
  {
    name: '@switchyard/server-runtime',
    importNames: ['PRISMA'],
    message:
      "an app reaches its tables through its repositories (libs/server/db-<owner>), not the database's clients",
  },
];

/**
 * Data ownership (DESIGN.md): each service's tables have one repository lib, tagged with the owner's
 * scope and `db:<name>`, so the scope constraints below keep an app out of another's tables. The run
 * log's read-only face (db-run-events, `scope:run-events`) is open to the gateway (SSE replay) and the
 * executor (whose db-runs writes it).
 */
const SCOPES = {
  gateway: ['scope:run-events'],
  planner: [],
  executor: ['scope:run-events'],
  'tool-registry': [],
  scheduler: [],
  web: [],
};

/**
 * Tables that tests may seed although another service owns them: owners (every test needs one), runs
 * and their events (the gateway's stream test stands in for the executor), workflows (the scheduler's
 * schedule test publishes one). Production code never gets these.
 */
const TEST_FIXTURES = ['db:identity', 'db:runs', 'db:workflows'];

const NOT_IN_BROWSER = 'libraries imported by the browser may not use Node built-ins or server-only packages';

/** The benchmark's peer engines: devDependencies of bench/ only, never part of an app or a library. */
const BENCH_PEERS = ['@dbos-inc/*', '@langchain/langgraph', '@langchain/langgraph-*'];

/** Module boundaries by tag. Only test files may import libs/testing. */
function boundaries({ tests }) {
  const t = tests ? ['type:testing'] : [];
  const fixtures = tests ? TEST_FIXTURES : [];
  return {
    enforceBuildableLibDependency: false,
    // Made by the web console's Vite build (apps/web/vite.config.mts), not a package.
    allow: ['virtual:switchyard/routes'],
    banTransitiveDependencies: true,
    depConstraints: [
      // Apps are leaves: nothing imports an app, and an app imports libs only.
      {
        sourceTag: 'type:app',
        onlyDependOnLibsWithTags: [
          'type:contracts',
          'type:infra',
          'type:util',
          'type:feature',
          'type:data',
          ...t,
        ],
      },
      {
        sourceTag: 'type:feature',
        onlyDependOnLibsWithTags: [
          'type:contracts',
          'type:infra',
          'type:util',
          'type:feature',
          'type:data',
          ...t,
        ],
      },
      // Repositories: over the shared core (libs/server/db); the run writer also over the run reader.
      {
        sourceTag: 'type:data',
        onlyDependOnLibsWithTags: ['type:contracts', 'type:infra', 'type:util', 'type:data', ...t],
      },
      {
        sourceTag: 'type:infra',
        onlyDependOnLibsWithTags: ['type:contracts', 'type:infra', 'type:util', ...t],
      },
      { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:contracts', 'type:util', ...t] },
      // Contracts run in the browser too: no Nest, no Node-only infrastructure, nothing of ours.
      {
        sourceTag: 'type:contracts',
        onlyDependOnLibsWithTags: ['type:contracts', ...t],
        bannedExternalImports: [
          '@nestjs/*',
          '@prisma/*',
          'bullmq',
          'ioredis',
          'nats',
          'pg',
          'pino',
          'node:*',
        ],
      },
      {
        sourceTag: 'type:testing',
        onlyDependOnLibsWithTags: ['type:contracts', 'type:infra', 'type:util', 'type:testing'],
      },
      {
        sourceTag: 'scope:shared',
        onlyDependOnLibsWithTags: ['scope:shared'],
        bannedExternalImports: BENCH_PEERS,
      },
      ...Object.entries(SCOPES).map(([scope, also]) => ({
        sourceTag: `scope:${scope}`,
        onlyDependOnLibsWithTags: ['scope:shared', `scope:${scope}`, ...also, ...fixtures],
        bannedExternalImports: BENCH_PEERS,
      })),
      {
        sourceTag: 'scope:run-events',
        onlyDependOnLibsWithTags: ['scope:shared', ...fixtures],
        bannedExternalImports: BENCH_PEERS,
      },
      // The CLI bootstraps the first admin owner and token.
      {
        sourceTag: 'scope:cli',
        onlyDependOnLibsWithTags: ['scope:shared', 'db:identity'],
        bannedExternalImports: BENCH_PEERS,
      },
      { sourceTag: 'scope:bench', onlyDependOnLibsWithTags: ['scope:shared'] },
    ],
  };
}

export default [
  {
    ignores: ['**/node_modules/**', '**/dist/**', 'tmp/**', '.nx/**', 'coverage/**', 'bench/results/**'],
  },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': ['error', boundaries({ tests: false })],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      '@typescript-eslint/ban-ts-comment': ['error', { 'ts-expect-error': true, 'ts-ignore': true }],
    },
  },
  {
    // The web client: hooks used by the rules of hooks; only browser-safe libraries.
    files: ['apps/web/src/**/*.ts', 'apps/web/src/**/*.tsx'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...TRANSPORTS,
            ...['pg', 'pino', 'express'].map((name) => ({ name, message: NOT_IN_BROWSER })),
          ],
          patterns: [
            {
              group: [
                'node:*',
                '@nestjs/*',
                '@prisma/*',
                '@langchain/*',
                '@switchyard/server-*',
                '@switchyard/testing',
              ],
              message: NOT_IN_BROWSER,
            },
          ],
        },
      ],
    },
  },
  {
    // Transports and ORMs stay behind libs/server/*: apps and the shared libs may not import them.
    files: ['apps/**/*.ts', 'libs/contracts/**/*.ts', 'tools/**/*.ts', 'libs/testing/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: TRANSPORTS }],
    },
  },
  {
    files: ['apps/**/*.ts'],
    ignores: TESTS,
    rules: {
      'no-restricted-imports': ['error', { paths: [...TRANSPORTS, ...RAW_DATABASE] }],
    },
  },
  {
    // The web client bundles these libraries (the browser validates and decides with the same code),
    // so they may not import Node built-ins or server-only packages; the boundaries rule's
    // bannedExternalImports misses `node:` specifiers, hence this rule, proven by
    // tools/lint/module-boundaries.spec.ts.
    files: ['libs/contracts/src/**/*.ts', 'libs/plan/src/**/*.ts', 'libs/permissions/src/**/*.ts'],
    ignores: TESTS,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...TRANSPORTS,
            ...[...builtinModules, 'pg', 'pino', 'express'].map((name) => ({
              name,
              message: NOT_IN_BROWSER,
            })),
          ],
          patterns: [
            {
              group: [
                'node:*',
                '@nestjs/*',
                '@prisma/*',
                '@langchain/*',
                '@switchyard/server-*',
                '@switchyard/testing',
              ],
              message: NOT_IN_BROWSER,
            },
          ],
        },
      ],
    },
  },
  {
    files: ['apps/**/*.ts', 'libs/**/*.ts'],
    ignores: [
      'libs/server/config/**',
      'libs/testing/**',
      '**/*.spec.ts',
      '**/*.int-spec.ts',
      '**/*.e2e-spec.ts',
    ],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'read configuration through libs/server/config' },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
        process: 'readonly',
        console: 'readonly',
        fetch: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Benchmarks are measurement harnesses: they boot stacks and read streams like the e2e tests.
    files: [...TESTS, 'bench/**/*.ts'],
    rules: { '@nx/enforce-module-boundaries': ['error', boundaries({ tests: true })] },
  },
  prettier,
];
