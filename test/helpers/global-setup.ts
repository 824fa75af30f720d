import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { postgresAnswers, startEmbeddedPostgres } from '../../src/db/embedded-postgres.js';
import { randomSecret } from '../../src/shared/ids.js';
import { createLogger } from '../../src/shared/logging.js';
import { adminDatabaseUrl } from './db.js';

/**
 * Before any test: a PostgreSQL to create per-file databases in, and Redis.
 * - PostgreSQL: TEST_DATABASE_ADMIN_URL when set; else the machine's at 127.0.0.1:5432 (TEST_POSTGRES_PORT);
 *   when none answers there, an embedded one for this run (in a temp directory, removed at the end), so
 *   `npm test` works on a machine without PostgreSQL.
 * - Redis (TEST_REDIS_URL, else 127.0.0.1:6379) cannot be embedded: when it does not answer, one line says what to start.
 */
export default async function setup(): Promise<() => Promise<void>> {
  let teardown = async () => undefined;
  if (!process.env.TEST_DATABASE_ADMIN_URL && !(await postgresAnswers(adminDatabaseUrl()))) {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'baikal-test-pg-'));
    // mkdtemp makes it private; as root the cluster runs as `postgres`, which must reach it.
    await chmod(dataDir, 0o755);
    const password = randomSecret(16);
    const port = await freePort();
    process.stdout.write(`[test] no PostgreSQL answers at ${adminDatabaseUrl()}: starting an embedded one on 127.0.0.1:${port} for this run\n`);
    const cluster = await startEmbeddedPostgres({ dataDir, port, password, log: createLogger('warn') });
    // Read by every test worker and helper (workers start after this setup, with this environment).
    process.env.TEST_DATABASE_ADMIN_URL = `postgresql://postgres:${password}@127.0.0.1:${port}/postgres`;
    teardown = async () => {
      await cluster.stop();
      await rm(dataDir, { recursive: true, force: true });
    };
  }

  const client = new pg.Client({ connectionString: adminDatabaseUrl(), connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    await teardown();
    throw new Error(`Tests need PostgreSQL at ${redacted(adminDatabaseUrl())} (set TEST_DATABASE_ADMIN_URL): ${(error as Error).message}`);
  } finally {
    await client.end().catch(() => undefined);
  }

  const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const redis = new Redis(redisUrl, { lazyConnect: true, connectTimeout: 3_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
  } catch {
    await teardown();
    throw new Error(`Tests need Redis at ${redisUrl}: start it (e.g. \`redis-server --daemonize yes\`) or set TEST_REDIS_URL`);
  } finally {
    redis.disconnect();
  }
  return teardown;
}

function redacted(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
