import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** A maintenance connection on the machine's PostgreSQL, used to create and drop per-test databases. */
export function adminDatabaseUrl(): string {
  return process.env.TEST_DATABASE_ADMIN_URL ?? `postgresql://postgres@127.0.0.1:${process.env.TEST_POSTGRES_PORT ?? 5432}/postgres`;
}

export interface TestDatabase {
  name: string;
  url: string;
  /** A plain client for assertions and seeding (the ledger is checked with SQL, independently of the ORM). */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<R[]>;
  drop(): Promise<void>;
}

/** Creates an empty database with a unique name; `drop()` removes it and closes connections. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `baikal_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminDatabaseUrl() });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  const url = new URL(adminDatabaseUrl());
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
  return {
    name,
    url: url.toString(),
    query: async (sql, params) => (await pool.query(sql, params)).rows,
    drop: async () => {
      await pool.end();
      const client = new pg.Client({ connectionString: adminDatabaseUrl() });
      await client.connect();
      // Let connections still closing (a pool ending in the background) go on their own first: forcing them
      // raises "terminating connection due to administrator command" in whoever still holds one.
      for (let waited = 0; waited < 3_000; waited += 100) {
        const { rows } = await client.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = $1', [name]);
        if (rows[0]!.n === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await client.query(`drop database if exists "${name}" with (force)`);
      await client.end();
    },
  };
}
