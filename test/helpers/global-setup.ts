import pg from 'pg';
import { adminDatabaseUrl } from './db.js';

/** Fails fast, with a clear message, when the test PostgreSQL is not reachable. */
export default async function setup(): Promise<void> {
  const client = new pg.Client({ connectionString: adminDatabaseUrl(), connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    throw new Error(`Tests need PostgreSQL at ${adminDatabaseUrl()} (set TEST_DATABASE_ADMIN_URL): ${(error as Error).message}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
