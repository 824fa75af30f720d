import { afterEach, describe, expect, it } from 'vitest';
import { migrate, type Database } from '../../src/db/database.js';
import { AHEAD_MONTHS, monthPartitionName, monthStart, UsagePartitions } from '../../src/usage/usage-partitions.js';
import { UsageRecorder } from '../../src/usage/usage-recorder.js';
import { UsageRepository } from '../../src/usage/usage.repository.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { migrationsList } from '../../migrations/index.js';
import {
  balancesMatchLedger, BEFORE_PARTITIONING, cabinetAnswers, capturedLogger, newAccount, openMigrated, partitionsOf, seedMonths, usageRecord,
} from '../helpers/usage-partitions.js';

/** usage_events as a reader of the schema sees it: columns, check constraints (the conversion's bound aside) and indexes. */
async function shape(db: TestDatabase) {
  return {
    columns: await db.query(
      `select column_name, data_type, is_nullable, numeric_precision, numeric_scale from information_schema.columns
        where table_name = 'usage_events' order by ordinal_position`,
    ),
    checks: await db.query(
      `select conname, pg_get_constraintdef(oid) as def from pg_constraint
        where conrelid = 'usage_events'::regclass and contype = 'c' and conname not like 'usage_events_created_before_%' order by 1`,
    ),
    indexes: await db.query(`select indexname, replace(indexdef, ' ON ONLY ', ' ON ') as def from pg_indexes where tablename = 'usage_events' order by 1`),
  };
}

/** Every row of usage_events, as one digest. */
async function fingerprint(db: TestDatabase) {
  const [row] = await db.query(`select count(*)::int as rows, md5(string_agg(t::text, ',' order by t.id)) as digest from usage_events t`);
  return row;
}

/** The files of a table and its indexes other than the primary key's: unchanged files mean nothing was copied or rebuilt. */
async function files(db: TestDatabase, table: string) {
  const [own] = await db.query<{ file: string }>('select pg_relation_filenode($1::regclass)::text as file', [table]);
  const indexes = await db.query<{ file: string }>(
    `select pg_relation_filenode(indexrelid)::text as file from pg_index where indrelid = $1::regclass and not indisprimary order by 1`,
    [table],
  );
  return { table: own!.file, indexes: indexes.map((index) => index.file) };
}

async function partitionNames(db: TestDatabase): Promise<string[]> {
  const rows = await db.query<{ name: string }>(`select inhrelid::regclass::text as name from pg_inherits where inhparent = 'usage_events'::regclass order by 1`);
  return rows.map((row) => row.name);
}

