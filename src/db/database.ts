import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { Config } from '../config.js';
import { ormConfig } from '../mikro-orm.config.js';
import { randomSecret } from '../shared/ids.js';
import type { Logger } from '../shared/logging.js';
import { EmbeddedPostgresError, startEmbeddedPostgres as startCluster } from './embedded-postgres.js';

export interface Database {
  orm: MikroORM;
  /** Human-readable description for the log; never contains a password. */
  description: string;
  /** The connection URL with its password: handed to cluster workers, never logged. */
  url: string;
  close(): Promise<void>;
}

/** Connects to DATABASE_URL, or starts the embedded PostgreSQL under DATA_DIR when it is unset. */
export async function openDatabase(config: Config, log: Logger): Promise<Database> {
  if (config.databaseUrl) {
    const orm = await MikroORM.init(ormConfig(config.databaseUrl, log));
    const url = new URL(config.databaseUrl);
    return {
      orm,
      description: `postgresql://${url.hostname}:${url.port || 5432}${url.pathname}`,
      url: config.databaseUrl,
      close: () => orm.close(true),
    };
  }
  const embedded = await startEmbeddedPostgres(config, log);
  try {
    const orm = await MikroORM.init(ormConfig(embedded.url, log));
    return {
      orm,
      description: `embedded PostgreSQL in ${embedded.dir} on 127.0.0.1:${embedded.port}`,
      url: embedded.url,
      close: async () => {
        await orm.close(true);
        await embedded.stop();
      },
    };
  } catch (error) {
    await embedded.stop();
    throw error;
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
export async function migrate(orm: MikroORM, log: Logger): Promise<string[]> {
  const applied = await orm.migrator.up();
  const names = applied.map((m) => m.name);
  if (names.length) log.info({ migrations: names }, `applied ${names.length} migration(s)`);
  else log.info('database schema is up to date');
  return names;
}
