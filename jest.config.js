/**
 * One runner for the three tiers: `*.spec.ts` (pure), `*.int.spec.ts` (service against real
 * Postgres and NATS) and `test/**` (system, through the gateway over HTTP). Type checking is a
 * separate step (`npm run typecheck`), so ts-jest only transpiles.
 */
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  testEnvironmentOptions: { customExportConditions: ['development', 'node', 'require', 'default'] },
  roots: ['<rootDir>/libs', '<rootDir>/services', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }] },
  maxWorkers: 2,
  testTimeout: 60_000,
  setupFiles: ['<rootDir>/test/setup-env.js'],
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
};
