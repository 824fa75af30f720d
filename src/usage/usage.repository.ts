import type { AnalyticsReads } from '../shared/analytics-reads.js';
import { plainDecimal } from '../shared/money.js';
import type { UsageRecord, UsageStatus } from './usage-recorder.js';

/**
 * The usage tables as the analytics read them: usage_events (one row per request) and usage_hourly (the
 * rollups the batch writer keeps). The SQL and the row types live here; AnalyticsService keeps the rules
 * (validation, ranges, savings, masking) and returns views. The writer is src/usage/usage-recorder.ts.
 *
 * Every read goes where the analytics read (AnalyticsReads): the read replica when DATABASE_READ_URL names one,
 * so a list or a chart may lag the primary by the replica's replay. Nothing here decides money.
 */

/** A usage event as users see it: its record without the operator's upstream and the internal links. */
export type UsageEventView = Omit<UsageRecord, 'userId' | 'upstreamId' | 'transactionId' | 'upstreamCredentialId' | 'upstreamCostUsd'>;

/** A usage event row as stored (users' columns only). */
export interface UsageEventRow {
  id: string;
  request_id: string;
  client_surface: string;
  created_at: Date;
  completed_at: Date | null;
  provider_family: string;
  route_group: string | null;
  route_group_label: string;
  endpoint: string | null;
  model: string;
  status: string;
  error_code: string | null;
  latency_ms: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  total_tokens: number | null;
  cache_hit_ratio: string | null;
  public_input_usd_per_1m: string;
  public_output_usd_per_1m: string;
  public_cache_read_usd_per_1m: string | null;
  public_cache_write_usd_per_1m: string | null;
  public_request_usd_per_generation: string | null;
  amount_usd: string;
  official_cost_usd: string | null;
  saved_usd: string | null;
  api_key_id: string | null;
}

/** Columns users may see: everything but the operator-only upstream, credential and cost, and internal links. */
export const EVENT_COLUMNS = `id, request_id, client_surface, created_at, completed_at, provider_family, route_group, route_group_label, endpoint,
  model, status, error_code, latency_ms, prompt_tokens, completion_tokens, cache_read_tokens, cache_write_tokens, total_tokens,
  cache_hit_ratio::text, public_input_usd_per_1m::text, public_output_usd_per_1m::text, public_cache_read_usd_per_1m::text,
  public_cache_write_usd_per_1m::text, public_request_usd_per_generation::text, amount_usd::text, official_cost_usd::text,
  saved_usd::text, api_key_id`;

/** The aggregate columns shared by rollups and raw events, in one order. */
export const AGG = `count(*)::bigint as requests, sum(amount_usd) as spend_usd, coalesce(sum(prompt_tokens), 0) as input_tokens,
  coalesce(sum(completion_tokens), 0) as output_tokens, coalesce(sum(cache_read_tokens), 0) as cache_read_tokens,
  coalesce(sum(cache_write_tokens), 0) as cache_write_tokens, count(official_cost_usd) as comparable_requests,
  coalesce(sum(amount_usd) filter (where official_cost_usd is not null), 0) as comparable_spend_usd,
  coalesce(sum(official_cost_usd), 0) as official_cost_usd`;
const ROLLUP_AGG = `sum(requests) as requests, sum(spend_usd) as spend_usd, sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens,
  sum(cache_read_tokens) as cache_read_tokens, sum(cache_write_tokens) as cache_write_tokens, sum(comparable_requests) as comparable_requests,
  sum(comparable_spend_usd) as comparable_spend_usd, sum(official_cost_usd) as official_cost_usd`;

/** Sums of one group of rows, as PostgreSQL returns them (numerics as text; sums over no rows are null). */
export interface TotalsRow {
  requests: string;
  spend_usd: string | null;
  input_tokens: string;
  output_tokens: string;
  cache_read_tokens: string;
  cache_write_tokens: string;
  comparable_requests: string;
  comparable_spend_usd: string;
  official_cost_usd: string;
}

