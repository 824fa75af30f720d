import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { AccountsRepository } from '../../src/accounts/accounts.repository.js';
import { createLogger, type Logger } from '../../src/shared/logging.js';
import { newTimeOrderedId } from '../../src/shared/ids.js';
import { monthStart } from '../../src/usage/usage-partitions.js';
import { MarginRepository } from '../../src/usage/margin.repository.js';
import { UsageRepository } from '../../src/usage/usage.repository.js';
import type { UsageRecord } from '../../src/usage/usage-recorder.js';
import type { TestDatabase } from './db.js';

/**
 * The migration before usage_events was partitioned: a database as it was before the conversion (with the tables
 * today's cabinet queries join, such as organizations for the leaderboard's names).
 */
export const BEFORE_PARTITIONING = 'Migration20261129500000_organizations';

/** A logger whose lines (parsed) the test reads. */
export function capturedLogger(): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger('info', new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>), done()) }));
  return { log, lines };
}

/** The test database opened with the product's ORM, migrated up to `to` (every migration when absent). */
export async function openMigrated(db: TestDatabase, log: Logger, to?: string): Promise<Database> {
  const database = await openDatabase(loadConfig({ DATABASE_URL: db.url, NODE_ENV: 'test', LOG_LEVEL: 'silent' }), log);
  if (to) await database.orm.migrator.up({ to });
  return database;
}

/** An account with a paid balance (the ledger row that funds it included). */
export async function newAccount(db: TestDatabase, balanceUsd = '100'): Promise<string> {
  const id = randomUUID();
  await db.query(`insert into users (id, username, email, password_hash) values ($1, $2, $3, 'x')`, [id, `u${id.slice(0, 8)}`, `${id}@example.test`]);
  await db.query(
    `with tx as (insert into transactions (id, user_id, amount_usd, paid_usd, bonus_usd, kind, idempotency_key) values ($1, $2, $3, $3, 0, 'topup', $4) returning amount_usd)
     update users set balance_paid_usd = balance_paid_usd + (select amount_usd from tx) where id = $2`,
    [randomUUID(), id, balanceUsd, `seed:${randomUUID()}`],
  );
  return id;
}

/** A finished, billed request of `userId` that started at `createdAt`, as the settlement hands it to the recorder. */
export function usageRecord(userId: string, createdAt: Date, amountUsd = '0.0000123457', model = 'gen-5.6-luna'): UsageRecord {
  return {
    id: newTimeOrderedId(), userId, apiKeyId: null, requestId: `req-${randomUUID()}`, clientSurface: 'api', createdAt, completedAt: new Date(createdAt.getTime() + 900),
    providerFamily: 'family_a', routeGroup: 'cheap', routeGroupLabel: 'Cheap', endpoint: '/v1/chat/completions', model,
    status: 'success', errorCode: null, latencyMs: 900, promptTokens: 1000, completionTokens: 200, cacheReadTokens: 100,
    cacheWriteTokens: null, totalTokens: 1200, cacheHitRatio: '0.1', publicInputUsdPer1m: '0.016', publicOutputUsdPer1m: '0.04',
    publicCacheReadUsdPer1m: '0.0016', publicCacheWriteUsdPer1m: null, publicRequestUsdPerGeneration: null, amountUsd,
    officialCostUsd: '0.0002', savedUsd: '0.00018', upstreamId: 'primary', upstreamCredentialId: 'env:KEY', upstreamCostUsd: '0.00001',
  };
}

/**
 * `perMonth` events of `userId` in each of the `months` UTC months before the current one and in the current one up
 * to an hour ago, written with SQL (fast), and the hourly rollups the batch writer would have kept for them.
 */
