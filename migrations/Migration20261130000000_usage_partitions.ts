import { Migration } from '@mikro-orm/migrations';

/**
 * usage_events becomes a table partitioned by range on `created_at`, one partition per UTC month
 * (`usage_events_2026_12`), so whole months can be dropped (USAGE_RETENTION_MONTHS) and a month's queries read
 * only its partition. docs/partitioning.md tells the whole story; in short:
 *
 * - The existing table is not copied: it is renamed and attached as the partition of everything before a bound B
 *   (`usage_events_before_2027_01`, B the first of a month after now). ATTACH skips its scan because a validated
 *   CHECK (created_at < B) proves the bound, and every index is matched to the old table's own (none is built).
 *   `prepareUsageEventsPartitioning` below builds the slow parts (that CHECK, and the unique index on (id,
 *   created_at) the new primary key uses) before the migration, while writers go on; the migration itself then only
 *   changes the catalog: writers wait for it milliseconds (docs/partitioning.md has the figures). Without them (a
 *   command that runs migrations alone) the migration builds both itself, under its lock.
 * - The primary key becomes (id, created_at): a partitioned table's unique keys must hold its partition key. An
 *   event's id is still unique: each is minted once (newTimeOrderedId, or randomUUID for a video's), and a retried
 *   batch sends each record again with the same id and the same created_at, so the recorder's replay skips it by
 *   `on conflict (id, created_at)` exactly as it did by `on conflict (id)` (src/usage/usage-recorder.ts).
 * - Partitions are made from B (a fresh install: from this month) up to AHEAD_MONTHS ahead; the gateway keeps
 *   making them ahead (src/usage/usage-partitions.ts). A DEFAULT partition takes whatever falls outside them (a
 *   clock far off), so an insert never fails; rows of the old table at or after B move there or to their month.
 *
 * Runs inside the migrations' transaction: all of it is undone if anything fails, and it does nothing on a table
 * that is partitioned already.
 */
export class Migration20261130000000_usage_partitions extends Migration {
  override name = 'Migration20261130000000_usage_partitions';

  override async up(): Promise<void> {
    const [table] = await this.execute(`select relkind from pg_class where oid = to_regclass('usage_events')`);
    if (!table || table.relkind !== 'r') return;
    await this.execute('lock table usage_events in access exclusive mode');
    const now = new Date();
    const empty = (await this.execute('select 1 from usage_events limit 1')).length === 0;
    const bound = empty ? monthStart(now) : ((await preparedBound(this.execute.bind(this))) ?? legacyBound(now));
    const legacy = empty ? 'usage_events_unpartitioned' : `usage_events_before_${monthSuffix(bound)}`;
    const checks = await this.execute(
      `select conname, pg_get_constraintdef(oid) as def from pg_constraint
        where conrelid = 'usage_events'::regclass and contype = 'c' and conname not like '${BOUND_PREFIX}%'`,
    );
    const indexes = await this.execute(
      `select c.relname as name, pg_get_indexdef(i.indexrelid) as def from pg_index i join pg_class c on c.oid = i.indexrelid
        where i.indrelid = 'usage_events'::regclass and not i.indisprimary and c.relname <> '${PREPARED_KEY}'`,
    );
    await this.execute(`alter table usage_events rename to ${legacy}`);
    await this.execute(`alter table ${legacy} drop constraint usage_events_pkey`);
    for (const index of indexes) await this.execute(`alter index ${index.name} rename to ${legacy}_${String(index.name).replace(/^usage_events_/, '')}`);

    await this.execute(`create table usage_events (like ${legacy} including defaults) partition by range (created_at)`);
    for (const check of checks) await this.execute(`alter table usage_events add constraint ${check.conname} ${check.def}`);
    for (const index of indexes) await this.execute(String(index.def));
    await this.execute('alter table usage_events add primary key (id, created_at)');
    await this.execute('create table usage_events_default partition of usage_events default');
    for (let month = bound; month <= monthStart(now, AHEAD_MONTHS); month = monthStart(month, 1)) {
      await this.execute(`create table usage_events_${monthSuffix(month)} partition of usage_events for values from ('${month.toISOString()}') to ('${monthStart(month, 1).toISOString()}')`);
    }
    if (empty) await this.execute(`drop table ${legacy}`);
    else await this.attachLegacy(legacy, bound);
  }

  /** The old table as the partition of everything before `bound`, its rows at or after it moved to theirs first. */
  private async attachLegacy(legacy: string, bound: Date): Promise<void> {
    const before = bound.toISOString();
    await this.execute(`with moved as (delete from ${legacy} where created_at >= '${before}' returning *) insert into usage_events select * from moved`);
    const name = `${BOUND_PREFIX}${monthSuffix(bound)}`;
    const bounds = await this.execute(`select conname, convalidated from pg_constraint where conrelid = '${legacy}'::regclass and conname like '${BOUND_PREFIX}%'`);
    // Another bound's CHECK (an earlier preparation's, cut short) would refuse a late event below this bound: it goes.
    for (const other of bounds) if (other.conname !== name || !other.convalidated) await this.execute(`alter table ${legacy} drop constraint ${String(other.conname)}`);
    if (!bounds.some((check) => check.conname === name && check.convalidated)) {
      await this.execute(`alter table ${legacy} add constraint ${name} check (created_at < '${before}')`);
    }
    const [key] = await this.execute(`select i.indisvalid from pg_index i where i.indexrelid = to_regclass('${PREPARED_KEY}')`);
    if (!key?.indisvalid) {
      await this.execute(`drop index if exists ${PREPARED_KEY}`);
      await this.execute(`create unique index ${PREPARED_KEY} on ${legacy} (id, created_at)`);
    }
    await this.execute(`alter table ${legacy} add constraint ${legacy}_pkey primary key using index ${PREPARED_KEY}`);
    await this.execute(`alter table usage_events attach partition ${legacy} for values from (minvalue) to ('${before}')`);
  }