export function toUsageEventView(e: UsageEventRow): UsageEventView {
  return {
    id: e.id,
    requestId: e.request_id,
    clientSurface: e.client_surface,
    createdAt: new Date(e.created_at),
    completedAt: e.completed_at === null ? null : new Date(e.completed_at),
    providerFamily: e.provider_family,
    routeGroup: e.route_group,
    routeGroupLabel: e.route_group_label,
    endpoint: e.endpoint,
    model: e.model,
    status: e.status as UsageStatus,
    errorCode: e.error_code,
    latencyMs: e.latency_ms,
    promptTokens: e.prompt_tokens,
    completionTokens: e.completion_tokens,
    cacheReadTokens: e.cache_read_tokens,
    cacheWriteTokens: e.cache_write_tokens,
    totalTokens: e.total_tokens,
    cacheHitRatio: plainDecimal(e.cache_hit_ratio),
    publicInputUsdPer1m: plainDecimal(e.public_input_usd_per_1m)!,
    publicOutputUsdPer1m: plainDecimal(e.public_output_usd_per_1m)!,
    publicCacheReadUsdPer1m: plainDecimal(e.public_cache_read_usd_per_1m),
    publicCacheWriteUsdPer1m: plainDecimal(e.public_cache_write_usd_per_1m),
    publicRequestUsdPerGeneration: plainDecimal(e.public_request_usd_per_generation),
    amountUsd: plainDecimal(e.amount_usd)!,
    officialCostUsd: plainDecimal(e.official_cost_usd),
    savedUsd: plainDecimal(e.saved_usd),
    apiKeyId: e.api_key_id,
  };
}

const HOUR = 3_600_000;
const floorHour = (d: Date) => new Date(Math.floor(d.getTime() / HOUR) * HOUR);
const ceilHour = (d: Date) => new Date(Math.ceil(d.getTime() / HOUR) * HOUR);

export interface UsageFilters {
  model?: string;
  group?: string;
  providerFamily?: string;
}

/**
 * A source of per-hour (or finer) aggregates over [from, to): whole hours come from `usage_hourly`,
 * the unaligned edges from `usage_events`. Returns SQL yielding `(user_id, at, model, route_group,
 * provider_family, <AGG columns>)` and its parameters; `rawBucket` is the truncation used for raw rows.
 */
function hourlySource(userId: string | null, from: Date | null, to: Date | null, filters: UsageFilters, rawBucket: 'hour' | 'minute' = 'hour'): { sql: string; params: unknown[] } {
  const lo = from ? ceilHour(from) : null;
  const hi = to ? floorHour(to) : null;
  const parts: string[] = [];
  const params: unknown[] = [];
  const where = (column: { user: string; model: string; group: string; family: string }) => {
    const clauses: string[] = [];
    const values: unknown[] = [];
    if (userId) (clauses.push(`${column.user} = ?`), values.push(userId));
    if (filters.model) (clauses.push(`${column.model} = ?`), values.push(filters.model));
    if (filters.group) (clauses.push(`${column.group} = ?`), values.push(filters.group));
    if (filters.providerFamily) (clauses.push(`${column.family} = ?`), values.push(filters.providerFamily));
    return { clauses, values };
  };
  const raw = (start: Date | null, end: Date | null) => {
    const w = where({ user: 'user_id', model: 'model', group: "coalesce(route_group, '')", family: 'provider_family' });
    if (start) (w.clauses.push('created_at >= ?'), w.values.push(start));
    if (end) (w.clauses.push('created_at < ?'), w.values.push(end));
    parts.push(`select user_id, date_trunc('${rawBucket}', created_at) as at, model, coalesce(route_group, '') as route_group, provider_family, ${AGG}
                from usage_events where ${w.clauses.join(' and ') || 'true'} group by 1, 2, 3, 4, 5`);
    params.push(...w.values);
  };
  if (rawBucket === 'minute' || (lo && hi && lo >= hi)) {
    raw(from, to); // all of it is finer than, or inside, one hour
  } else {
    const w = where({ user: 'user_id', model: 'model', group: 'route_group', family: 'provider_family' });
    if (lo) (w.clauses.push('hour >= ?'), w.values.push(lo));
    if (hi) (w.clauses.push('hour < ?'), w.values.push(hi));
    parts.push(`select user_id, hour as at, model, route_group, provider_family, requests::bigint, spend_usd, input_tokens, output_tokens, cache_read_tokens,
                       cache_write_tokens, comparable_requests::bigint, comparable_spend_usd, official_cost_usd
                  from usage_hourly where ${w.clauses.join(' and ') || 'true'}`);
    params.push(...w.values);
    if (from && lo && from < lo) raw(from, lo);
    if (to && hi && hi < to) raw(hi, to);
  }
  return { sql: parts.join(' union all '), params };
}