/** The months from `first` to AHEAD_MONTHS ahead of `now`, as partition names. */
function monthsFrom(first: Date, now: Date): string[] {
  const names: string[] = [];
  for (let month = first; month <= monthStart(now, AHEAD_MONTHS); month = monthStart(month, 1)) names.push(monthPartitionName(month));
  return names;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const opened: { db: TestDatabase; database: Database }[] = [];

afterEach(async () => {
  for (const { db, database } of opened.splice(0)) {
    await database.orm.close(true);
    await db.drop();
  }
});

async function openBeforePartitioning() {
  const db = await createTestDatabase();
  const { log, lines } = capturedLogger();
  const database = await openMigrated(db, log, BEFORE_PARTITIONING);
  opened.push({ db, database });
  return { db, database, log, lines };
}

describe('usage_events partitioned by month: the migration', () => {
  it('a fresh install: partitions from this month to three ahead and a default, primary key (id, created_at), the same indexes', async () => {
    const db = await createTestDatabase();
    const { log } = capturedLogger();
    const database = await openMigrated(db, log);
    opened.push({ db, database });
    await migrate(database.orm, log);
    const now = new Date();
    const [table] = await db.query<{ kind: string; key: string }>(
      `select c.relkind::text as kind, pg_get_partkeydef(c.oid) as key from pg_class c where c.oid = 'usage_events'::regclass`,
    );
    expect(table).toEqual({ kind: 'p', key: 'RANGE (created_at)' });
    expect(await partitionNames(db)).toEqual([...monthsFrom(monthStart(now), now), 'usage_events_default'].sort());
    const { indexes } = await shape(db);
    expect(indexes.map((index) => index.def)).toEqual([
      'CREATE INDEX usage_events_created_idx ON public.usage_events USING btree (created_at)',
      'CREATE UNIQUE INDEX usage_events_pkey ON public.usage_events USING btree (id, created_at)',
      'CREATE INDEX usage_events_request_idx ON public.usage_events USING btree (request_id)',
      'CREATE INDEX usage_events_user_created_idx ON public.usage_events USING btree (user_id, created_at DESC)',
      'CREATE INDEX usage_events_user_model_created_idx ON public.usage_events USING btree (user_id, model, created_at DESC)',
    ]);
  });

  it('converts a table of events in several months in place: the old table (its files, its indexes) becomes the partition before the bound, nothing is copied or rebuilt, every row and every cabinet answer stays; the recorder (its prepared statements too) writes and replays into the months', async () => {
    const { db, database, log, lines } = await openBeforePartitioning();
    const now = new Date();
    const users = [await newAccount(db), await newAccount(db)];
    await seedMonths(db, users[0]!, 5, 1500, now);
    await seedMonths(db, users[1]!, 5, 200, now);
    // Billed events of the real recorder over the last months: ledger debits, rollups, the ledger view's rows.
    const recorder = new UsageRecorder({ orm: database.orm, log, flushMs: 1 });
    for (let i = 0; i < 60; i++) recorder.record(usageRecord(users[i % 2]!, new Date(now.getTime() - HOUR - i * 2.5 * DAY)));
    await recorder.flush();
    const from = monthStart(now, -5);
    const to = new Date(Math.floor(now.getTime() / HOUR) * HOUR);
    const before = { shape: await shape(db), rows: await fingerprint(db), files: await files(db, 'usage_events') };
    const answers = await Promise.all(users.map((user) => cabinetAnswers(database, user, from, to)));
    // Answers with something in them: events, billed rows in the ledger view, both accounts on the board, a margin.
    const sizes = (answer: Record<string, unknown>) => ['events', 'filtered', 'leaderboard'].map((key) => (answer[key] as unknown[]).length);
    expect(sizes(answers[0]!)).toEqual([100, 100, 2]);
    expect((answers[0]!.ledger as { kind: string }[]).filter((row) => row.kind === 'usage').length).toBeGreaterThan(20);
    expect((answers[1]!.margin as { totals: { requests: number } }).totals.requests).toBeGreaterThan(1000);

    await migrate(database.orm, log);
    expect(lines.some((line) => String(line.msg).startsWith('prepared usage_events for partitioning'))).toBe(true);
    // The bound: the first of next month, or of the month after when the conversion ran in the last hour of a month.
    const legacy = (await partitionNames(db)).find((partition) => partition.startsWith('usage_events_before_'))!;
    const bound = [monthStart(now, 1), monthStart(now, 2)].find((month) => legacy === `usage_events_before_${monthPartitionName(month).slice('usage_events_'.length)}`)!;
    expect(bound).toBeDefined();
    expect(await partitionNames(db)).toEqual([legacy, ...monthsFrom(bound, now), 'usage_events_default'].sort());
    expect(await fingerprint(db)).toEqual(before.rows);
    const after = await shape(db);
    expect(after.columns).toEqual(before.shape.columns);
    expect(after.checks).toEqual(before.shape.checks);
    const withoutKey = (indexes: Record<string, unknown>[]) => indexes.filter((index) => index.indexname !== 'usage_events_pkey');
    expect(withoutKey(after.indexes)).toEqual(withoutKey(before.shape.indexes));
    expect(after.indexes.find((index) => index.indexname === 'usage_events_pkey')!.def).toBe('CREATE UNIQUE INDEX usage_events_pkey ON public.usage_events USING btree (id, created_at)');
    expect(await files(db, legacy)).toEqual(before.files);
    for (const [i, user] of users.entries()) expect(await cabinetAnswers(database, user, from, to)).toEqual(answers[i]);

    // The same recorder, whose connections prepared their batch statement against the old table.
    const late = usageRecord(users[0]!, new Date(now.getTime() - 40 * DAY)); // a video's start, settled late
    const current = usageRecord(users[0]!, new Date(now.getTime() - 1000));
    const ahead = usageRecord(users[1]!, new Date(monthStart(now, 2).getTime() + 3 * DAY));
    const faraway = usageRecord(users[1]!, new Date('2099-06-01T00:00:00Z')); // a clock gone wrong
    for (const record of [late, current, ahead, faraway]) recorder.record(record);
    await recorder.flush();
    expect(Object.fromEntries(await partitionsOf(db, [late.id, current.id, ahead.id, faraway.id]))).toEqual({
      [late.id]: legacy,
      [current.id]: legacy, // this month's events stay where the old table had them
      [ahead.id]: monthPartitionName(monthStart(now, 2)),
      [faraway.id]: 'usage_events_default',
    });
    // A retried batch (its commit not seen): the replay skips the events written, bills the new one once.
    const fresh = usageRecord(users[0]!, new Date());
    recorder.record(current);
    recorder.record(fresh);
    await recorder.flush();
    const counts = await db.query<{ id: string; n: number }>('select id, count(*)::int as n from usage_events where id = any($1::uuid[]) group by id', [[current.id, fresh.id]]);
    expect(counts.map((row) => row.n)).toEqual([1, 1]);
    const [covered] = await db.query<{ events: string; debits: string }>(
      `select (select sum(amount_usd) from usage_events where transaction_id is not null)::text as events,
              (select -sum(amount_usd) from transactions where kind = 'usage')::text as debits`,
    );
    expect(covered!.events).toBe(covered!.debits);
    expect(await balancesMatchLedger(db)).toBe(true);

    // Years later, with a retention of three months: the old table goes whole once its rollups are checked, and they still answer.
    const usage = new UsageRepository(database.reads);
    const summary = await usage.summary(users[0]!, from, to);
    const later = monthStart(now, 14);
    const partitions = new UsagePartitions({ orm: database.orm, log, clock: { now: () => later }, settings: { retentionMonths: 3 } });
    const round = await partitions.maintain();
    expect(round.dropped.sort()).toEqual([legacy, ...monthsFrom(bound, now)].sort()); // not the months made by this round
    expect(round.kept).toEqual([]);
    expect(await usage.summary(users[0]!, from, to)).toEqual(summary);
    expect(await usage.events(users[0]!, { to }, 10)).toEqual([]);
  });

  it('a conversion that fails leaves the table as it was: the preparation\'s bound check is dropped again, so events past the bound are still written; the next start converts it', async () => {
    const { db, database, log } = await openBeforePartitioning();
    const user = await newAccount(db);
    await seedMonths(db, user, 1, 100);
    const before = await fingerprint(db);
    await db.query('create table usage_events_default (squatter int)'); // the migration's default partition cannot be made
    await expect(migrate(database.orm, log)).rejects.toThrow(/usage_events_default/);
    const [table] = await db.query<{ kind: string; bounds: number }>(
      `select relkind::text as kind, (select count(*)::int from pg_constraint where conname like 'usage_events_created_before_%') as bounds
         from pg_class where oid = 'usage_events'::regclass`,
    );
    expect(table).toEqual({ kind: 'r', bounds: 0 });
    expect(await fingerprint(db)).toEqual(before);
    const recorder = new UsageRecorder({ orm: database.orm, log, flushMs: 1 });
    const ahead = usageRecord(user, monthStart(new Date(), 2));
    recorder.record(ahead);
    await recorder.flush(Date.now() + 3_000);
    expect((await partitionsOf(db, [ahead.id])).get(ahead.id)).toBe('usage_events');

    await db.query('drop table usage_events_default');
    await migrate(database.orm, log);
    expect((await partitionsOf(db, [ahead.id])).get(ahead.id)).toBe(monthPartitionName(monthStart(new Date(), 2)));
  });

  it('without its preparation (migrations run alone) and with rows past the bound: the same conversion, rows past the bound in their month or the default; down makes one table again, and up again converts it', async () => {
    const { db, database, log } = await openBeforePartitioning();
    const now = new Date();
    const user = await newAccount(db);
    await seedMonths(db, user, 2, 300, now);
    const recorder = new UsageRecorder({ orm: database.orm, log, flushMs: 1 });
    const ahead = usageRecord(user, new Date(monthStart(now, 2).getTime() + 3 * DAY));
    const faraway = usageRecord(user, new Date('2099-06-01T00:00:00Z'));
    recorder.record(ahead);
    recorder.record(faraway);
    await recorder.flush();
    const before = { shape: await shape(db), rows: await fingerprint(db) };

    await database.orm.migrator.up();
    expect(Object.fromEntries(await partitionsOf(db, [ahead.id, faraway.id]))).toEqual({
      [ahead.id]: monthPartitionName(monthStart(now, 2)),
      [faraway.id]: 'usage_events_default',
    });
    expect(await fingerprint(db)).toEqual(before.rows);

    // Down to before the partitioning: every migration after it is undone, newest first.
    const later = migrationsList.slice(migrationsList.findIndex((m) => m.name === BEFORE_PARTITIONING) + 1);
    for (let i = 0; i < later.length; i++) await database.orm.migrator.down();
    const [table] = await db.query<{ kind: string }>(`select relkind::text as kind from pg_class where oid = 'usage_events'::regclass`);
    expect(table!.kind).toBe('r');
    expect(await shape(db)).toEqual(before.shape);
    expect(await fingerprint(db)).toEqual(before.rows);

    await migrate(database.orm, log);
    expect((await partitionNames(db)).length).toBeGreaterThan(AHEAD_MONTHS);
    expect(await fingerprint(db)).toEqual(before.rows);
  });
});
