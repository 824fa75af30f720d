import { Decimal } from 'decimal.js';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
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

const EVENT_COLUMNS = [
  'id', 'user_id', 'api_key_id', 'request_id', 'client_surface', 'created_at', 'completed_at', 'provider_family', 'route_group',
  'route_group_label', 'endpoint', 'model', 'status', 'error_code', 'latency_ms', 'prompt_tokens', 'completion_tokens',
  'cache_read_tokens', 'cache_write_tokens', 'total_tokens', 'cache_hit_ratio', 'public_input_usd_per_1m', 'public_output_usd_per_1m',
  'public_cache_read_usd_per_1m', 'public_cache_write_usd_per_1m', 'public_request_usd_per_generation', 'amount_usd',
  'official_cost_usd', 'saved_usd', 'transaction_id', 'upstream_id',
] as const;

function eventValues(r: UsageRecord, transactionId: string | null): unknown[] {
  return [
    r.id, r.userId, r.apiKeyId, r.requestId, r.clientSurface, r.createdAt, r.completedAt, r.providerFamily, r.routeGroup,
    r.routeGroupLabel, r.endpoint, r.model, r.status, r.errorCode, r.latencyMs, r.promptTokens, r.completionTokens,
    r.cacheReadTokens, r.cacheWriteTokens, r.totalTokens, r.cacheHitRatio, r.publicInputUsdPer1m, r.publicOutputUsdPer1m,
    r.publicCacheReadUsdPer1m, r.publicCacheWriteUsdPer1m, r.publicRequestUsdPerGeneration, r.amountUsd,
    r.officialCostUsd, r.savedUsd, transactionId, r.upstreamId,
  ];
}

const placeholders = (rows: number, columns: number) =>
  Array.from({ length: rows }, () => `(${Array.from({ length: columns }, () => '?').join(', ')})`).join(', ');

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
    await this.deps.orm.em.fork().transactional(async (tx) => {
      const transactionIds = await this.appendDebits(tx, batch.filter((r) => r.transactionId == null && money(r.amountUsd).greaterThan(0)));
      for (const r of batch) if (r.transactionId) transactionIds.set(r.id, r.transactionId);
      const inserted = await tx.execute<{ id: string }[]>(
        `insert into usage_events (${EVENT_COLUMNS.join(', ')}) values ${placeholders(batch.length, EVENT_COLUMNS.length)} on conflict (id) do nothing returning id`,
        batch.flatMap((r) => eventValues(r, transactionIds.get(r.id) ?? null)),
      );
      // The hourly rollups move by exactly the events appended (a replayed batch appends none).
      if (inserted.length) {
        await tx.execute(
          `insert into usage_hourly
           select user_id, date_trunc('hour', created_at), model, coalesce(route_group, ''), provider_family,
                  count(*), sum(amount_usd), coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0),
                  coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0),
                  count(official_cost_usd), coalesce(sum(amount_usd) filter (where official_cost_usd is not null), 0),
                  coalesce(sum(official_cost_usd), 0)
             from usage_events where id in (${inserted.map(() => '?').join(', ')}) group by 1, 2, 3, 4, 5
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
          inserted.map((r) => r.id),
        );
      }
    });
  }

  /** Appends one `usage` debit per record (bonus first), moves balances by what was appended; returns event id -> transaction id. */
  private async appendDebits(tx: EntityManager, billed: UsageRecord[]): Promise<Map<string, string>> {
    const ids = new Map<string, string>();
    if (!billed.length) return ids;
    const users = [...new Set(billed.map((r) => r.userId))].sort();
    const locked = await tx.execute<{ id: string; balance_bonus_usd: string }[]>(
      `select id, balance_bonus_usd from users where id in (${users.map(() => '?').join(', ')}) order by id for update`,
      users,
    );
    const bonusLeft = new Map(locked.map((u) => [u.id, Decimal.max(0, money(u.balance_bonus_usd))]));

    const rows = billed.map((r) => {
      const amount = money(r.amountUsd);
      const bonus = Decimal.min(bonusLeft.get(r.userId) ?? 0, amount);
      bonusLeft.set(r.userId, (bonusLeft.get(r.userId) ?? money(0)).minus(bonus));
      return [newId(), r.userId, amount.negated().toFixed(), amount.minus(bonus).negated().toFixed(), bonus.negated().toFixed(), 'usage',
        r.apiKeyId, r.providerFamily, r.model, r.promptTokens, r.completionTokens, `usage:${r.id}`, r.completedAt ?? r.createdAt];
    });
    const inserted = await tx.execute<{ id: string; user_id: string; paid_usd: string; bonus_usd: string }[]>(
      `insert into transactions (id, user_id, amount_usd, paid_usd, bonus_usd, kind, api_key_id, provider, model,
                                 prompt_tokens, completion_tokens, idempotency_key, created_at)
       values ${placeholders(rows.length, 13)}
       on conflict (idempotency_key) do nothing
       returning id, user_id, paid_usd, bonus_usd`,
      rows.flat(),
    );
    // Balances move by exactly the rows that were appended (a replayed batch appends none).
    const moved = new Map<string, { paid: Decimal; bonus: Decimal }>();
    for (const row of inserted) {
      const sum = moved.get(row.user_id) ?? { paid: money(0), bonus: money(0) };
      moved.set(row.user_id, { paid: sum.paid.plus(row.paid_usd), bonus: sum.bonus.plus(row.bonus_usd) });
    }
    if (moved.size) {
      const entries = [...moved.entries()];
      await tx.execute(
        `update users u set balance_paid_usd = u.balance_paid_usd + v.paid::numeric, balance_bonus_usd = u.balance_bonus_usd + v.bonus::numeric, updated_at = now()
           from (values ${entries.map(() => '(?::uuid, ?::text, ?::text)').join(', ')}) as v(id, paid, bonus) where u.id = v.id`,
        entries.flatMap(([id, sum]) => [id, sum.paid.toFixed(), sum.bonus.toFixed()]),
      );
    }
    const keys = billed.map((r) => `usage:${r.id}`);
    const all = await tx.execute<{ id: string; idempotency_key: string }[]>(
      `select id, idempotency_key from transactions where idempotency_key in (${keys.map(() => '?').join(', ')})`,
      keys,
    );
    for (const row of all) ids.set(row.idempotency_key.slice('usage:'.length), row.id);
    return ids;
  }
}
