import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

/** Set by CI runners (and by .ci/run): CI keeps the two workers its suite was sized for, whatever the machine. */
const inCi = Boolean(process.env.CI) && process.env.CI !== 'false' && process.env.CI !== '0';
export const WORKERS = inCi ? 2 : availableParallelism();

/** A PostgreSQL to create per-file databases in (embedded when none answers) and Redis: every lane but unit. */
export const GLOBAL_SETUP = ['test/helpers/global-setup.ts'];

/**
 * Files whose assertions are measured times under load (percentiles, medians, ratios of timings, timer samples):
 * they run in the timing lane, alone and one at a time, after every other lane, so no other file's load is in
 * their figures. Deadlines with wide margins (a shutdown within grace + 4 s, a timeout under 10 s) stay in their lanes.
 */
export const TIMING_FILES = [
  'test/browser/cabinet-speed.test.ts', // the dashboard of 100,000 usage events: median load under 1 s
  'test/reliability/slow-loris.test.ts', // normal requests' p95 during and after 100 slow-loris connections
  'test/reliability/upstream-health.test.ts', // p99 within the healthy p99 + 50 ms while an upstream goes bad
  'test/reliability/client-faults.test.ts', // upstream calls cancelled within 1 s of 1,000 aborts; others' p95 beside a slow reader
  'test/reliability/crash.test.ts', // answered-but-unsettled requests only from the last second before a SIGKILL
  'test/security/accounts.test.ts', // an unknown login answers in about the time of a wrong password (median ratio)
  'test/unit/loop-delay.test.ts', // how often, and how late, the event-loop delay timer fires
];

const lane = (name: string, include: string[], own: { globalSetup?: string[] } = {}) => ({
  extends: true as const,
  test: { name, include, exclude: [...configDefaults.exclude, ...TIMING_FILES], ...own },
});

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS (main) and ESM (module) builds; Node, Apollo and type-graphql load the CJS one.
    // Our sources must see the same copy, or schema objects cross "realms" and graphql refuses them.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 90_000,
    // Each file gets its own PostgreSQL database; a worker per core runs that many files at a time.
    pool: 'forks',
    maxWorkers: WORKERS,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    // `npm test` runs every lane; `vitest run --project <name>` one of them (`npm run test:unit` needs no build).
    projects: [
      lane('unit', ['test/unit/**/*.test.ts']),
      lane('integration', ['test/integration/**/*.test.ts', 'test/security/**/*.test.ts'], { globalSetup: GLOBAL_SETUP }),
      lane('e2e', ['test/e2e/**/*.test.ts', 'test/reliability/**/*.test.ts', 'test/browser/**/*.test.ts'], { globalSetup: GLOBAL_SETUP }),
      {
        extends: true,
        // After the other lanes (a higher group runs once the lower ones are done), one file at a time.
        test: { name: 'timing', include: TIMING_FILES, globalSetup: GLOBAL_SETUP, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
