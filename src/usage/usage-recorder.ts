import { Decimal } from 'decimal.js';
import type { MikroORM, PostgreSqlConnection } from '@mikro-orm/postgresql';
import type { Pool, PoolClient } from 'pg';
import { newId } from '../shared/ids.js';
import type { Metrics } from '../metrics.js';
import type { Logger } from '../shared/logging.js';
import { money } from '../shared/money.js';

export type UsageStatus = 'pending' | 'success' | 'error' | 'cancelled';

/** One inference request as SPEC.md's Usage event describes it, plus who made it and (for operators) where it went. */
export interface UsageRecord {
  id: string;
  userId: string;
  apiKeyId: string | null;
  requestId: string;
  clientSurface: string;
  createdAt: Date;
  completedAt: Date | null;
  providerFamily: string;
  routeGroup: string | null;
  routeGroupLabel: string;
  endpoint: string | null;
  model: string;
  status: UsageStatus;
  errorCode: string | null;
  latencyMs: number | null;
  promptTokens: number | null;
  completionTokens: number | null;
  cacheReadTokens: number | null;
  cacheWriteTokens: number | null;
  totalTokens: number | null;
  cacheHitRatio: string | null;
  publicInputUsdPer1m: string;
  publicOutputUsdPer1m: string;
  publicCacheReadUsdPer1m: string | null;
  publicCacheWriteUsdPer1m: string | null;
  publicRequestUsdPerGeneration: string | null;
  /** What the user pays; posted to the ledger (kind `usage`) when above zero. */
  amountUsd: string;
  officialCostUsd: string | null;
  savedUsd: string | null;
  /** Operator-only: the upstream that served the request. Never shown to users. */
  upstreamId: string | null;
  /** Set when the charge was already posted to the ledger (a video settlement): the event links to it, nothing more is debited. */
  transactionId?: string | null;
}

/** How often queued records are written, and how many at most per statement. */
const FLUSH_INTERVAL_MS = 20;
const MAX_BATCH = 200;
const RETRY_MS = 1_000;

/** usage_events columns and their types: events are inserted from one array per column (`unnest`). */
const EVENT_COLUMNS = [
  ['id', 'uuid'], ['user_id', 'uuid'], ['api_key_id', 'uuid'], ['request_id', 'text'], ['client_surface', 'text'], ['created_at', 'timestamptz'],
  ['completed_at', 'timestamptz'], ['provider_family', 'text'], ['route_group', 'text'], ['route_group_label', 'text'], ['endpoint', 'text'],
  ['model', 'text'], ['status', 'text'], ['error_code', 'text'], ['latency_ms', 'int4'], ['prompt_tokens', 'int4'], ['completion_tokens', 'int4'],
  ['cache_read_tokens', 'int4'], ['cache_write_tokens', 'int4'], ['total_tokens', 'int4'], ['cache_hit_ratio', 'numeric'],
  ['public_input_usd_per_1m', 'numeric'], ['public_output_usd_per_1m', 'numeric'], ['public_cache_read_usd_per_1m', 'numeric'],
  ['public_cache_write_usd_per_1m', 'numeric'], ['public_request_usd_per_generation', 'numeric'], ['amount_usd', 'numeric'],
  ['official_cost_usd', 'numeric'], ['saved_usd', 'numeric'], ['transaction_id', 'uuid'], ['upstream_id', 'text'],
] as const;

function eventValues(r: UsageRecord, transactionId: string | null): unknown[] {
  return [
    r.id, r.userId, r.apiKeyId, r.requestId, r.clientSurface, r.createdAt.toISOString(), r.completedAt?.toISOString() ?? null, r.providerFamily, r.routeGroup,
    r.routeGroupLabel, r.endpoint, r.model, r.status, r.errorCode, r.latencyMs, r.promptTokens, r.completionTokens,
    r.cacheReadTokens, r.cacheWriteTokens, r.totalTokens, r.cacheHitRatio, r.publicInputUsdPer1m, r.publicOutputUsdPer1m,
    r.publicCacheReadUsdPer1m, r.publicCacheWriteUsdPer1m, r.publicRequestUsdPerGeneration, r.amountUsd,
    r.officialCostUsd, r.savedUsd, transactionId, r.upstreamId,
  ];
}

/** Rows as one array per column: the parameters of an `unnest` insert. */
function columnsOf(rows: unknown[][], width: number): unknown[][] {
  const columns = Array.from({ length: width }, () => new Array<unknown>(rows.length));
  rows.forEach((row, r) => row.forEach((value, c) => (columns[c]![r] = value)));
  return columns;
}

