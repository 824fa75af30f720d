import 'reflect-metadata';
import { afterAll, beforeAll } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { startGateway, type RunningGateway } from '../../src/server.js';
import { createLogger } from '../../src/shared/logging.js';
import { createTestDatabase, type TestDatabase } from './db.js';

export interface TestGateway extends RunningGateway {
  db: TestDatabase;
  config: Config;
  /** Stops the gateway and drops its database. */
  close(): Promise<void>;
}

/**
 * A real gateway on an ephemeral port over its own fresh PostgreSQL database, configured from an
 * environment like the one `npm start` reads.
 */
export async function startTestGateway(env: Record<string, string> = {}): Promise<TestGateway> {
  const db = await createTestDatabase();
  const config = loadConfig({
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: db.url,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...env,
  });
  const log = createLogger(config.logLevel);
  try {
    const running = await startGateway(config, log);
    return {
      ...running,
      db,
      config,
      close: async () => {
        await running.stop();
        await db.drop();
      },
    };
  } catch (error) {
    await db.drop();
    throw error;
  }
}

/**
 * Starts a test gateway before the file's tests and closes it (dropping its database) after them.
 * The returned object is filled in by `beforeAll`; use it inside tests and later hooks.
 */
export function useTestGateway(env: Record<string, string> = {}): TestGateway {
  const handle = {} as TestGateway;
  beforeAll(async () => {
    Object.assign(handle, await startTestGateway(env));
  });
  afterAll(async () => {
    await handle.close?.();
  });
  return handle;
}
