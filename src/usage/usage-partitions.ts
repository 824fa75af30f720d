import type { MikroORM, PostgreSqlConnection } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logging.js';

/**
 * The upkeep of usage_events' monthly partitions (docs/partitioning.md; the table was partitioned by
 * migrations/Migration20261130000000_usage_partitions.ts): partitions made ahead, and whole months dropped past
 * the retention once their rollups are verified. One gateway process at a time does it (an advisory lock; the
 * others skip the round), at start and hourly (src/server.ts).
 */

export interface UsagePartitionSettings {
  /** USAGE_RETENTION_MONTHS: whole months kept before the current one; null keeps everything. */
  retentionMonths: number | null;
}

/** A partition as the catalog describes it; `from` null is MINVALUE (the table from before partitioning). */
export interface UsagePartition {
  name: string;
  from: Date | null;
  to: Date | null;
  isDefault: boolean;
}

export interface MaintenanceRound {
  /** Why nothing was done: another process holds the lock, or usage_events is not partitioned (yet). */
  skipped?: 'busy' | 'not partitioned';
  created: string[];
  dropped: string[];
  /** Partitions past the retention kept because their rollups did not match their events (logged), or a lock was not had in time. */
  kept: string[];
}

/** Months made ahead of the current one: an insert finds its month's partition long before the month begins. */
export const AHEAD_MONTHS = 3;

/** Serialises the rounds of every gateway process (each skips a round another holds). */
const LOCK_SQL = `hashtext('baikal.usage_partitions')`;

/**
 * DDL on usage_events waits at most this long for its lock, then gives up until the next round: a waiting
 * ACCESS EXCLUSIVE request (a detach) queues every later reader and writer of the table behind it.
 */
const LOCK_TIMEOUT = '1s';

/** The first instant of the UTC month `offset` months after the one holding `at`. */
export function monthStart(at: Date, offset = 0): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + offset, 1));
}