/**
 * The batch's statements. Their text never changes with the batch size (rows travel as arrays), so
 * each is parsed and planned once per connection (named prepared statements) and costs this process
 * little more than serializing its parameters.
 */
const SQL = {
  lockUsers: { name: 'usage_lock_users', text: 'select id, balance_bonus_usd from users where id = any($1::uuid[]) order by id for update' },
  appendDebits: {
    name: 'usage_append_debits',
    text: `insert into transactions (id, user_id, amount_usd, paid_usd, bonus_usd, kind, api_key_id, provider, model,
                                   prompt_tokens, completion_tokens, idempotency_key, created_at)
           select id, user_id, amount, paid, bonus, 'usage', api_key_id, provider, model, prompt_tokens, completion_tokens, idempotency_key, created_at
             from unnest($1::uuid[], $2::uuid[], $3::numeric[], $4::numeric[], $5::numeric[], $6::uuid[], $7::text[], $8::text[],
                         $9::int4[], $10::int4[], $11::text[], $12::timestamptz[])
                  as v(id, user_id, amount, paid, bonus, api_key_id, provider, model, prompt_tokens, completion_tokens, idempotency_key, created_at)
           on conflict (idempotency_key) do nothing
           returning id, user_id, paid_usd, bonus_usd`,
  },
  moveBalances: {
    name: 'usage_move_balances',
    text: `update users u set balance_paid_usd = u.balance_paid_usd + v.paid, balance_bonus_usd = u.balance_bonus_usd + v.bonus, updated_at = now()
             from unnest($1::uuid[], $2::numeric[], $3::numeric[]) as v(id, paid, bonus) where u.id = v.id`,
  },
  debitIds: { name: 'usage_debit_ids', text: 'select id, idempotency_key from transactions where idempotency_key = any($1::text[])' },
  insertEvents: {
    name: 'usage_insert_events',
    text: `insert into usage_events (${EVENT_COLUMNS.map(([name]) => name).join(', ')})
           select * from unnest(${EVENT_COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ')})
           on conflict (id) do nothing returning id`,
  },
  // The hourly rollups move by exactly the events appended (a replayed batch appends none).
  rollUp: {
    name: 'usage_roll_up',
    text: `insert into usage_hourly
           select user_id, date_trunc('hour', created_at), model, coalesce(route_group, ''), provider_family,
                  count(*), sum(amount_usd), coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0),
                  coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0),
                  count(official_cost_usd), coalesce(sum(amount_usd) filter (where official_cost_usd is not null), 0),
                  coalesce(sum(official_cost_usd), 0)
             from usage_events where id = any($1::uuid[]) group by 1, 2, 3, 4, 5
           on conflict (user_id, hour, model, route_group, provider_family) do update set
             requests = usage_hourly.requests + excluded.requests,
             spend_usd = usage_hourly.spend_usd + excluded.spend_usd,
             input_tokens = usage_hourly.input_tokens + excluded.input_tokens,
             output_tokens = usage_hourly.output_tokens + excluded.output_tokens,
             cache_read_tokens = usage_hourly.cache_read_tokens + excluded.cache_read_tokens,
             cache_write_tokens = usage_hourly.cache_write_tokens + excluded.cache_write_tokens,
             comparable_requests = usage_hourly.comparable_requests + excluded.comparable_requests,
             comparable_spend_usd = usage_hourly.comparable_spend_usd + excluded.comparable_spend_usd,
             official_cost_usd = usage_hourly.official_cost_usd + excluded.official_cost_usd`,
  },
} as const;

/**
 * Writes usage events and their ledger debits in short batches (group commit): one PostgreSQL
 * transaction per batch locks the accounts involved, appends one ledger row per billed request
 * (idempotent on `usage:<event id>`), moves the stored balances by exactly the appended rows, and
 * inserts the events. The in-memory wallets were already moved when the request finished, so callers
 * never wait for this. A failed batch is retried (every write is idempotent) and flushed at shutdown.
 */
export class UsageRecorder {
  private queue: UsageRecord[] = [];
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> | null = null;
  private written = 0;
  private pool?: Pool;

  constructor(private readonly deps: { orm: MikroORM; log: Logger; metrics?: Metrics }) {}

