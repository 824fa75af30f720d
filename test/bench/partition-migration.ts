/**
 * `npm run bench:partition`: how long converting usage_events to monthly partitions takes on a big table, and how
 * long writers and readers wait for it. Fills a throwaway database (schema as before the conversion) with
 * BENCH_EVENTS (default 3,000,000) usage events spread over the last 12 months and their hourly rollups, then runs
 * the gateway's `migrate()` (the preparation outside the migrations' transaction, then the migration) while an
 * inserter writes one event every few milliseconds and a reader reads an account's newest events, each timing
 * every statement; a sampler watches pg_locks for ACCESS EXCLUSIVE locks on usage_events. Last, a retention round
 * a year later drops the old table (whole, its rollups verified first) under the same watch.
 * BENCH_UNPREPARED=1 converts without the preparation (as `orm.migrator.up()` alone would): the contrast.
 * BENCH_TEMPLATE=<database> keeps the filled database under that name and clones later runs from it (drop it after).
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { migrate, openDatabase } from '../../src/db/database.js';
import { createLogger } from '../../src/shared/logging.js';
import { monthStart, UsagePartitions } from '../../src/usage/usage-partitions.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 3_000_000);
const UNPREPARED = process.env.BENCH_UNPREPARED === '1';
const ADMIN_URL = process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const BEFORE_PARTITIONING = 'Migration20261129100000_alerts';
const out = (line: string) => process.stdout.write(`${line}\n`);

/** The phase under way; the watchers file their figures under it. */
let phase = 'fill';

/** Per phase: the longest statement of a watcher, how many it ran. */
class Stalls {
  readonly worst = new Map<string, { ms: number; count: number }>();
  note(ms: number): void {
    const seen = this.worst.get(phase) ?? { ms: 0, count: 0 };
    this.worst.set(phase, { ms: Math.max(seen.ms, ms), count: seen.count + 1 });
  }
}

/** Runs `statement` (its values drawn for each run) on a connection of its own every `everyMs` until stopped, timing each run. */
async function watcher(url: string, statement: { name: string; text: string; values: () => unknown[] }, everyMs: number, stalls: Stalls, running: () => boolean): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    while (running()) {
      const started = performance.now();
      await client.query({ ...statement, values: statement.values() });
      stalls.note(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  } finally {
    await client.end();
  }
}

/** Samples ACCESS EXCLUSIVE locks on usage_events* every 10 ms: per phase, how long one was seen held, and the most sessions seen waiting. */
async function lockSampler(url: string, running: () => boolean): Promise<Map<string, { heldMs: number; maxWaiting: number }>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const seen = new Map<string, { heldMs: number; maxWaiting: number }>();
  let last = performance.now();
  try {
    while (running()) {
      const { rows } = await client.query<{ held: number; waiting: number }>(
        `select count(*) filter (where l.granted and l.mode = 'AccessExclusiveLock' and c.relkind in ('r', 'p'))::int as held,
                count(distinct l.pid) filter (where not l.granted)::int as waiting
           from pg_locks l join pg_class c on c.oid = l.relation where c.relname like 'usage_events%' and l.pid <> pg_backend_pid()`,
      );
      const now = performance.now();
      const entry = seen.get(phase) ?? { heldMs: 0, maxWaiting: 0 };
      if (rows[0]!.held > 0) entry.heldMs += now - last;
      entry.maxWaiting = Math.max(entry.maxWaiting, rows[0]!.waiting);
      seen.set(phase, entry);
      last = now;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    await client.end();
  }
  return seen;
}

