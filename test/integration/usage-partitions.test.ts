import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import { AccountsRepository } from '../../src/accounts/accounts.repository.js';
import { loadConfig } from '../../src/config.js';
import { migrate, type Database } from '../../src/db/database.js';
import { startGateway } from '../../src/server.js';
import { createLogger, type Logger } from '../../src/shared/logging.js';
import { monthPartitionName, monthStart, UsagePartitions } from '../../src/usage/usage-partitions.js';
import { UsageRecorder } from '../../src/usage/usage-recorder.js';
import { UsageRepository } from '../../src/usage/usage.repository.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/reliability.js';
import { balancesMatchLedger, capturedLogger, newAccount, openMigrated, partitionsOf, seedMonths, usageRecord } from '../helpers/usage-partitions.js';

const DAY = 86_400_000;
const now = new Date();
let db: TestDatabase;
let database: Database;
let log: Logger;
let lines: Record<string, unknown>[];

beforeAll(async () => {
  db = await createTestDatabase();
  ({ log, lines } = capturedLogger());
  database = await openMigrated(db, log);
  await migrate(database.orm, log);
});

afterAll(async () => {
  await database?.orm.close(true);
  await db?.drop();
});

/** The upkeep as a gateway process runs it, at `at`, keeping `retentionMonths` months (null: all). */
const upkeep = (at: Date, retentionMonths: number | null = null) => new UsagePartitions({ orm: database.orm, log, clock: { now: () => at }, settings: { retentionMonths } });

async function monthsPresent(): Promise<string[]> {
  const rows = await db.query<{ name: string }>(`select inhrelid::regclass::text as name from pg_inherits where inhparent = 'usage_events'::regclass and inhrelid::regclass::text ~ '_[0-9]{4}_[0-9]{2}$' order by 1`);
  return rows.map((row) => row.name);
}

/** Partition names of the months `from` to `to` months from now (inclusive). */
const monthNames = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => monthPartitionName(monthStart(now, from + i)));

