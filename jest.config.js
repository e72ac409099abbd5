// Jest: TypeScript through SWC (types are checked by `tsc --noEmit` in `npm run lint`).
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  // jose ships ES modules only: SWC compiles it to CommonJS for Jest (Node itself loads it with require).
  transform: { '^.+\\.ts$': ['@swc/jest'], '/node_modules/jose/.+\\.js$': ['@swc/jest'] },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  // The TypeScript client imports its modules as './x.js' (what Node's ESM needs once built): resolve them to './x.ts'.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  globalSetup: '<rootDir>/tests/support/global-setup.ts',
  globalTeardown: '<rootDir>/tests/support/global-teardown.ts',
  // Fails a test file whose apps answered a status the contract does not document (tests/support/statuses.ts).
  setupFilesAfterEnv: ['<rootDir>/tests/support/statuses-check.ts'],
  testTimeout: 30000,
  maxWorkers: 2,
};