export async function seedMonths(db: TestDatabase, userId: string, months: number, perMonth: number, now = new Date()): Promise<void> {
  await db.query(
    `insert into usage_events (id, user_id, request_id, client_surface, created_at, completed_at, provider_family, route_group, route_group_label,
                               endpoint, model, status, latency_ms, prompt_tokens, completion_tokens, cache_read_tokens, total_tokens,
                               public_input_usd_per_1m, public_output_usd_per_1m, amount_usd, official_cost_usd, saved_usd, upstream_id, upstream_cost_usd)
     select gen_random_uuid(), $1, 'req-' || m || '-' || g, 'api', ts, ts, 'family_a', case when g % 3 = 0 then null else 'cheap' end, 'Cheap',
            '/v1/chat/completions', (array['gen-5.6-luna','gen-5.6-terra','zeta-5.2'])[1 + g % 3], case when g % 50 = 0 then 'error' else 'success' end,
            300, 1000 + g % 700, 200 + g % 300, g % 400, 1200 + g % 700 + g % 300, 0.016, 0.04, 0.00002 + (g % 100) * 0.0000001,
            case when g % 4 = 0 then null else 0.0002 end, 0.00018, 'primary', 0.00001
       from generate_series(0, $2::int) as m, generate_series(1, $3::int) as g,
            lateral (select m_start + (g::float / ($3::int + 1)) * (least(m_start + interval '1 month', $4::timestamptz - interval '1 hour') - m_start) as ts
                       from (select (($5::timestamptz at time zone 'UTC') - m * interval '1 month') at time zone 'UTC' as m_start) s) t`,
    [userId, months, perMonth, now, monthStart(now)],
  );
  await db.query(
    `insert into usage_hourly
     select user_id, date_trunc('hour', created_at), model, coalesce(route_group, ''), provider_family, count(*), sum(amount_usd),
            coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0), coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0),
            count(official_cost_usd), coalesce(sum(amount_usd) filter (where official_cost_usd is not null), 0), coalesce(sum(official_cost_usd), 0)
       from usage_events where user_id = $1 group by 1, 2, 3, 4, 5
     on conflict (user_id, hour, model, route_group, provider_family) do update set
       requests = usage_hourly.requests + excluded.requests, spend_usd = usage_hourly.spend_usd + excluded.spend_usd,
       input_tokens = usage_hourly.input_tokens + excluded.input_tokens, output_tokens = usage_hourly.output_tokens + excluded.output_tokens,
       cache_read_tokens = usage_hourly.cache_read_tokens + excluded.cache_read_tokens, cache_write_tokens = usage_hourly.cache_write_tokens + excluded.cache_write_tokens,
       comparable_requests = usage_hourly.comparable_requests + excluded.comparable_requests,
       comparable_spend_usd = usage_hourly.comparable_spend_usd + excluded.comparable_spend_usd, official_cost_usd = usage_hourly.official_cost_usd + excluded.official_cost_usd`,
    [userId],
  );
}

/** Rows in an order of their own (grouping sets come in no promised order), as comparable text. */
const canonical = (rows: unknown[]) => rows.map((row) => JSON.stringify(row)).sort();

/**
 * What the cabinet and the operator read of an account's usage over [from, to): the events list, one event by request
 * id, summaries (whole hours from the rollups, unaligned edges from the events), daily and hourly series, the
 * leaderboard, the margin report and upstream usage, and the ledger view (batch debits shown as their events).
 */
export async function cabinetAnswers(database: Database, userId: string, from: Date, to: Date): Promise<Record<string, unknown>> {
  const usage = new UsageRepository(database.reads);
  const margin = new MarginRepository(database.reads);
  const events = await usage.events(userId, {}, 100);
  const unalignedFrom = new Date(from.getTime() + 37 * 60_000);
  return {
    events,
    filtered: await usage.events(userId, { from: unalignedFrom, to, model: 'gen-5.6-terra', status: 'success' }, 100),
    byRequestId: await usage.eventByRequestId(userId, events[events.length - 1]!.requestId),
    summary: canonical(await usage.summary(userId, from, to)),
    summaryUnaligned: canonical(await usage.summary(userId, unalignedFrom, new Date(to.getTime() - 11 * 60_000))),
    daily: await usage.timeseries(userId, { from, to, first: from, last: new Date(to.getTime() - 86_400_000) }, 'day', {}),
    hourly: await usage.timeseries(userId, { from: unalignedFrom, to: new Date(from.getTime() + 2 * 86_400_000), first: from, last: new Date(from.getTime() + 47 * 3_600_000) }, 'hour', { model: 'zeta-5.2' }),
    leaderboard: await usage.leaderboard(from, to),
    margin: await margin.marginSums(from, to),
    upstreamUsage: await margin.upstreamUsage(from, to),
    ledger: await new AccountsRepository(database.orm).ledger(userId, 100),
  };
}

/** Which table holds each event: its partition's name. */
export async function partitionsOf(db: TestDatabase, ids: string[]): Promise<Map<string, string>> {
  const rows = await db.query<{ id: string; partition: string }>('select id, tableoid::regclass::text as partition from usage_events where id = any($1::uuid[])', [ids]);
  return new Map(rows.map((row) => [row.id, row.partition]));
}

/** Every account's stored balance equals the sum of its ledger rows. */
export async function balancesMatchLedger(db: TestDatabase): Promise<boolean> {
  const [row] = await db.query<{ off: number }>(
    `select count(*)::int as off from users u
      where u.balance_paid_usd + u.balance_bonus_usd <> coalesce((select sum(amount_usd) from transactions t where t.user_id = u.id), 0)`,
  );
  return row!.off === 0;
}
