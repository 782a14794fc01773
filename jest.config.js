/** One jest run for every package: ts-jest transpiles (type-checking is `tsc -b`). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages'],
  testMatch: ['**/test/**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json' }] },
  moduleNameMapper: { '^@registry/(raft|store|acl|ca|server|cli)$': '<rootDir>/packages/$1/src' },
  testTimeout: 60000,
  maxWorkers: 2,
  // Cluster tests spawn real servers; if one ever leaves a socket open, CI must still finish.
  forceExit: true,
};
