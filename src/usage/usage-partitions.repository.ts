import type { MikroORM, PostgreSqlConnection } from '@mikro-orm/postgresql';
import type pg from 'pg';

/**
 * The SQL of usage_events' partitions (their upkeep's rules are in usage-partitions.ts): the catalog's list of them,
 * a month made and attached, a partition's rollups checked against its events and the partition dropped. The upkeep
 * runs on one connection of its own that holds an advisory lock (`underLock`), each change in a transaction of its own.
 */

/** A partition as the catalog describes it; `from` null is MINVALUE (the table from before partitioning). */
export interface UsagePartition {
  name: string;
  from: Date | null;
  to: Date | null;
  isDefault: boolean;
}

/** What a partition's check found: its events, and (account, hour, model, group, family) rows without a rollup, without events, or with other figures. */
export interface RollupCheck {
  events: string;
  without_rollup: number;
  without_events: number;
  differing: number;
}

/** Serialises the rounds of every gateway process (each skips a round another holds). */
const LOCK_KEY = `hashtext('baikal.usage_partitions')`;

/**
 * DDL on usage_events waits at most this long for its lock, then gives up until the next round: a waiting
 * ACCESS EXCLUSIVE request (a detach) queues every later reader and writer of the table behind it.
 */
const LOCK_TIMEOUT = '1s';
const LOCK_NOT_AVAILABLE = '55P03';

const IS_PARTITIONED = `select relkind = 'p' as partitioned from pg_class where oid = to_regclass('usage_events')`;

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


export class UsagePartitionsRepository {
  constructor(private readonly orm: MikroORM) {}

  /**
   * Runs `work` on a connection of its own holding the upkeep's advisory lock; 'busy' when another process holds it.
   * The lock is a session's: a connection that failed is discarded, not returned to the pool still holding it.
   */
  async underLock<T>(work: (session: PartitionSession) => Promise<T>): Promise<T | 'busy'> {
    const pool = await (this.orm.em.getConnection() as PostgreSqlConnection).getNativeClient();
    const client = await pool.connect();
    let lost: Error | undefined;
    try {
      if (!(await client.query<{ locked: boolean }>(`select pg_try_advisory_lock(${LOCK_KEY}) as locked`)).rows[0]!.locked) return 'busy';
      try {
        return await work(new PartitionSession(client));
      } finally {
        await client.query(`select pg_advisory_unlock(${LOCK_KEY})`);
      }
    } catch (error) {
      lost = error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      client.release(lost);
    }
  }

  /** usage_events' partitions, oldest first (the default last); null when the table is not partitioned. */
  async partitions(): Promise<UsagePartition[] | null> {
    const em = this.orm.em.fork();
    const [table] = await em.execute<{ partitioned: boolean }[]>(IS_PARTITIONED);
    return table?.partitioned ? toPartitions(await em.execute(PARTITIONS_SQL)) : null;
  }
}

function toPartitions(rows: Record<string, unknown>[]): UsagePartition[] {
  return rows.map((row) => ({ name: String(row.name), isDefault: row.isDefault === true, from: asDate(row.from), to: asDate(row.to) }));
}

/** The upkeep's connection, the advisory lock held. */
export class PartitionSession {
  constructor(private readonly client: pg.PoolClient) {}

  async partitions(): Promise<UsagePartition[] | null> {
    const { rows } = await this.client.query<{ partitioned: boolean }>(IS_PARTITIONED);
    return rows[0]?.partitioned ? toPartitions((await this.client.query(PARTITIONS_SQL)).rows) : null;
  }

  /**
   * The partition `name` for [from, to), made as a table of its own and then attached: ATTACH takes a lock that lets
   * readers and writers of usage_events go on, where CREATE TABLE ... PARTITION OF would take one that stops them.
   * Rows the default partition (`fallback`) holds for the range (written when no partition covered it) move into it
   * first. Returns how many moved; null when a lock was not had in time (nothing changed).
   */
  createMonth(name: string, from: Date, to: Date, fallback: string | null): Promise<number | null> {
    return this.inTransaction(async () => {
      await this.client.query(`create table ${name} (like usage_events including defaults including constraints)`);
      const moved = fallback
        ? await this.client.query(`with moved as (delete from ${fallback} where created_at >= $1 and created_at < $2 returning *) insert into ${name} select * from moved`, [from, to])
        : null;
      await this.client.query(`alter table usage_events attach partition ${name} for values from ('${from.toISOString()}') to ('${to.toISOString()}')`);
      return moved?.rowCount ?? 0;
    });
  }

  /**
   * Checks the partition's hourly rollups against its events, the partition locked against a late event meanwhile
   * (SHARE: readers, and writers of every other partition, go on); when they match, detaches and drops it. Returns
   * the check and whether it was dropped; null when a lock was not had in time (nothing changed).
   */
  dropIfRollupsMatch(partition: UsagePartition): Promise<{ check: RollupCheck; dropped: boolean } | null> {
    return this.inTransaction(async () => {
      await this.client.query(`lock table ${partition.name} in share mode`);
      const check = (await this.client.query<RollupCheck>(VERIFY_SQL(partition.name), [partition.from, partition.to])).rows[0]!;
      if (check.without_rollup || check.without_events || check.differing) return { check, dropped: false };
      await this.client.query(`alter table usage_events detach partition ${partition.name}`);
      await this.client.query(`drop table ${partition.name}`);
      return { check, dropped: true };
    });
  }

  /** Runs `work` in a transaction whose locks are waited for at most LOCK_TIMEOUT; null when one was not had in time. */
  private async inTransaction<T>(work: () => Promise<T>): Promise<T | null> {
    await this.client.query('begin');
    try {
      await this.client.query(`set local lock_timeout = '${LOCK_TIMEOUT}'`);
      const result = await work();
      await this.client.query('commit');
      return result;
    } catch (error) {
      await this.client.query('rollback');
      if ((error as { code?: string }).code === LOCK_NOT_AVAILABLE) return null;
      throw error;
    }
  }
}