/** `usage_events_2026_12` for December 2026 (UTC): the migration names its months the same way. */
export function monthPartitionName(month: Date): string {
  return `usage_events_${month.getUTCFullYear()}_${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
}

/**
 * Each partition and its bounds (epoch milliseconds; null: MINVALUE, or the default's none): the bounds' text is read
 * back as timestamps in the session that wrote it, so in its time zone.
 */
const PARTITIONS_SQL = `
select name, "isDefault", extract(epoch from "from") * 1000 as "from", extract(epoch from "to") * 1000 as "to"
  from (select c.relname as name, pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT' as "isDefault",
               (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz as "from",
               (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz as "to"
          from pg_inherits i join pg_class c on c.oid = i.inhrelid
         where i.inhparent = 'usage_events'::regclass) p
 order by "to" nulls last`;

const asDate = (epochMs: unknown) => (epochMs === null ? null : new Date(Number(epochMs)));

/** The aggregates the hourly rollups keep (src/usage/usage-recorder.ts), per key, from events of the partition $partition. */
const EVENT_GROUPS = (partition: string) => `
select user_id, date_trunc('hour', created_at) as hour, model, coalesce(route_group, '') as route_group, provider_family,
       count(*)::int8 as requests, sum(amount_usd) as spend_usd, coalesce(sum(prompt_tokens), 0)::int8 as input_tokens,
       coalesce(sum(completion_tokens), 0)::int8 as output_tokens, coalesce(sum(cache_read_tokens), 0)::int8 as cache_read_tokens,
       coalesce(sum(cache_write_tokens), 0)::int8 as cache_write_tokens, count(official_cost_usd)::int8 as comparable_requests,
       coalesce(sum(amount_usd) filter (where official_cost_usd is not null), 0) as comparable_spend_usd,
       coalesce(sum(official_cost_usd), 0) as official_cost_usd
  from ${partition} group by 1, 2, 3, 4, 5`;

/**
 * Whether the rollups of the partition's hours ([$1, $2), $1 null: from the beginning) are exactly its events':
 * every (account, hour, model, group, family) on both sides, every figure equal. Counts what differs.
 */
const VERIFY_SQL = (partition: string) => `
with events as (${EVENT_GROUPS(partition)}),
     rollups as (
       select user_id, hour, model, route_group, provider_family, requests::int8, spend_usd, input_tokens, output_tokens, cache_read_tokens,
              cache_write_tokens, comparable_requests::int8, comparable_spend_usd, official_cost_usd
         from usage_hourly where ($1::timestamptz is null or hour >= $1) and hour < $2)
select coalesce(sum(e.requests), 0)::int8::text as events,
       count(*) filter (where r.user_id is null)::int as without_rollup,
       count(*) filter (where e.user_id is null)::int as without_events,
       count(*) filter (where e.user_id is not null and r.user_id is not null
                          and (e.requests, e.spend_usd, e.input_tokens, e.output_tokens, e.cache_read_tokens, e.cache_write_tokens,
                               e.comparable_requests, e.comparable_spend_usd, e.official_cost_usd)
                              is distinct from
                              (r.requests, r.spend_usd, r.input_tokens, r.output_tokens, r.cache_read_tokens, r.cache_write_tokens,
                               r.comparable_requests, r.comparable_spend_usd, r.official_cost_usd))::int as differing
  from events e full join rollups r on (r.user_id, r.hour, r.model, r.route_group, r.provider_family) = (e.user_id, e.hour, e.model, e.route_group, e.provider_family)`;

interface Verification {
  events: string;
  without_rollup: number;
  without_events: number;
  differing: number;
}

export class UsagePartitions {
  constructor(private readonly deps: { orm: MikroORM; log: Logger; clock: Clock; settings: UsagePartitionSettings }) {}

  /** One round: this month's and the next AHEAD_MONTHS' partitions made, then the retention applied. */
  async maintain(): Promise<MaintenanceRound> {
    const round: MaintenanceRound = { created: [], dropped: [], kept: [] };
    const pool = await (this.deps.orm.em.getConnection() as PostgreSqlConnection).getNativeClient();
    const client = await pool.connect();
    let lost: Error | undefined;
    try {
      if (!(await client.query<{ locked: boolean }>(`select pg_try_advisory_lock(${LOCK_SQL}) as locked`)).rows[0]!.locked) return { ...round, skipped: 'busy' };
      try {
        const partitions = await this.partitions(client);
        if (!partitions) return { ...round, skipped: 'not partitioned' };
        await this.makeAhead(client, partitions, round);
        if (this.deps.settings.retentionMonths !== null) await this.applyRetention(client, partitions, this.deps.settings.retentionMonths, round);
      } finally {
        await client.query(`select pg_advisory_unlock(${LOCK_SQL})`);
      }
      return round;
    } catch (error) {
      lost = error instanceof Error ? error : new Error(String(error)); // the session may still hold the lock: not back to the pool
      throw error;
    } finally {
      client.release(lost);
    }
  }

  /** usage_events' partitions, oldest first (the default last); null when the table is not partitioned. */
  async partitions(client?: pg.PoolClient): Promise<UsagePartition[] | null> {
    const query = client ? (sql: string) => client.query(sql).then((result) => result.rows) : (sql: string) => this.deps.orm.em.fork().execute(sql);
    const [table] = (await query(`select relkind from pg_class where oid = to_regclass('usage_events')`)) as { relkind: string }[];
    if (table?.relkind !== 'p') return null;
    const rows = (await query(PARTITIONS_SQL)) as { name: string; isDefault: boolean; from: unknown; to: unknown }[];
    return rows.map((row) => ({ name: row.name, isDefault: row.isDefault, from: asDate(row.from), to: asDate(row.to) }));
  }

  /** Makes every month from this one to AHEAD_MONTHS ahead that no partition covers yet. */
  private async makeAhead(client: pg.PoolClient, partitions: UsagePartition[], round: MaintenanceRound): Promise<void> {
    const now = this.deps.clock.now();
    const fallback = partitions.find((partition) => partition.isDefault)?.name ?? null;
    for (let month = monthStart(now); month <= monthStart(now, AHEAD_MONTHS); month = monthStart(month, 1)) {
      const next = monthStart(month, 1);
      const covered = partitions.some((p) => !p.isDefault && (p.from === null || p.from < next) && (p.to === null || p.to > month));
      if (covered) continue;
      const name = monthPartitionName(month);
      const moved = await this.inTransaction(client, () => this.createMonth(client, name, month, next, fallback));
      if (moved === null) continue; // its lock was not had in time: the next round tries again
      partitions.push({ name, from: month, to: next, isDefault: false });
      round.created.push(name);
      this.deps.log.info({ partition: name, movedFromDefault: moved }, `created usage partition ${name}`);
    }
  }

  /**
   * A month's partition, made as a table of its own and then attached: ATTACH takes a lock that lets readers and
   * writers of usage_events go on, where CREATE TABLE ... PARTITION OF would take one that stops them. Rows the
   * default partition holds for the month (written when no partition covered it) move into it first; returns how many.
   */
  private async createMonth(client: pg.PoolClient, name: string, from: Date, to: Date, fallback: string | null): Promise<number> {
    await client.query(`create table ${name} (like usage_events including defaults including constraints)`);
    let moved = 0;
    if (fallback) {
      const result = await client.query(
        `with moved as (delete from ${fallback} where created_at >= $1 and created_at < $2 returning *) insert into ${name} select * from moved`,
        [from, to],
      );
      moved = result.rowCount ?? 0;
    }
    await client.query(`alter table usage_events attach partition ${name} for values from ('${from.toISOString()}') to ('${to.toISOString()}')`);
    return moved;
  }

  /**
   * Drops, oldest first, each partition that ends at or before the retention's cutoff (never the current or the
   * previous month) and whose rollups are safe: for every hour of it the hourly rollups hold exactly its events'
   * figures (the batch writer keeps them in the statement that writes the events; this checks it, the partition
   * locked against a late event meanwhile). The rollups answer for those months after.
   */
  private async applyRetention(client: pg.PoolClient, partitions: UsagePartition[], retentionMonths: number, round: MaintenanceRound): Promise<void> {
    const now = this.deps.clock.now();
    const cutoff = monthStart(now, -Math.max(1, retentionMonths));
    for (const partition of partitions) {
      if (partition.isDefault || partition.to === null || partition.to > cutoff) continue;
      const outcome = await this.inTransaction(client, () => this.dropIfSafe(client, partition));
      if (outcome === 'dropped') round.dropped.push(partition.name);
      else round.kept.push(partition.name);
    }
  }

  private async dropIfSafe(client: pg.PoolClient, partition: UsagePartition): Promise<'dropped' | 'unsafe'> {
    const range = { partition: partition.name, from: partition.from, to: partition.to };
    await client.query(`lock table ${partition.name} in share mode`);
    const { rows } = await client.query<Verification>(VERIFY_SQL(partition.name), [partition.from, partition.to]);
    const check = rows[0]!;
    if (check.without_rollup || check.without_events || check.differing) {
      this.deps.log.warn(
        { ...range, ...check },
        `kept usage partition ${partition.name} past USAGE_RETENTION_MONTHS: its hourly rollups do not match its events (rows of (account, hour, model, group, family) without a rollup, without events, or with other figures)`,
      );
      return 'unsafe'; // nothing changed: the transaction ends and frees the partition
    }
    await client.query(`alter table usage_events detach partition ${partition.name}`);
    await client.query(`drop table ${partition.name}`);
    this.deps.log.info({ ...range, events: Number(check.events) }, `dropped usage partition ${partition.name} (older than USAGE_RETENTION_MONTHS; its hourly rollups match its events and stay)`);
    return 'dropped';
  }

  /**
   * Runs `work` in a transaction whose locks are waited for at most LOCK_TIMEOUT; null when one was not had in
   * time (logged; the next round tries again).
   */
  private async inTransaction<T>(client: pg.PoolClient, work: () => Promise<T>): Promise<T | null> {
    await client.query('begin');
    try {
      await client.query(`set local lock_timeout = '${LOCK_TIMEOUT}'`);
      const result = await work();
      await client.query('commit');
      return result;
    } catch (error) {
      await client.query('rollback');
      if ((error as { code?: string }).code !== '55P03') throw error; // lock_not_available
      this.deps.log.warn({ err: error }, 'usage partition maintenance did not get its lock in time; the next round tries again');
      return null;
    }
  }
}
