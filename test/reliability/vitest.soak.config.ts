import path from 'node:path';
import { defineConfig } from 'vitest/config';
import base from '../../vitest.config.js';

/** `npm run soak`: only the soak run (test/reliability/soak.ts), never part of `npm test`. */
const root = path.resolve(import.meta.dirname, '../..');
export default defineConfig({
  ...base,
  root,
  test: {
    ...base.test,
    include: ['test/reliability/soak.ts'],
    testTimeout: 60 * 60_000,
    reporters: ['default'],
  },
});