async function fill(client: pg.Client): Promise<void> {
  await client.query(`insert into users (id, username, email, password_hash) select md5(g::text)::uuid, 'bench' || g, 'bench' || g || '@example.test', 'x' from generate_series(0, 199) as g`);
  const chunk = 500_000;
  for (let start = 0; start < EVENTS; start += chunk) {
    await client.query(
      `insert into usage_events (id, user_id, request_id, client_surface, created_at, completed_at, provider_family, route_group, route_group_label,
                                 endpoint, model, status, latency_ms, prompt_tokens, completion_tokens, cache_read_tokens, total_tokens,
                                 public_input_usd_per_1m, public_output_usd_per_1m, amount_usd, official_cost_usd, saved_usd, upstream_id, upstream_cost_usd)
       select gen_random_uuid(), md5((g % 200)::text)::uuid, 'req_' || g, 'api', ts, ts + interval '900 ms', 'family_a', 'cheap', 'Cheap',
              '/v1/chat/completions', (array['gen-5.6-luna','gen-5.6-terra','gen-5.6-sol','zeta-5.2','eta-k3'])[1 + g % 5],
              case when g % 50 = 0 then 'error' else 'success' end, 300 + g % 900, 1000 + g % 700, 200 + g % 300, g % 400, 1200 + g % 700 + g % 300,
              0.016, 0.04, 0.00002 + (g % 100) * 0.0000001, 0.0002, 0.00018, 'primary', 0.00001
         from generate_series($1::int, $2::int) as g, lateral (select now() - interval '1 hour' - ($3::int - g) * (interval '365 days' / $3::int) as ts) t`,
      [start + 1, Math.min(start + chunk, EVENTS), EVENTS],
    );
    out(`  filled ${Math.min(start + chunk, EVENTS).toLocaleString('en')} events`);
  }
  await client.query(
    `insert into usage_hourly
     select user_id, date_trunc('hour', created_at), model, coalesce(route_group, ''), provider_family, count(*), sum(amount_usd),
            coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0), coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0),
            count(official_cost_usd), coalesce(sum(amount_usd) filter (where official_cost_usd is not null), 0), coalesce(sum(official_cost_usd), 0)
       from usage_events group by 1, 2, 3, 4, 5`,
  );
  await client.query('vacuum analyze usage_events');
  await client.query('vacuum analyze usage_hourly');
}

/** The log, read for the line that ends the preparation (the phase moves to the migration then). */
const log = createLogger('info', new Writable({ write: (chunk: Buffer, _encoding, done) => {
  const line = JSON.parse(chunk.toString()) as { msg: string; ms?: number };
  if (line.msg.startsWith('prepared usage_events')) {
    phase = 'migration';
    out(`  preparation: ${line.ms} ms`);
  }
  done();
} }));

const urlOf = (name: string) => Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString();

/**
 * A database named `name` as before the conversion, filled. BENCH_TEMPLATE names a database to clone it from (filled
 * once, by the first run that names it, and kept): the fill takes minutes, a clone seconds.
 */
async function filledDatabase(admin: pg.Client, name: string): Promise<void> {
  const template = process.env.BENCH_TEMPLATE;
  const exists = template && (await admin.query('select 1 from pg_database where datname = $1', [template])).rowCount;
  if (!template || !exists) {
    await admin.query(`create database "${template ?? name}"`);
    const database = await openDatabase(loadConfig({ DATABASE_URL: urlOf(template ?? name), NODE_ENV: 'test', LOG_LEVEL: 'silent' }), log);
    const client = new pg.Client({ connectionString: urlOf(template ?? name) });
    await client.connect();
    try {
      await database.orm.migrator.up({ to: BEFORE_PARTITIONING });
      out(`filling ${EVENTS.toLocaleString('en')} usage events over 12 months, and their hourly rollups`);
      const started = performance.now();
      await fill(client);
      out(`  fill: ${((performance.now() - started) / 1000).toFixed(1)} s`);
    } finally {
      await client.end();
      await database.orm.close(true);
    }
  }
  if (template) await admin.query(`create database "${name}" template "${template}"`);
}

/** The watchers' statements: an event and its rollup in one statement, as the usage recorder writes them (dated `later` from the retention's phase on), and an account's newest events. */
function statements(userId: string, later: Date) {
  return {
    insert: {
      name: 'bench_insert',
      text: `with e as (
               insert into usage_events (id, user_id, request_id, client_surface, created_at, provider_family, route_group_label, model, status,
                                         public_input_usd_per_1m, public_output_usd_per_1m, amount_usd)
               values (gen_random_uuid(), $1, 'bench', 'api', $2, 'family_a', 'Cheap', 'gen-5.6-luna', 'success', 0.016, 0.04, 0.00001)
               returning user_id, created_at, model, route_group, provider_family, amount_usd)
             insert into usage_hourly select user_id, date_trunc('hour', created_at), model, coalesce(route_group, ''), provider_family, 1, amount_usd, 0, 0, 0, 0, 0, 0, 0 from e
             on conflict (user_id, hour, model, route_group, provider_family) do update set requests = usage_hourly.requests + 1, spend_usd = usage_hourly.spend_usd + excluded.spend_usd`,
      values: () => [userId, phase === 'retention' || phase === 'end' ? new Date(later.getTime() + 86_400_000) : new Date()],
    },
    read: { name: 'bench_read', text: 'select id from usage_events where user_id = $1 order by created_at desc limit 10', values: () => [userId] },
  };
}

