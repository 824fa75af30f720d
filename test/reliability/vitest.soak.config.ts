import path from 'node:path';
import { defineConfig } from 'vitest/config';
import base, { GLOBAL_SETUP } from '../../vitest.config.js';

/** `npm run soak`: only the soak run (test/reliability/soak.ts), never part of `npm test`. */
const root = path.resolve(import.meta.dirname, '../..');
// The lanes are `npm test`'s: the soak is one file of its own, with the setup every database lane has.
const { projects: _lanes, ...shared } = base.test ?? {};
export default defineConfig({
  ...base,
  root,
  test: {
    ...shared,
    include: ['test/reliability/soak.ts'],
    globalSetup: GLOBAL_SETUP,
    testTimeout: 60 * 60_000,
    reporters: ['default'],
  },
});
