import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { MikroORM, type PostgreSqlConnection } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { Config } from '../config.js';
import { prepareUsageEventsPartitioning } from '../../migrations/Migration20261130000000_usage_partitions.js';
import { ormConfig } from '../mikro-orm.config.js';
import { randomSecret } from '../shared/ids.js';
import { StartupError } from '../shared/errors.js';
import type { Logger } from '../shared/logging.js';
import { primaryReads, type AnalyticsReads } from '../shared/analytics-reads.js';
import { EmbeddedPostgresError, startEmbeddedPostgres as startCluster } from './embedded-postgres.js';
import { openReadReplica } from './read-replica.js';

export interface Database {
  orm: MikroORM;
  /** Where the analytics read: the replica of DATABASE_READ_URL, else `orm` (the primary). Nothing else reads through it. */
  reads: AnalyticsReads;
  /** Human-readable description for the log; never contains a password. */
  description: string;
  /** The connection URL with its password: handed to cluster workers, never logged. */
  url: string;
  close(): Promise<void>;
}

/** Connects to DATABASE_URL, or starts the embedded PostgreSQL under DATA_DIR when it is unset. */
export async function openDatabase(config: Config, log: Logger): Promise<Database> {
  if (config.databaseUrl) {
    const description = describeDatabase(config.databaseUrl);
    await waitForDatabase(config.databaseUrl, description, config.databaseConnectTimeoutMs, log);
    const orm = await MikroORM.init(ormConfig(config.databaseUrl, log));
    const reads = await analyticsReads(config, orm, log);
    return { orm, reads, description, url: config.databaseUrl, close: () => Promise.all([orm.close(true), reads.close()]).then(() => undefined) };
  }
  const embedded = await startEmbeddedPostgres(config, log);
  try {
    const orm = await MikroORM.init(ormConfig(embedded.url, log));
    const reads = await analyticsReads(config, orm, log);
    return {
      orm,
      reads,
      description: `embedded PostgreSQL in ${embedded.dir} on 127.0.0.1:${embedded.port}`,
      url: embedded.url,
      close: async () => {
        await Promise.all([orm.close(true), reads.close()]);
        await embedded.stop();
      },
    };
  } catch (error) {
    await embedded.stop();
    throw error;
  }
}

/** A PostgreSQL URL as the log names it: host, port and database, never the user's password. */
function describeDatabase(connectionString: string): string {
  const url = new URL(connectionString);
  return `postgresql://${url.hostname}:${url.port || 5432}${url.pathname}`;
}

/** DATABASE_READ_URL's replica, or the primary when it is unset; either closes with the database. */
async function analyticsReads(config: Config, orm: MikroORM, log: Logger): Promise<AnalyticsReads & { close(): Promise<void> }> {
  if (!config.databaseReadUrl) return { ...primaryReads(orm), close: async () => undefined };
  return openReadReplica(config.databaseReadUrl, describeDatabase(config.databaseReadUrl), orm, log);
}

/** Failures that end when the server is up: not listening yet, unreachable for now, starting up, full. */
const TRANSIENT_CONNECT_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', '57P03', '53300']);
const DATABASE_WAIT_LOG_MS = 5_000;

/**
 * Waits up to `timeoutMs` for the PostgreSQL of DATABASE_URL to accept a connection, since it may be starting
 * beside us (a compose file, a host's boot), saying so in the log every few seconds. A refusal that waiting cannot
 * cure (a wrong password or role, TLS the server does not speak), or the wait running out, is a StartupError
 * naming the server and the reason. A missing database is not a failure: MikroORM creates it.
 */
async function waitForDatabase(connectionString: string, where: string, timeoutMs: number, log: Logger): Promise<void> {
  const started = Date.now();
  let loggedAt = -Infinity;
  for (let attempt = 1; ; attempt++) {
    const client = new pg.Client({ connectionString, connectionTimeoutMillis: Math.max(1_000, Math.min(5_000, timeoutMs)) });
    client.on('error', () => {}); // a socket error after connect() failed must not become an uncaught one
    try {
      await client.connect();
      await client.end();
      if (attempt > 1) log.info({ database: where, attempts: attempt, ms: Date.now() - started }, `PostgreSQL at ${where} is up`);
      return;
    } catch (error) {
      await client.end().catch(() => {});
      const { code, message } = error as { code?: string; message: string };
      if (code === '3D000') return;
      if (!TRANSIENT_CONNECT_ERRORS.has(code ?? '') && !/timeout/i.test(message)) {
        throw new StartupError(`PostgreSQL at ${where} refused the connection: ${message}; check DATABASE_URL`);
      }
      const waited = Date.now() - started;
      if (waited >= timeoutMs) {
        throw new StartupError(`PostgreSQL at ${where} did not accept a connection within ${timeoutMs / 1000} s (${message}): start it, or check DATABASE_URL; DATABASE_CONNECT_TIMEOUT_SECONDS sets how long to wait`);
      }
      if (waited - loggedAt >= DATABASE_WAIT_LOG_MS) {
        log.warn({ database: where, err: message, waitedSeconds: Math.round(waited / 1000), timeoutSeconds: timeoutMs / 1000 }, `waiting for PostgreSQL at ${where} (${message})`);
        loggedAt = waited;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, timeoutMs - waited)));
    }
  }
}