  record(record: UsageRecord): void {
    this.deps.metrics?.observeUsage(record);
    this.queue.push(record);
    if (this.queue.length >= MAX_BATCH) void this.flush().catch(() => undefined);
    else this.timer ??= setTimeout(() => void this.flush().catch(() => undefined), FLUSH_INTERVAL_MS);
  }

  get pending(): number {
    return this.queue.length;
  }

  get recorded(): number {
    return this.written;
  }

  /** Writes everything queued so far (retrying failed batches until `deadline`). */
  async flush(deadline = Number.POSITIVE_INFINITY): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.flushing) await this.flushing;
    while (this.queue.length) {
      const batch = this.queue.splice(0, MAX_BATCH);
      this.flushing = this.write(batch);
      try {
        await this.flushing;
        this.written += batch.length;
      } catch (error) {
        this.queue.unshift(...batch);
        this.deps.log.error({ err: error, records: batch.length }, 'could not write usage batch; retrying');
        if (Date.now() + RETRY_MS > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      } finally {
        this.flushing = null;
      }
    }
  }

  private async write(batch: UsageRecord[]): Promise<void> {
    this.pool ??= await (this.deps.orm.em.getConnection() as PostgreSqlConnection).getNativeClient();
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('begin');
      const transactionIds = await this.appendDebits(client, batch.filter((r) => r.transactionId == null && money(r.amountUsd).greaterThan(0)));
      for (const r of batch) if (r.transactionId) transactionIds.set(r.id, r.transactionId);
      const inserted = await client.query<{ id: string }>({ ...SQL.insertEvents, values: columnsOf(batch.map((r) => eventValues(r, transactionIds.get(r.id) ?? null)), EVENT_COLUMNS.length) });
      if (inserted.rows.length) await client.query({ ...SQL.rollUp, values: [inserted.rows.map((r) => r.id)] });
      await client.query('commit');
    } catch (error) {
      broken = error instanceof Error ? error : new Error(String(error));
      await client.query('rollback').then(() => (broken = undefined), () => undefined);
      throw error;
    } finally {
      // A connection that could not even roll back is discarded, not returned to the pool.
      client.release(broken);
    }
  }

  /** Appends one `usage` debit per record (bonus first), moves balances by what was appended; returns event id -> transaction id. */
  private async appendDebits(client: PoolClient, billed: UsageRecord[]): Promise<Map<string, string>> {
    const ids = new Map<string, string>();
    if (!billed.length) return ids;
    const users = [...new Set(billed.map((r) => r.userId))].sort();
    const locked = await client.query<{ id: string; balance_bonus_usd: string }>({ ...SQL.lockUsers, values: [users] });
    const bonusLeft = new Map(locked.rows.map((u) => [u.id, Decimal.max(0, money(u.balance_bonus_usd))]));

    const rows = billed.map((r) => {
      const amount = money(r.amountUsd);
      const bonus = Decimal.min(bonusLeft.get(r.userId) ?? 0, amount);
      bonusLeft.set(r.userId, (bonusLeft.get(r.userId) ?? money(0)).minus(bonus));
      return [newId(), r.userId, amount.negated().toFixed(), amount.minus(bonus).negated().toFixed(), bonus.negated().toFixed(),
        r.apiKeyId, r.providerFamily, r.model, r.promptTokens, r.completionTokens, `usage:${r.id}`, (r.completedAt ?? r.createdAt).toISOString()];
    });
    const inserted = await client.query<{ id: string; user_id: string; paid_usd: string; bonus_usd: string }>({ ...SQL.appendDebits, values: columnsOf(rows, 12) });
    // Balances move by exactly the rows that were appended (a replayed batch appends none).
    const moved = new Map<string, { paid: Decimal; bonus: Decimal }>();
    for (const row of inserted.rows) {
      const sum = moved.get(row.user_id) ?? { paid: money(0), bonus: money(0) };
      moved.set(row.user_id, { paid: sum.paid.plus(row.paid_usd), bonus: sum.bonus.plus(row.bonus_usd) });
    }
    if (moved.size) {
      const entries = [...moved.entries()];
      await client.query({ ...SQL.moveBalances, values: [entries.map(([id]) => id), entries.map(([, sum]) => sum.paid.toFixed()), entries.map(([, sum]) => sum.bonus.toFixed())] });
    }
    const all = await client.query<{ id: string; idempotency_key: string }>({ ...SQL.debitIds, values: [billed.map((r) => `usage:${r.id}`)] });
    for (const row of all.rows) ids.set(row.idempotency_key.slice('usage:'.length), row.id);
    return ids;
  }
}
