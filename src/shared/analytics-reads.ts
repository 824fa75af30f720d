import type { MikroORM } from '@mikro-orm/postgresql';

/** What /metrics says of the read replica. */
export interface ReplicaStatus {
  /** Whether the replica answered the probe just now. */
  up: boolean;
  /** How far its replay is behind the primary's last commit, in seconds (0 when it has replayed all it received); null when unknown. */
  lagSeconds: number | null;
}

/**
 * Where the analytics (usage lists, summaries, timeseries, the leaderboard, the margin report) run their
 * read-only SQL: the read replica of DATABASE_READ_URL when one is set (src/db/read-replica.ts), else the
 * primary. Only those repositories are handed this; everything that must see the last write (balances, holds,
 * keys, the ledger, invoices, sessions) keeps its MikroORM instance, which knows nothing of the replica, so no
 * read can drift there by a default or an oversight.
 */
export interface AnalyticsReads {
  /** Runs one read-only statement (`?` placeholders) where analytics read: it may be behind the primary by the replica's lag. */
  query<T>(sql: string, params: unknown[]): Promise<T>;
  /** Runs it on the primary: for a lookup that must find what was just written when the replica has not replayed it yet. */
  primary<T>(sql: string, params: unknown[]): Promise<T>;
  /** The replica's state for /metrics; absent when analytics read the primary. */
  status?(): Promise<ReplicaStatus>;
}

/** Analytics on the primary: DATABASE_READ_URL unset (and services built without a database's reads, as benches are). */
export function primaryReads(orm: MikroORM): AnalyticsReads {
  const run = <T>(sql: string, params: unknown[]) => orm.em.fork().execute(sql, params) as Promise<T>;
  return { query: run, primary: run };
}
