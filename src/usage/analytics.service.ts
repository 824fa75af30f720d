import { isRequestId } from '../shared/ids.js';
import { z } from 'zod';
import type { LeaderboardSettings } from './leaderboard-settings.js';
import type { CatalogService } from '../catalog/catalog.service.js';
import { UsageRepository, type LeaderboardRow, type TotalsRow, type UsageEventView } from './usage.repository.js';

export type { UsageEventView } from './usage.repository.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import { primaryReads, type AnalyticsReads } from '../shared/analytics-reads.js';
import type { Clock } from '../shared/clock.js';
import type { Actor } from '../shared/actor.js';
import { DomainError } from '../shared/errors.js';
import { formatUsd, money } from '../shared/money.js';
import { intParam, parseInput } from '../shared/validation.js';

/**
 * Every valid ISO datetime is accepted, then held to the years PostgreSQL and the hour rounding below can
 * both represent (no usage exists outside them, so a bound's meaning is unchanged): 9999-12-31T23:59:59Z
 * rounded up to its hour would be year 10000, which PostgreSQL refuses.
 */
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(9999, 11, 31);
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const WITHOUT_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?$/;
const WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)$/i;
const UNIX_SECONDS = /^\d{1,12}(\.\d+)?$/;

/** Whether `YYYY-MM-DD` names a day that exists (Date.parse rolls 2026-02-30 over to March). */
function isCalendarDate(ymd: string): boolean {
  if (!DATE_ONLY.test(ymd)) return false;
  const [year, month, day] = ymd.split('-').map(Number) as [number, number, number];
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/**
 * A date-time as FastAPI (pydantic, lax) reads one, which clients of SPEC.md's REST shapes send: with an offset;
 * without one, or a date alone (its midnight), taken as UTC; or Unix seconds. Clamped to years 1970-9999.
 */
export const dateTime = z.string().transform((value, ctx) => {
  const text = value.trim().replace(' ', 'T');
  let ms = Number.NaN;
  if (UNIX_SECONDS.test(text)) ms = Number(text) * 1000;
  else if (isCalendarDate(text.slice(0, 10))) {
    if (DATE_ONLY.test(text)) ms = Date.parse(`${text}T00:00:00Z`);
    else if (WITHOUT_OFFSET.test(text)) ms = Date.parse(`${text}Z`);
    else if (WITH_OFFSET.test(text)) ms = Date.parse(text);
  }
  if (!Number.isFinite(ms)) {
    ctx.addIssue({ code: 'custom', message: 'Input should be a valid datetime', params: { type: 'datetime_format' } });
    return z.NEVER;
  }
  return new Date(Math.min(LATEST, Math.max(EARLIEST, ms)));
});
const optionalText = z.string().trim().min(1).max(128).optional();

// Unknown query parameters are ignored, as FastAPI does and as the other REST lists do (a cache-busting `_=` among them).
export const usageListQuery = z.object({
  from: dateTime.optional(),
  to: dateTime.optional(),
  model: optionalText,
  group: optionalText,
  status: z.enum(['pending', 'success', 'error', 'cancelled']).optional(),
  providerFamily: optionalText,
  limit: intParam(1, 200, 50),
});
export const usageSummaryQuery = z.object({ from: dateTime.optional(), to: dateTime.optional() });
export const BUCKETS = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;
/** The most points one timeseries answer may hold. */
export const MAX_POINTS = 2_000;
export const usageTimeseriesQuery = z.object({
  from: dateTime,
  to: dateTime,
  bucket: z.enum(['minute', 'hour', 'day']).default('hour'),
  model: optionalText,
  group: optionalText,
  providerFamily: optionalText,
});
export const leaderboardQuery = z.object({ limit: intParam(1, 100, 20) });

export type UsageListQuery = z.input<typeof usageListQuery>;
export type UsageSummaryQuery = z.input<typeof usageSummaryQuery>;
export type UsageTimeseriesQuery = z.input<typeof usageTimeseriesQuery>;

function usd(value: string | null | undefined): string {
  return formatUsd(value ?? 0);
}

/** Figures of one group of rows (sums over no rows are SQL nulls: zero here). */
export function totalsView(t: TotalsRow) {
  const spend = money(t.spend_usd ?? 0);
  const requests = Number(t.requests ?? 0);
  const comparableSpend = money(t.comparable_spend_usd ?? 0);
  const official = money(t.official_cost_usd ?? 0);
  const saved = official.minus(comparableSpend);
  return {
    requests,
    spendUsd: formatUsd(spend),
    inputTokens: Number(t.input_tokens ?? 0),
    outputTokens: Number(t.output_tokens ?? 0),
    cacheReadTokens: Number(t.cache_read_tokens ?? 0),
    cacheWriteTokens: Number(t.cache_write_tokens ?? 0),
    comparableRequests: Number(t.comparable_requests ?? 0),
    gatewayCostUsd: formatUsd(comparableSpend),
    officialCostUsd: formatUsd(official),
    savedUsd: formatUsd(saved),
    savedPercent: official.isZero() ? '0.00' : saved.dividedBy(official).times(100).toFixed(2),
    avgCostPerRequestUsd: requests ? formatUsd(spend.dividedBy(requests)) : '0',
  };
}

export type TotalsView = ReturnType<typeof totalsView>;

export interface UsageSummaryView {
  totals: TotalsView;
  byModel: Record<string, TotalsView>;
  byGroup: Record<string, TotalsView & { label: string }>;
}

export interface TimeseriesPoint {
  ts: Date;
  requests: number;
  spendUsd: string;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface LeaderboardEntry {
  rank: number;
  user: string;
  tokens: number;
  savedUsd: string | null;
  isMe: boolean;
}

/** A user name as others see it on the leaderboard: enough to recognise oneself, not to identify others. */
export function maskName(name: string | null): string {
  if (!name) return 'anonymous';
  if (name.length <= 3) return `${name[0]}***`;
  return `${name.slice(0, 2)}***${name.slice(-1)}`;
}

/** The calendar day containing `at` in an IANA time zone, as [start, end) instants and its date. */
export function dayIn(timeZone: string, at: Date): { date: string; start: Date; end: Date } {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
  const offsetAt = (instant: Date) => {
    const local = new Date(instant.toLocaleString('en-US', { timeZone }));
    const utc = new Date(instant.toLocaleString('en-US', { timeZone: 'UTC' }));
    return local.getTime() - utc.getTime();
  };
  const midnightUtc = new Date(`${parts}T00:00:00Z`);
  const start = new Date(midnightUtc.getTime() - offsetAt(midnightUtc));
  const nextUtc = new Date(midnightUtc.getTime() + 86_400_000);
  const end = new Date(nextUtc.getTime() - offsetAt(nextUtc));
  return { date: parts, start, end };
}

/**
 * Usage analytics over the account's usage events: lists with filters, one event, summaries with
 * savings, timeseries with empty buckets, and the daily leaderboard. Aggregates read the hourly
 * rollups for whole hours and raw events only for the unaligned edges, so they stay fast as events grow.
 */
export class AnalyticsService {
  private readonly usage: UsageRepository;

  /** `reads`: where the analytics read (the read replica, when configured); the primary (`orm`) when absent. */
  constructor(protected readonly deps: { orm: MikroORM; reads?: AnalyticsReads; leaderboard: LeaderboardSettings; clock: Clock; catalog: CatalogService }) {
    this.usage = new UsageRepository(deps.reads ?? primaryReads(deps.orm));
  }

  /**
   * SPEC.md 4.3: a provider_family filter is one of the catalog's families. Checked here, so REST,
   * GraphQL and tRPC refuse the same values with the same issue (an unknown family would only ever
   * match nothing, which reads as "no usage" rather than "wrong filter").
   */
  private checkFamily(family: string | undefined): void {
    requireKnownFamily(this.deps.catalog, family);
  }

  async list(actor: Actor, raw: UsageListQuery): Promise<{ items: UsageEventView[]; limit: number }> {
    const q = parseInput(usageListQuery, raw);
    this.checkFamily(q.providerFamily);
    return { items: await this.usage.events(actor.userId, q, q.limit), limit: q.limit };
  }

  /** One of the account's events by its request id (the latest, should a client have reused an id); 404 otherwise. */
  async event(actor: Actor, requestId: string): Promise<UsageEventView> {
    // Anything that cannot be a request id is not one (and text with NUL would not even reach PostgreSQL).
    const row = isRequestId(requestId) ? await this.usage.eventByRequestId(actor.userId, requestId) : null;
    if (!row) throw new DomainError('not_found', 'No such usage event', { reason: 'usage_event_not_found' });
    return row;
  }

  async summary(actor: Actor, raw: UsageSummaryQuery): Promise<UsageSummaryView> {
    const q = parseInput(usageSummaryQuery, raw);
    if (q.from && q.to && q.from > q.to) throw rangeError();
    const rows = await this.usage.summary(actor.userId, q.from ?? null, q.to ?? null);
    const catalog = this.deps.catalog.snapshot;
    const empty: TotalsRow = { requests: '0', spend_usd: '0', input_tokens: '0', output_tokens: '0', cache_read_tokens: '0', cache_write_tokens: '0', comparable_requests: '0', comparable_spend_usd: '0', official_cost_usd: '0' };
    const total = rows.find((r) => r.model === null && r.route_group === null) ?? empty;
    const byModel: UsageSummaryView['byModel'] = {};
    const byGroup: UsageSummaryView['byGroup'] = {};
    for (const row of rows) {
      if (row.model !== null) byModel[row.model] = totalsView(row);
      else if (row.route_group !== null) byGroup[row.route_group || 'none'] = { ...totalsView(row), label: catalog.groups.get(row.route_group)?.label ?? (row.route_group || 'none') };
    }
    return { totals: totalsView(total), byModel, byGroup };
  }

  async timeseries(actor: Actor, raw: UsageTimeseriesQuery): Promise<{ bucket: string; from: Date; to: Date; points: TimeseriesPoint[] }> {
    const q = parseInput(usageTimeseriesQuery, raw);
    this.checkFamily(q.providerFamily);
    if (q.from > q.to) throw rangeError();
    const rows = await this.usage.timeseries(actor.userId, bucketRange(q), q.bucket, q);
    return { bucket: q.bucket, from: q.from, to: q.to, points: rows.map(pointView) };
  }

  /** Today's ranking (in the configured time zone) by total tokens; `me` is the signed-in user's own entry. */
  async leaderboard(actor: Actor | null, raw: { limit?: unknown }, at: Date = this.deps.clock.now()) {
    const { limit } = parseInput(leaderboardQuery, raw);
    const { timeZone, prize } = this.deps.leaderboard;
    const day = dayIn(timeZone, at);
    const rows = await this.usage.leaderboard(day.start, day.end);
    const entry = (r: LeaderboardRow): LeaderboardEntry => ({
      rank: Number(r.rank),
      user: maskName(r.username),
      tokens: Number(r.tokens),
      savedUsd: money(r.official_cost_usd).isZero() ? null : formatUsd(money(r.official_cost_usd).minus(r.comparable_spend_usd)),
      isMe: actor !== null && r.user_id === actor.userId,
    });
    const mine = actor ? rows.find((r) => r.user_id === actor.userId) : undefined;
    const saved = rows.reduce((sum, r) => sum.plus(money(r.official_cost_usd).minus(r.comparable_spend_usd)), money(0));
    return {
      date: day.date,
      timezone: timeZone,
      prize,
      totalTokens: rows.reduce((sum, r) => sum + Number(r.tokens), 0),
      totalSavedUsd: formatUsd(saved),
      items: rows.slice(0, limit).map(entry),
      me: mine ? entry(mine) : null,
    };
  }
}

/** SPEC.md 4.3: a provider_family filter is one of the catalog's families (an unknown one is a 422, not "no usage"). */
export function requireKnownFamily(catalog: Pick<CatalogService, 'snapshot'>, family: string | undefined): void {
  if (family === undefined) return;
  const families = catalog.snapshot.families;
  if (families.has(family)) return;
  throw new DomainError('validation_failed', 'Request validation failed', {
    issues: [{ loc: ['providerFamily'], msg: `Input should be one of: ${[...families.keys()].join(', ')}`, type: 'literal_error' }],
  });
}

/** A timeseries' UTC buckets: the first and the last of [from, to) (every one is answered, empty ones as zeros); 422 past MAX_POINTS. */
export function bucketRange(q: { from: Date; to: Date; bucket: keyof typeof BUCKETS }): { from: Date; to: Date; first: Date; last: Date } {
  const step = BUCKETS[q.bucket];
  const first = new Date(Math.floor(q.from.getTime() / step) * step);
  const count = Math.ceil((q.to.getTime() - first.getTime()) / step) || 1;
  if (count > MAX_POINTS) {
    throw new DomainError('validation_failed', 'Request validation failed', {
      issues: [{ loc: ['bucket'], msg: `The range holds ${count} ${q.bucket} buckets; at most ${MAX_POINTS} are allowed: use a larger bucket or a shorter range`, type: 'value_error' }],
    });
  }
  return { from: q.from, to: q.to, first, last: new Date(first.getTime() + (count - 1) * step) };
}

export function pointView(r: TotalsRow & { ts: Date }): TimeseriesPoint {
  return {
    ts: new Date(r.ts),
    requests: Number(r.requests ?? 0),
    spendUsd: usd(r.spend_usd),
    inputTokens: Number(r.input_tokens ?? 0),
    outputTokens: Number(r.output_tokens ?? 0),
    cacheReadTokens: Number(r.cache_read_tokens ?? 0),
    cacheWriteTokens: Number(r.cache_write_tokens ?? 0),
  };
}

export function rangeError(): DomainError {
  return new DomainError('validation_failed', 'Request validation failed', { issues: [{ loc: ['from'], msg: '`from` must not be after `to`', type: 'value_error' }] });
}
