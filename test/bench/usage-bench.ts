/**
 * `npm run bench:usage`: usage analytics over a large history. Seeds BENCH_EVENTS (default 1,000,000)
 * usage events of one account spread over 30 days and 5 models into a fresh database (plus the hourly
 * rollups the batch writer keeps), then times the summary, timeseries, list and leaderboard queries
 * (median of 5 runs each). First it times the batch writer: BENCH_WRITES (default 50,000) billed usage
 * records of BENCH_WRITE_ACCOUNTS (default 100) accounts, each with a paid and a bonus balance, recorded and flushed (usage events,
 * ledger debits, balances and rollups), then checks that every balance equals its ledger.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { migrate, openDatabase } from '../../src/db/database.js';
import { createServices, type Services } from '../../src/services.js';
import { systemClock } from '../../src/shared/clock.js';
import { createLogger } from '../../src/shared/logging.js';
import { createPubSub } from '../../src/shared/pubsub.js';
import { newTimeOrderedId } from '../../src/shared/ids.js';
import { seedUsageHistory } from '../helpers/usage-history.js';
import { serviceCpuBetween, serviceSnapshot } from './observe.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const WRITES = Number(process.env.BENCH_WRITES ?? 50_000);
const WRITE_ACCOUNTS = Number(process.env.BENCH_WRITE_ACCOUNTS ?? 100);
const ADMIN_URL = process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const log = (line: string) => process.stdout.write(`${line}\n`);

async function median(label: string, fn: () => Promise<unknown>): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  log(`${label.padEnd(52)} median ${times[2]!.toFixed(1).padStart(7)} ms   (min ${times[0]!.toFixed(1)}, max ${times[4]!.toFixed(1)})`);
}

async function main(): Promise<void> {
  const name = `baikal_bench_usage_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const config = loadConfig({ DATABASE_URL: url.toString(), NODE_ENV: 'test', LOG_LEVEL: 'silent' });
  const logger = createLogger('silent');
  const database = await openDatabase(config, logger);
  try {
    await migrate(database.orm, logger);
    const services = createServices({ orm: database.orm, config, clock: systemClock, pubsub: createPubSub(), log: logger });
    await services.catalog.load();
    const em = database.orm.em.fork();
    await benchWrites(services, em);
    const [user] = await em.execute<{ id: string }[]>(`insert into users (id, username, email, password_hash) values (gen_random_uuid(), 'bench', 'bench@example.test', 'x') returning id`);
    const userId = user!.id;

    const started = performance.now();
    const seeder = new pg.Client({ connectionString: url.toString() });
    await seeder.connect();
    await seedUsageHistory((sql, params) => seeder.query(sql, params), userId, EVENTS).finally(() => seeder.end());
    log(`seeded ${EVENTS.toLocaleString('en')} events of one account over 30 days in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    const actor = { userId, isAdmin: false, sessionId: 'bench' };
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    await median('summary, all time', () => services.analytics.summary(actor, {}));
    await median('summary, last 30 days (unaligned edges)', () => services.analytics.summary(actor, { from: iso(now - 30 * 86_400_000 + 1_234), to: iso(now - 777) }));
    await median('timeseries, 30 days by hour (720 points)', () => services.analytics.timeseries(actor, { from: iso(now - 30 * 86_400_000), to: iso(now), bucket: 'hour' }));
    await median('timeseries, 30 days by day, one model', () => services.analytics.timeseries(actor, { from: iso(now - 30 * 86_400_000), to: iso(now), bucket: 'day', model: 'zeta-5.2' }));
    await median('timeseries, last 24 h by minute (1440 points)', () => services.analytics.timeseries(actor, { from: iso(now - 86_400_000), to: iso(now), bucket: 'minute' }));
    await median('list, 50 newest with a model filter', () => services.analytics.list(actor, { model: 'eta-k3' }));
    await median('leaderboard, today', () => services.analytics.leaderboard(actor, {}));
  } finally {
    await database.close();
    await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
}

/** The batch writer's throughput: billed usage records to events, ledger debits and balances. */
async function benchWrites(services: Services, em: EntityManager): Promise<void> {
  const accounts = await em.execute<{ id: string }[]>(
    `insert into users (id, username, email, password_hash, balance_paid_usd, balance_bonus_usd)
     select gen_random_uuid(), 'writer-' || g, 'writer-' || g || '@example.test', 'x', 5, 0.5 from generate_series(1, ?::int) g returning id`,
    [WRITE_ACCOUNTS],
  );
  await em.execute(
    `insert into transactions (id, user_id, amount_usd, paid_usd, bonus_usd, kind, idempotency_key)
     select gen_random_uuid(), id, 5.5, 5, 0.5, 'topup', 'seed:' || id from users where username like 'writer-%'`,
  );
  const cpuBefore = await serviceSnapshot();
  const started = performance.now();
  for (let i = 0; i < WRITES; i++) {
    const at = new Date();
    services.usage.record({
      id: newTimeOrderedId(), userId: accounts[i % accounts.length]!.id, apiKeyId: null, requestId: `bench-${i}`, clientSurface: 'api',
      createdAt: at, completedAt: at, providerFamily: 'family_a', routeGroup: 'cheap', routeGroupLabel: 'Cheap', endpoint: '/v1/chat/completions',
      model: 'gen-5.6-luna', status: 'success', errorCode: null, latencyMs: 300, promptTokens: 1000, completionTokens: 200, cacheReadTokens: 0,
      cacheWriteTokens: 0, totalTokens: 1200, cacheHitRatio: '0', publicInputUsdPer1m: '0.016', publicOutputUsdPer1m: '0.04',
      publicCacheReadUsdPer1m: null, publicCacheWriteUsdPer1m: null, publicRequestUsdPerGeneration: null,
      amountUsd: `0.0000${1 + (i % 9)}`, officialCostUsd: null, savedUsd: null, upstreamId: null,
    });
    if (i % 1000 === 999) await new Promise((resolve) => setImmediate(resolve));
  }
  await services.usage.flush();
  const seconds = (performance.now() - started) / 1000;
  const postgresMs = serviceCpuBetween(cpuBefore, await serviceSnapshot()).postgres;
  const [check] = await em.execute<{ wrong: number }[]>(
    `select count(*)::int as wrong from users u where u.username like 'writer-%'
        and u.balance_paid_usd + u.balance_bonus_usd <> (select sum(amount_usd) from transactions t where t.user_id = u.id)`,
  );
  log(`batch writer: ${WRITES.toLocaleString('en')} billed records in ${seconds.toFixed(2)} s = ${Math.round(WRITES / seconds).toLocaleString('en')} records/s, PostgreSQL CPU ${((1000 * postgresMs) / WRITES).toFixed(1)} us per record; accounts whose balance differs from the ledger: ${check!.wrong}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