/** One user's daily figures for the leaderboard. */
export interface LeaderboardRow {
  user_id: string;
  username: string | null;
  tokens: string;
  comparable_spend_usd: string;
  official_cost_usd: string;
  rank: string;
}

export class UsageRepository {
  constructor(private readonly reads: AnalyticsReads) {}

  /** An account's events, newest first, with optional filters. */
  async events(userId: string, filters: UsageFilters & { from?: Date; to?: Date; status?: string }, limit: number): Promise<UsageEventView[]> {
    const clauses = ['user_id = ?'];
    const params: unknown[] = [userId];
    if (filters.from) (clauses.push('created_at >= ?'), params.push(filters.from));
    if (filters.to) (clauses.push('created_at < ?'), params.push(filters.to));
    if (filters.model) (clauses.push('model = ?'), params.push(filters.model));
    if (filters.group) (clauses.push('route_group = ?'), params.push(filters.group));
    if (filters.status) (clauses.push('status = ?'), params.push(filters.status));
    if (filters.providerFamily) (clauses.push('provider_family = ?'), params.push(filters.providerFamily));
    const rows = await this.reads.query<UsageEventRow[]>(
      `select ${EVENT_COLUMNS} from usage_events where ${clauses.join(' and ')} order by created_at desc, id desc limit ?`,
      [...params, limit],
    );
    return rows.map(toUsageEventView);
  }

  /**
   * The account's latest event with this request id. A client asks for it right after its request, which the
   * replica may not have replayed yet: one it does not find is looked for on the primary before it is a 404.
   */
  async eventByRequestId(userId: string, requestId: string): Promise<UsageEventView | null> {
    const sql = `select ${EVENT_COLUMNS} from usage_events where user_id = ? and request_id = ? order by created_at desc limit 1`;
    let [row] = await this.reads.query<UsageEventRow[]>(sql, [userId, requestId]);
    row ??= (await this.reads.primary<UsageEventRow[]>(sql, [userId, requestId]))[0];
    return row ? toUsageEventView(row) : null;
  }

  /** Totals over [from, to) by model, by group (model null) and overall (both null). */
  summary(userId: string, from: Date | null, to: Date | null): Promise<(TotalsRow & { model: string | null; route_group: string | null })[]> {
    const source = hourlySource(userId, from, to, {});
    return this.reads.query(
      `select model, route_group, ${ROLLUP_AGG} from (${source.sql}) s group by grouping sets ((model), (route_group), ())`,
      source.params,
    );
  }

  /** Every UTC bucket from `first` to `last` (inclusive), empty ones as null sums. */
  timeseries(userId: string, range: { from: Date; to: Date; first: Date; last: Date }, bucket: 'minute' | 'hour' | 'day', filters: UsageFilters): Promise<(TotalsRow & { ts: Date })[]> {
    const source = hourlySource(userId, range.from, range.to, filters, bucket === 'minute' ? 'minute' : 'hour');
    return this.reads.query(
      `select b.ts, ${ROLLUP_AGG.replaceAll('sum(', 'sum(s.')}
         from generate_series(?::timestamptz, ?::timestamptz, ?::interval) as b(ts)
         left join (${source.sql}) s on date_trunc('${bucket}', s.at at time zone 'UTC') at time zone 'UTC' = b.ts
        group by b.ts order by b.ts`,
      [range.first, range.last, `1 ${bucket}`, ...source.params],
    );
  }

  /**
   * Every ledger owner with tokens in [start, end), ranked by tokens. An organization is one ledger owner (every
   * member's usage through its keys is its own), so it counts once; its `users` row has no username, so it stands
   * under its organization's name.
   */
  leaderboard(start: Date, end: Date): Promise<LeaderboardRow[]> {
    const source = hourlySource(null, start, end, {});
    return this.reads.query(
      `select s.user_id, coalesce(u.username, o.name) as username, sum(s.input_tokens + s.output_tokens) as tokens, sum(s.comparable_spend_usd) as comparable_spend_usd,
              sum(s.official_cost_usd) as official_cost_usd, rank() over (order by sum(s.input_tokens + s.output_tokens) desc) as rank
         from (${source.sql}) s join users u on u.id = s.user_id left join organizations o on o.id = s.user_id
        group by s.user_id, u.username, o.name having sum(s.input_tokens + s.output_tokens) > 0
        order by tokens desc, s.user_id`,
      source.params,
    );
  }
}