describe('usage partitions: made ahead', () => {
  it('makes this month and the three ahead, once; a row the default partition holds for a new month moves into it; another process holding the lock makes a round skip', async () => {
    const user = await newAccount(db);
    const recorder = new UsageRecorder({ orm: database.orm, log, flushMs: 1 });
    const early = usageRecord(user, new Date(monthStart(now, 11).getTime() + 2 * DAY)); // past every partition: the default takes it
    recorder.record(early);
    await recorder.flush();
    expect((await partitionsOf(db, [early.id])).get(early.id)).toBe('usage_events_default');

    const later = upkeep(new Date(monthStart(now, 8).getTime() + 5 * DAY));
    const round = await later.maintain();
    expect(round.created).toEqual(monthNames(8, 11));
    expect((await partitionsOf(db, [early.id])).get(early.id)).toBe(monthPartitionName(monthStart(now, 11)));
    expect(lines.find((line) => line.partition === monthPartitionName(monthStart(now, 11)))).toMatchObject({ movedFromDefault: 1 });
    expect((await later.maintain()).created).toEqual([]);
    // Months 4 to 7 were never made (nobody ran a round then); a round now makes none of them: only this month and three ahead.
    expect(await monthsPresent()).toEqual([...monthNames(0, 3), ...monthNames(8, 11)]);

    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query(`select pg_advisory_lock(hashtext('baikal.usage_partitions'))`);
      expect(await upkeep(monthStart(now, 12)).maintain()).toMatchObject({ skipped: 'busy', created: [] });
    } finally {
      await holder.end();
    }
    // Two processes at once: each month made once, by one of them.
    const [a, b] = await Promise.all([upkeep(monthStart(now, 13)).maintain(), upkeep(monthStart(now, 13)).maintain()]);
    expect([...a.created, ...b.created].sort()).toEqual(monthNames(13, 16));
  });

  it('a round that cannot have its lock within 1 s (a long query on the table) changes nothing and says so; the next round makes the month', async () => {
    const reader = new pg.Client({ connectionString: db.url });
    await reader.connect();
    const missing = monthPartitionName(monthStart(now, 17)); // months 13 to 16 are there (the test before)
    try {
      await reader.query('begin');
      await reader.query('select count(*) from usage_events'); // holds every partition, the default's too, until it ends
      const started = Date.now();
      expect((await upkeep(monthStart(now, 14)).maintain()).created).toEqual([]);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(lines.find((line) => line.partition === missing && String(line.msg).includes('did not get its lock'))).toBeDefined();
      expect(await monthsPresent()).not.toContain(missing);
    } finally {
      await reader.query('commit');
      await reader.end();
    }
    expect((await upkeep(monthStart(now, 14)).maintain()).created).toEqual([missing]);
  });

  it('a gateway makes them at start (and hourly after)', async () => {
    await db.query(`drop table ${monthPartitionName(monthStart(now, 3))}`);
    const gateway = await startGateway(loadConfig({ DATABASE_URL: db.url, NODE_ENV: 'test', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', STATUS_PROBE_SECONDS: '0', VIDEO_WORKERS: '0', WEBHOOKS_WORKERS: '0' }), createLogger('silent'));
    try {
      await waitFor('the month three ahead made again', async () => (await monthsPresent()).includes(monthPartitionName(monthStart(now, 3))));
    } finally {
      await gateway.stop();
    }
  });
});

describe('usage partitions: retention', () => {
  it('drops whole months past the retention whose rollups match their events (logged), keeps one whose do not, never the current or previous month; the rollups answer for dropped months', async () => {
    // Months 7 to 1 back made as a gateway running then would have; events in each, from SQL and from the recorder (billed).
    await upkeep(monthStart(now, -7)).maintain();
    await upkeep(monthStart(now, -3)).maintain();
    expect(await monthsPresent()).toEqual(expect.arrayContaining(monthNames(-7, 3)));
    const user = await newAccount(db);
    await seedMonths(db, user, 7, 300, now);
    const recorder = new UsageRecorder({ orm: database.orm, log, flushMs: 1 });
    for (let back = 7; back >= 0; back--) for (let i = 0; i < 5; i++) recorder.record(usageRecord(user, new Date(monthStart(now, -back).getTime() + (i + 1) * 3 * 3_600_000)));
    await recorder.flush();
    // Month 5 back: one rollup row no longer equals its events.
    await db.query(
      `update usage_hourly set requests = requests + 1
        where (user_id, hour, model) = (select user_id, hour, model from usage_hourly where user_id = $1 and hour >= $2 and hour < $3 order by hour limit 1)`,
      [user, monthStart(now, -5), monthStart(now, -4)],
    );
    const usage = new UsageRepository(database.reads);
    const answers = async (back: number) => {
      const from = monthStart(now, -back);
      const to = monthStart(now, -back + 1);
      return { summary: await usage.summary(user, from, to), daily: await usage.timeseries(user, { from, to, first: from, last: new Date(to.getTime() - DAY) }, 'day', {}), board: await usage.leaderboard(from, to) };
    };
    const before = await Promise.all([7, 6, 4].map(answers));
    expect(before.every((answer) => answer.summary.length > 0 && answer.board.length > 0)).toBe(true);

    const round = await upkeep(now, 3).maintain();
    expect(round.dropped.sort()).toEqual([...monthNames(-7, -6), ...monthNames(-4, -4)]);
    expect(round.kept).toEqual(monthNames(-5, -5));
    expect(lines.find((line) => line.partition === monthNames(-5, -5)[0] && String(line.msg).startsWith('kept'))).toMatchObject({ differing: 1, without_rollup: 0, without_events: 0 });
    expect(lines.find((line) => line.partition === monthNames(-7, -7)[0] && String(line.msg).startsWith('dropped'))).toMatchObject({ events: 300 + 5 });
    expect(await Promise.all([7, 6, 4].map(answers))).toEqual(before);
    expect(await usage.events(user, { from: monthStart(now, -7), to: monthStart(now, -6) }, 10)).toEqual([]);
    expect((await usage.events(user, { from: monthStart(now, -5), to: monthStart(now, -4) }, 10)).length).toBe(10);

    // Retention of one month: everything before the previous month may go; the previous and the current month stay.
    const short = await upkeep(now, 1).maintain();
    expect(short.dropped.sort()).toEqual(monthNames(-3, -2));
    expect(await monthsPresent()).toEqual(expect.arrayContaining([...monthNames(-5, -5), ...monthNames(-1, 3)]));
    expect(await monthsPresent()).not.toEqual(expect.arrayContaining(monthNames(-2, -2)));
    expect(await balancesMatchLedger(db)).toBe(true); // the ledger is never touched
    // The account's transactions still add up to its balance: the batch debits of dropped months stand for their events.
    const view = await new AccountsRepository(database.orm).ledger(user, 100);
    const [{ balance }] = (await db.query<{ balance: string }>('select (balance_paid_usd + balance_bonus_usd)::text as balance from users where id = $1', [user])) as [{ balance: string }];
    expect(view.reduce((sum, row) => sum.plus(row.amountUsd), new Decimal(0)).toFixed()).toBe(new Decimal(balance).toFixed());
    // One batch debit (5 requests) stands for each dropped month the recorder billed in: 7, 6, 4, 3 and 2 back.
    expect(view.filter((row) => row.amountUsd === '-0.0000617285')).toHaveLength(5);
  });
});