  /** Back to one table: every row copied (as long as the conversion would take without its preparation). */
  override async down(): Promise<void> {
    const [table] = await this.execute(`select relkind from pg_class where oid = to_regclass('usage_events')`);
    if (!table || table.relkind !== 'p') return;
    const indexes = await this.execute(
      `select pg_get_indexdef(i.indexrelid) as def from pg_index i where i.indrelid = 'usage_events'::regclass and not i.indisprimary`,
    );
    await this.execute('create table usage_events_unpartitioned (like usage_events including defaults including constraints)');
    await this.execute('insert into usage_events_unpartitioned select * from usage_events');
    await this.execute('drop table usage_events');
    await this.execute('alter table usage_events_unpartitioned rename to usage_events');
    await this.execute('alter table usage_events add primary key (id)');
    for (const index of indexes) await this.execute(String(index.def).replace(' ON ONLY ', ' ON '));
  }
}

/** Months made ahead of the current one: by this migration, and by the gateway's maintenance (it has its own). */
const AHEAD_MONTHS = 3;
/** The CHECK (created_at < B) of the old table, named after B's month: `usage_events_created_before_2027_01`. */
const BOUND_PREFIX = 'usage_events_created_before_';
/** The unique index on (id, created_at) the old table's primary key becomes. */
const PREPARED_KEY = 'usage_events_id_created_key';

/** The first instant of the UTC month `offset` months after the one holding `at`. */
function monthStart(at: Date, offset = 0): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + offset, 1));
}

/** `2026_12` for December 2026 (UTC). */
function monthSuffix(month: Date): string {
  return `${month.getUTCFullYear()}_${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
}

/**
 * Where the old table ends: the first of next month, or of the month after when this one ends within the hour
 * (rows written meanwhile must stay below it, or their batch waits for the conversion to pass the bound).
 */
function legacyBound(now: Date): Date {
  return monthStart(new Date(now.getTime() + 3_600_000), 1);
}

type Execute = (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

/** B from a validated bound CHECK the preparation left on usage_events (null: none). */
async function preparedBound(execute: Execute): Promise<Date | null> {
  const [check] = await execute(
    `select conname from pg_constraint where conrelid = 'usage_events'::regclass and contype = 'c' and convalidated and conname like '${BOUND_PREFIX}%'
      order by conname desc limit 1`,
  );
  const match = /(\d{4})_(\d{2})$/.exec(String(check?.conname ?? ''));
  return match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1)) : null;
}

/** A connection of its own (outside any transaction): CREATE INDEX CONCURRENTLY cannot run in one. */
export interface PrepareClient {
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/**
 * The conversion's slow parts, run before the migrations while writers go on (src/db/database.ts runs it when
 * usage_events is still a plain table): the unique index on (id, created_at), built CONCURRENTLY, and the CHECK
 * (created_at < B), added NOT VALID (a moment's lock) and then validated under a lock writers pass. Returns what
 * undoes the CHECK when the migration then fails: left behind, it would refuse every event once B is reached.
 * Nothing is done (null) when the table is partitioned already or rows at or after B exist (the migration moves
 * them, and validates under its own lock).
 */
export async function prepareUsageEventsPartitioning(client: PrepareClient, now = new Date()): Promise<{ undo(): Promise<void> } | null> {
  const { rows: tables } = await client.query(`select relkind from pg_class where oid = to_regclass('usage_events')`);
  if (tables[0]?.relkind !== 'r') return null;
  const { rows: keys } = await client.query(`select indisvalid from pg_index where indexrelid = to_regclass('${PREPARED_KEY}')`);
  if (keys[0] && !keys[0].indisvalid) await client.query(`drop index concurrently ${PREPARED_KEY}`); // an earlier build cut short
  if (!keys[0]?.indisvalid) await client.query(`create unique index concurrently ${PREPARED_KEY} on usage_events (id, created_at)`);

  const bound = legacyBound(now);
  const name = `${BOUND_PREFIX}${monthSuffix(bound)}`;
  const { rows: later } = await client.query('select 1 from usage_events where created_at >= $1 limit 1', [bound]);
  const { rows: checks } = await client.query(`select conname from pg_constraint where conrelid = 'usage_events'::regclass and conname like '${BOUND_PREFIX}%'`);
  await inShortLock(client, async () => {
    for (const check of checks) if (check.conname !== name) await client.query(`alter table usage_events drop constraint ${String(check.conname)}`);
    if (later.length === 0 && !checks.some((check) => check.conname === name)) {
      await client.query(`alter table usage_events add constraint ${name} check (created_at < '${bound.toISOString()}') not valid`);
    }
  });
  if (later.length > 0) return null;
  const undo = () => inShortLock(client, async () => void (await client.query(`alter table usage_events drop constraint if exists ${name}`)));
  try {
    await client.query(`alter table usage_events validate constraint ${name}`);
  } catch (error) {
    await undo().catch(() => undefined); // a row at or after B came meanwhile: the migration moves it instead
    throw error;
  }
  return { undo };
}

/** DDL that takes usage_events' exclusive lock for a moment, giving up after 5 s of waiting (writers queue behind a waiting lock). */
async function inShortLock(client: PrepareClient, ddl: () => Promise<void>): Promise<void> {
  await client.query('begin');
  try {
    await client.query(`set local lock_timeout = '5s'`);
    await ddl();
    await client.query('commit');
  } catch (error) {
    await client.query('rollback');
    throw error;
  }
}