/** The conversion, then a year on the months made ahead and the retention round, each timed and watched. */
async function convertWatched(url: string): Promise<void> {
  const database = await openDatabase(loadConfig({ DATABASE_URL: url, NODE_ENV: 'test', LOG_LEVEL: 'info' }), log);
  try {
    const [size] = await database.orm.em.fork().execute<{ table: string; indexes: string }[]>(
      `select pg_size_pretty(pg_table_size('usage_events')) as table, pg_size_pretty(pg_indexes_size('usage_events')) as indexes`,
    );
    out(`usage_events: ${EVENTS.toLocaleString('en')} events, ${size!.table} of rows, ${size!.indexes} of indexes`);
    let running = true;
    const writes = new Stalls();
    const reads = new Stalls();
    const later = monthStart(new Date(), 14);
    const { insert, read } = statements('8f14e45f-ceea-167a-5a36-dedd4bea2543', later); // md5('7'), one of the filled accounts
    const watchers = [watcher(url, insert, 5, writes, () => running), watcher(url, read, 5, reads, () => running)];
    const locks = lockSampler(url, () => running);
    await new Promise((resolve) => setTimeout(resolve, 500));

    phase = UNPREPARED ? 'migration' : 'preparation';
    out(UNPREPARED ? 'converting without the preparation (orm.migrator.up() alone)' : 'converting: migrate() (preparation, then the migration)');
    let started = performance.now();
    if (UNPREPARED) await database.orm.migrator.up();
    else await migrate(database.orm, log);
    out(`  conversion in all: ${(performance.now() - started).toFixed(0)} ms`);
    phase = 'after';
    await new Promise((resolve) => setTimeout(resolve, 500));
    // A year on: that month's partitions made (as the hourly rounds would have), then the round that applies the retention.
    phase = 'ahead';
    await new UsagePartitions({ orm: database.orm, log, clock: { now: () => later }, settings: { retentionMonths: null } }).maintain();
    phase = 'retention';
    started = performance.now();
    const round = await new UsagePartitions({ orm: database.orm, log, clock: { now: () => later }, settings: { retentionMonths: 3 } }).maintain();
    out(`retention round a year later (keep 3 months): ${(performance.now() - started).toFixed(0)} ms; dropped ${round.dropped.join(', ')}; kept ${round.kept.join(', ') || 'none'}`);
    phase = 'end';
    await new Promise((resolve) => setTimeout(resolve, 300));
    running = false;
    await Promise.all(watchers);
    report(writes, reads, await locks);
  } finally {
    await database.orm.close(true);
  }
}

function report(writes: Stalls, reads: Stalls, held: Map<string, { heldMs: number; maxWaiting: number }>): void {
  out('\nphase          writer: longest insert (count)   reader: longest select (count)   ACCESS EXCLUSIVE seen held   most waiting');
  for (const at of ['preparation', 'migration', 'after', 'ahead', 'retention']) {
    const w = writes.worst.get(at);
    const r = reads.worst.get(at);
    const l = held.get(at);
    if (!w && !r) continue;
    out(`${at.padEnd(15)}${`${w?.ms.toFixed(1) ?? '-'} ms (${w?.count ?? 0})`.padEnd(33)}${`${r?.ms.toFixed(1) ?? '-'} ms (${r?.count ?? 0})`.padEnd(33)}${`${l?.heldMs.toFixed(0) ?? 0} ms`.padEnd(29)}${l?.maxWaiting ?? 0}`);
  }
}

async function main(): Promise<void> {
  const name = `baikal_bench_partition_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await filledDatabase(admin, name);
    await convertWatched(urlOf(name));
  } finally {
    await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