interface EmbeddedHandle {
  url: string;
  dir: string;
  port: number;
  stop(): Promise<void>;
}

const EMBEDDED_DB = 'baikal';

async function startEmbeddedPostgres(config: Config, log: Logger): Promise<EmbeddedHandle> {
  const secretFile = path.join(config.dataDir, 'embedded-postgres.json');
  await mkdir(config.dataDir, { recursive: true });
  const port = config.embeddedPgPort || (await freePort());
  // The cluster's password, made once with it (a file left from a cluster that is gone is harmless: initdb takes it again).
  const saved = await readFile(secretFile, 'utf8').then((text) => (JSON.parse(text) as { password: string }).password, () => null);
  const password = saved ?? randomSecret(24);
  if (!saved) await writeFile(secretFile, JSON.stringify({ password }), { mode: 0o600 });
  const pg = await startCluster({ dataDir: config.dataDir, port, password, log });
  try {
    await ensureDatabase(pg.client('postgres'), EMBEDDED_DB);
  } catch (error) {
    await pg.stop();
    throw new EmbeddedPostgresError(`the embedded PostgreSQL in ${pg.dir} started but refused us (${(error as Error).message}); if ${secretFile} was lost, move ${pg.dir} away to start afresh`);
  }
  return {
    url: `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${EMBEDDED_DB}`,
    dir: pg.dir,
    port,
    stop: () => pg.stop(),
  };
}

/** Creates the application database unless it exists (also heals a first start cut short after initdb). */
async function ensureDatabase(client: pg.Client, name: string): Promise<void> {
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`create database "${name}"`);
  } finally {
    await client.end();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Applies pending migrations; returns the names applied. */
/**
 * A name for the database that another database never has, for files kept per database under DATA_DIR (the usage
 * journal): its server's address, its name and its oid (a database dropped and made again has a new one).
 */
export async function databaseIdentity(orm: MikroORM): Promise<string> {
  const [row] = await orm.em.fork().execute<{ id: string }[]>(
    `select coalesce(host(inet_server_addr()), 'local') || ':' || coalesce(inet_server_port(), 0) || '/' || current_database() || '#' || oid as id
       from pg_database where datname = current_database()`,
  );
  return createHash('sha256').update(row!.id).digest('hex').slice(0, 16);
}

export async function migrate(orm: MikroORM, log: Logger): Promise<string[]> {
  const prepared = await prepareUsagePartitioning(orm, log);
  let applied: Awaited<ReturnType<typeof orm.migrator.up>>;
  try {
    applied = await orm.migrator.up();
  } catch (error) {
    await prepared?.undo().catch((undoError: unknown) => log.error({ err: undoError }, 'could not drop the usage_events bound check after a failed migration'));
    throw error;
  }
  const names = applied.map((m) => m.name);
  if (names.length) log.info({ migrations: names }, `applied ${names.length} migration(s)`);
  else log.info('database schema is up to date');
  return names;
}

/**
 * Before usage_events is partitioned (migrations/Migration20261130000000_usage_partitions.ts), its slow parts are
 * built here, outside the migrations' transaction, while writers go on: the migration's lock then lasts
 * milliseconds. A preparation that fails is not fatal: the migration does the same under its lock.
 */
async function prepareUsagePartitioning(orm: MikroORM, log: Logger): Promise<{ undo(): Promise<void> } | null> {
  const pool = await (orm.em.getConnection() as PostgreSqlConnection).getNativeClient();
  const client = await pool.connect();
  const started = Date.now();
  try {
    const prepared = await prepareUsageEventsPartitioning(client);
    if (prepared) log.info({ ms: Date.now() - started }, 'prepared usage_events for partitioning (unique index and bound check built while writers went on)');
    return prepared && { undo: () => prepared.undo() };
  } catch (error) {
    log.warn({ err: error }, 'could not prepare usage_events for partitioning; the migration builds it under its lock');
    return null;
  } finally {
    client.release();
  }
}
