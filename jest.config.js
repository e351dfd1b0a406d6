// One jest run for all three tiers: *.spec.ts (unit, pure), *.int-spec.ts (real Postgres/NATS/Redis,
// a database per worker) and *.e2e-spec.ts (all five services as processes, through the gateway).
const { compilerOptions } = require('./tsconfig.base.json');

const moduleNameMapper = {
  ...Object.fromEntries(
    Object.entries(compilerOptions.paths).map(([alias, [target]]) => [`^${alias}$`, `<rootDir>/${target}`]),
  ),
  // The web console's route index, made by its Vite build (apps/web/vite.config.mts): the same table here.
  '^virtual:switchyard/routes$': '<rootDir>/apps/web/src/testing/route-index.ts',
};

const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  },
];

// The web client's component tests: React (automatic JSX runtime) in jsdom; stylesheets stubbed.
const swcReact = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', tsx: true },
      transform: { react: { runtime: 'automatic' } },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  },
];

const base = {
  rootDir: __dirname,
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper,
  setupFiles: ['reflect-metadata'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
};

module.exports = {
  maxWorkers: 2,
  // A worker past this after a test file is replaced by a fresh one. The unit workers grew to ~670 MB
  // of heap, and a worker that large often took longer to exit than jest waits for ("A worker process
  // has failed to exit gracefully", with no handle left open: 6 of 8 unit runs without this, 0 of 6 with).
  workerIdleMemoryLimit: '400MB',
  reporters: ['default', '<rootDir>/tools/jest/summary-reporter.js'],
  // A guard against a hang only: on a busy machine an e2e test can take minutes, and no test may fail
  // for being slow (`.ci/run --cpu-burn` proves it).
  testTimeout: 180_000,
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs,tools,bench,plugins}/**/*.spec.ts'] },
    { ...base, displayName: 'int', testMatch: ['<rootDir>/{apps,libs,tools,plugins}/**/*.int-spec.ts'] },
    {
      ...base,
      displayName: 'e2e',
      testMatch: ['<rootDir>/{apps,libs,tools,test}/**/*.e2e-spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/tools/jest/stop-leftovers.js'],
    },
    {
      displayName: 'web',
      rootDir: __dirname,
      testEnvironment: 'jsdom',
      setupFiles: ['<rootDir>/tools/jest/web-setup.js'],
      testMatch: ['<rootDir>/apps/web/src/**/*.spec.tsx'],
      // d3's packages (the run DAG's pan and zoom) are ES modules only: compiled like the sources.
      transform: { '^.+\\.(ts|tsx)$': swcReact, '/node_modules/d3-[a-z]+/.+\\.m?js$': swcReact },
      transformIgnorePatterns: ['/node_modules/(?!d3-[a-z]+/)'],
      moduleNameMapper: { ...moduleNameMapper, '\\.css$': '<rootDir>/tools/jest/style-stub.js' },
      testPathIgnorePatterns: ['/node_modules/', '/dist/'],
    },
  ],
};
