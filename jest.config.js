/**
 * One runner for the three tiers, each a jest project (`npm run test:unit`, or
 * `npx jest --selectProjects integration`): unit (`*.spec.ts` beside pure code), integration
 * (`*.int.spec.ts`: service against real Postgres and NATS) and system (`test/**`: through the
 * gateway over HTTP). Only the tiers that need Postgres, NATS and Redis find them. Type checking is
 * a separate step (`npm run typecheck`), so ts-jest only transpiles.
 */
const tier = {
  testEnvironment: 'node',
  testEnvironmentOptions: { customExportConditions: ['development', 'erp-source', 'node', 'require', 'default'] },
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }] },
  setupFiles: ['<rootDir>/test/setup-env.js'],
  // ESM sources (the client package) name the compiled `.js` of a sibling module; under jest it is the `.ts`.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
};
const infra = {
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
};

/** @type {import('jest').Config} */
module.exports = {
  // Three files at once on two cores: much of a system test's time is spent waiting (on Postgres,
  // NATS, a sweeper, a restart), and a third worker fills it (docs/testing.md has the figures).
  maxWorkers: 3,
  testTimeout: 60_000,
  projects: [
    {
      ...tier,
      displayName: 'unit',
      roots: ['<rootDir>/libs', '<rootDir>/services'],
      testMatch: ['**/*.spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', '\\.int\\.spec\\.ts$'],
    },
    {
      ...tier,
      ...infra,
      displayName: 'integration',
      roots: ['<rootDir>/libs', '<rootDir>/services'],
      testMatch: ['**/*.int.spec.ts'],
    },
    { ...tier, ...infra, displayName: 'system', roots: ['<rootDir>/test'], testMatch: ['**/*.spec.ts'] },
  ],
};
