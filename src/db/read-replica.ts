import { defineConfig, MikroORM } from '@mikro-orm/postgresql';
import type { AnalyticsReads, ReplicaStatus } from '../shared/analytics-reads.js';
import type { Logger } from '../shared/logging.js';

/**
 * The read replica of DATABASE_READ_URL (a streaming standby of DATABASE_URL), where the analytics read.
 *
 * It is a MikroORM instance of its own with no entities, not MikroORM's `replicas` option: with that option every
 * `em.find` and query builder of the code base reads a replica by default (`preferReadReplicas`), and a balance,
 * a hold or a key read there could be one replay behind. Here only what is handed this object (the analytics
 * repositories, through AnalyticsReads) can reach the replica, and it can run SQL only: it knows no entity to load.
 *
 * A replica that does not answer costs no request: the query is asked of the primary, which has every row the
 * replica would have had (and newer ones). The analytics are an optional load taken off the primary, so the primary
 * answering them for a while beats a cabinet whose charts answer 503. The log says when the replica went away and
 * when it came back, and /metrics shows it (`baikal_database_replica_up`).
 */

/** After the replica failed to answer, analytics read the primary this long before one query tries it again. */
const RETRY_AFTER_MS = 5_000;
/** A replica that does not complete a connection within this is down (pg's default is to wait forever). */
const CONNECT_TIMEOUT_MS = 3_000;

/**
 * The replica's replay lag: 0 when it has replayed everything it received, else the time since the last commit it
 * replayed (the usual measure; a replay paused or slow shows as a growing number). 0 on a server not in recovery.
 */
const LAG_SQL = `select case when not pg_is_in_recovery() or pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() then 0
  else extract(epoch from now() - pg_last_xact_replay_timestamp()) end::float8 as lag`;

/** Failures that say the replica cannot serve at all (down, unreachable, starting, full, refusing us), not that a query failed. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', '57P01', '57P02', '57P03', '53300', '3D000', '28000', '28P01']);

function unreachable(error: { code?: unknown; message?: string }): boolean {
  const code = typeof error.code === 'string' ? error.code : '';
  return UNREACHABLE_CODES.has(code) || code.startsWith('08') || /connection terminated|timeout exceeded when trying to connect|could not connect/i.test(error.message ?? '');
}

export class ReplicaReads implements AnalyticsReads {
  private down = false;
  /** While down: when a query may try the replica again. */
  private retryAt = 0;

  constructor(
    private readonly replica: MikroORM,
    private readonly primaryOrm: MikroORM,
    /** The replica as the log names it (no password). */
    private readonly where: string,
    private readonly log: Logger,
    private readonly retryAfterMs = RETRY_AFTER_MS,
  ) {}

  async query<T>(sql: string, params: unknown[]): Promise<T> {
    if (this.down) {
      if (Date.now() < this.retryAt) return this.primary(sql, params);
      this.retryAt = Date.now() + this.retryAfterMs; // one query tries it; the others keep reading the primary meanwhile
    }
    let rows: T;
    try {
      rows = (await this.replica.em.fork().execute(sql, params)) as T;
    } catch (error) {
      this.failed(error as Error & { code?: unknown });
      return this.primary(sql, params);
    }
    if (this.down) {
      this.down = false;
      this.log.info({ replica: this.where }, `the read replica at ${this.where} answers again: analytics read it again`);
    }
    return rows;
  }

  primary<T>(sql: string, params: unknown[]): Promise<T> {
    return this.primaryOrm.em.fork().execute(sql, params) as Promise<T>;
  }

  async status(): Promise<ReplicaStatus> {
    try {
      const [row] = (await this.replica.em.fork().execute(LAG_SQL)) as { lag: number | string | null }[];
      return { up: true, lagSeconds: row?.lag === null || row?.lag === undefined ? null : Number(row.lag) };
    } catch {
      return { up: false, lagSeconds: null };
    }
  }

  close(): Promise<void> {
    return this.replica.close(true);
  }

  private failed(error: Error & { code?: unknown }): void {
    const code = typeof error.code === 'string' ? error.code : undefined;
    if (!unreachable(error)) {
      // A replica behind a migration (a new column), or a query cancelled by its replay (a recovery conflict).
      this.log.warn({ replica: this.where, err: error.message, code }, `the read replica at ${this.where} could not answer an analytics query (${error.message}): the primary answered it`);
      return;
    }
    this.retryAt = Date.now() + this.retryAfterMs;
    if (this.down) return;
    this.down = true;
    this.log.warn(
      { replica: this.where, err: error.message, code },
      `the read replica at ${this.where} does not answer (${error.message}): analytics read the primary, trying the replica again every ${this.retryAfterMs / 1000} s`,
    );
  }
}

/**
 * The replica's connection pool, opened lazily: a replica down at start delays nothing (its first query finds
 * out, and the primary answers it). `where` names it in the log.
 */
export async function openReadReplica(url: string, where: string, primary: MikroORM, log: Logger): Promise<ReplicaReads> {
  const replica = await MikroORM.init(
    defineConfig({
      clientUrl: url,
      entities: [],
      discovery: { warnWhenNoEntities: false },
      // A standby is read-only: nothing is created there, not even a missing database.
      ensureDatabase: false,
      allowGlobalContext: false,
      pool: { min: 0, max: 10 },
      driverOptions: { connectionTimeoutMillis: CONNECT_TIMEOUT_MS },
      debug: false,
      logger: (message: string) => log.debug({ orm: message }, 'orm (read replica)'),
    }),
  );
  log.info({ replica: where }, `usage analytics read the replica at ${where}; balances, keys and the ledger read the primary`);
  return new ReplicaReads(replica, primary, where, log);
}
