import type { MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { requireAdmin, type Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import { DomainError } from '../shared/errors.js';
import { plainDecimal } from '../shared/money.js';
import { parseInput } from '../shared/validation.js';
import { dateTime } from './analytics.service.js';

/**
 * The operator's money view (admins only): what customers paid, what the upstreams charged for the same
 * requests, and the margin between, by day, model, group and upstream; and each upstream's own usage as its
 * invoice would show it, to reconcile. Summed exactly in PostgreSQL (numeric) from the usage events.
 *
 * Revenue is every event's `amount_usd` (successes, and streams cut and billed for what was delivered);
 * cost is `upstream_cost_usd` where the upstream had a price for the request. A request without one has a
 * cost unknown, not zero: it is counted apart (`uncostedRequests`, `uncostedRevenueUsd`) and its revenue
 * is left out of the margin, so the margin never counts revenue whose cost is not known.
 */
export interface MarginRow {
  /** The day (YYYY-MM-DD, UTC), model id, group id or upstream id the row sums. */
  key: string;
  requests: number;
  revenueUsd: string;
  upstreamCostUsd: string;
  /** Revenue of the costed requests minus their cost. */
  marginUsd: string;
  uncostedRequests: number;
  uncostedRevenueUsd: string;
}

export interface MarginReport {
  from: Date;
  to: Date;
  totals: MarginRow;
  byDay: MarginRow[];
  byModel: MarginRow[];
  byGroup: MarginRow[];
  byUpstream: MarginRow[];
}

/** One line of an upstream's invoice: its usage of one model over the period, and what it charged by our records. */
export interface UpstreamUsageLine {
  upstreamId: string;
  model: string;
  requests: number;
  /** Input tokens not read from the cache (the upstream bills these at its input price). */
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  images: number;
  costUsd: string;
  /** Requests of this line without a price at the upstream (their cost is missing from costUsd). */
  uncostedRequests: number;
}

const DAY_MS = 86_400_000;
const MAX_DAYS = 366;

export const marginQuery = z.object({ from: dateTime.optional(), to: dateTime.optional() });
export const upstreamUsageQuery = z.object({ from: dateTime.optional(), to: dateTime.optional(), upstreamId: z.string().trim().min(1).max(64).optional() });
export type MarginQuery = z.input<typeof marginQuery>;
export type UpstreamUsageQuery = z.input<typeof upstreamUsageQuery>;

const SUMS = `count(*)::int as requests,
  coalesce(sum(amount_usd), 0)::text as revenue,
  coalesce(sum(upstream_cost_usd), 0)::text as cost,
  coalesce(sum(amount_usd - upstream_cost_usd), 0)::text as margin,
  (count(*) filter (where upstream_cost_usd is null and amount_usd > 0))::int as uncosted,
  coalesce(sum(amount_usd) filter (where upstream_cost_usd is null), 0)::text as uncosted_revenue`;

interface SumRow {
  key: string;
  requests: number;
  revenue: string;
  cost: string;
  margin: string;
  uncosted: number;
  uncosted_revenue: string;
}

export class MarginService {
  constructor(private readonly deps: { orm: MikroORM; clock: Clock }) {}

  async report(actor: Actor, raw: MarginQuery): Promise<MarginReport> {
    requireAdmin(actor);
    const { from, to } = this.period(parseInput(marginQuery, raw ?? {}));
    const em = this.deps.orm.em.fork();
    // Events that reached an upstream (or were billed): refusals before routing carry no revenue and no cost.
    const where = `created_at >= ? and created_at < ? and (upstream_id is not null or amount_usd > 0)`;
    const by = (key: string) => em.execute<SumRow[]>(`select ${key} as key, ${SUMS} from usage_events where ${where} group by 1 order by 1`, [from, to]);
    const [totals, byDay, byModel, byGroup, byUpstream] = await Promise.all([
      em.execute<SumRow[]>(`select 'all' as key, ${SUMS} from usage_events where ${where}`, [from, to]),
      by(`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`),
      by('model'),
      by(`coalesce(route_group, '')`),
      by(`coalesce(upstream_id, '')`),
    ]);
    return { from, to, totals: view(totals[0]!), byDay: byDay.map(view), byModel: byModel.map(view), byGroup: byGroup.map(view), byUpstream: byUpstream.map(view) };
  }

  async upstreamUsage(actor: Actor, raw: UpstreamUsageQuery): Promise<UpstreamUsageLine[]> {
    requireAdmin(actor);
    const query = parseInput(upstreamUsageQuery, raw ?? {});
    const { from, to } = this.period(query);
    const rows = await this.deps.orm.em.fork().execute<Record<string, string | number>[]>(
      `select upstream_id, model, count(*)::int as requests,
              coalesce(sum(greatest(coalesce(prompt_tokens, 0) - coalesce(cache_read_tokens, 0) - coalesce(cache_write_tokens, 0), 0)), 0)::int8::text as input_tokens,
              coalesce(sum(cache_read_tokens), 0)::int8::text as cache_read_tokens, coalesce(sum(cache_write_tokens), 0)::int8::text as cache_write_tokens,
              coalesce(sum(completion_tokens), 0)::int8::text as output_tokens,
              (count(*) filter (where endpoint = '/v1/images/generations' and status = 'success'))::int as images,
              coalesce(sum(upstream_cost_usd), 0)::text as cost,
              (count(*) filter (where upstream_cost_usd is null and (prompt_tokens is not null or status = 'success')))::int as uncosted
         from usage_events
        where created_at >= ? and created_at < ? and upstream_id is not null ${query.upstreamId ? 'and upstream_id = ?' : ''}
          and (status = 'success' or amount_usd > 0)
        group by 1, 2 order by 1, 2`,
      query.upstreamId ? [from, to, query.upstreamId] : [from, to],
    );
    return rows.map((r) => ({
      upstreamId: String(r.upstream_id),
      model: String(r.model),
      requests: Number(r.requests),
      inputTokens: Number(r.input_tokens),
      cacheReadTokens: Number(r.cache_read_tokens),
      cacheWriteTokens: Number(r.cache_write_tokens),
      outputTokens: Number(r.output_tokens),
      images: Number(r.images),
      costUsd: plainDecimal(String(r.cost))!,
      uncostedRequests: Number(r.uncosted),
    }));
  }

  /** Default: the last 30 days to now. At most a year, so one question never reads the whole history. */
  private period(query: { from?: Date; to?: Date }): { from: Date; to: Date } {
    const to = query.to ?? this.deps.clock.now();
    const from = query.from ?? new Date(to.getTime() - 30 * DAY_MS);
    if (from >= to) throw new DomainError('validation_failed', 'from must be before to', { issues: [{ loc: ['from'], msg: 'from must be before to', type: 'value_error' }] });
    if (to.getTime() - from.getTime() > MAX_DAYS * DAY_MS) throw new DomainError('validation_failed', `The period is at most ${MAX_DAYS} days`, { issues: [{ loc: ['from'], msg: `the period is at most ${MAX_DAYS} days`, type: 'value_error' }] });
    return { from, to };
  }
}

function view(row: SumRow): MarginRow {
  return {
    key: row.key,
    requests: Number(row.requests),
    revenueUsd: plainDecimal(row.revenue)!,
    upstreamCostUsd: plainDecimal(row.cost)!,
    marginUsd: plainDecimal(row.margin)!,
    uncostedRequests: Number(row.uncosted),
    uncostedRevenueUsd: plainDecimal(row.uncosted_revenue)!,
  };
}
