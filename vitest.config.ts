import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 90_000,
    // Each file gets its own PostgreSQL database; two cores run two files at a time.
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
