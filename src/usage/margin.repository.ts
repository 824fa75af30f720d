import type { AnalyticsReads } from '../shared/analytics-reads.js';
import { plainDecimal } from '../shared/money.js';

/** A row of the margin report (a view: figures as exact decimal strings). */
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

/**
 * The margin report's sums over usage events, in SQL: numeric sums grouped in PostgreSQL are exact and
 * read no row into the process. They read where the analytics read (the read replica, when configured):
 * a report over past periods, the heaviest sums, which may lag the primary by the replica's replay.
 */
export class MarginRepository {
  constructor(private readonly reads: AnalyticsReads) {}

  /** Revenue, cost and margin over [from, to): in total and by day, model, group and upstream. */
  async marginSums(from: Date, to: Date): Promise<{ totals: MarginRow; byDay: MarginRow[]; byModel: MarginRow[]; byGroup: MarginRow[]; byUpstream: MarginRow[] }> {
    // Events that reached an upstream (or were billed): refusals before routing carry no revenue and no cost.
    const where = `created_at >= ? and created_at < ? and (upstream_id is not null or amount_usd > 0)`;
    const by = (key: string) => this.reads.query<SumRow[]>(`select ${key} as key, ${SUMS} from usage_events where ${where} group by 1 order by 1`, [from, to]);
    const [totals, byDay, byModel, byGroup, byUpstream] = await Promise.all([
      this.reads.query<SumRow[]>(`select 'all' as key, ${SUMS} from usage_events where ${where}`, [from, to]),
      by(`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`),
      by('model'),
      by(`coalesce(route_group, '')`),
      by(`coalesce(upstream_id, '')`),
    ]);
    return { totals: view(totals[0]!), byDay: byDay.map(view), byModel: byModel.map(view), byGroup: byGroup.map(view), byUpstream: byUpstream.map(view) };
  }

  /** Each upstream's usage of each model over [from, to), as its invoice would show it. */
  async upstreamUsage(from: Date, to: Date, upstreamId?: string): Promise<UpstreamUsageLine[]> {
    const rows = await this.reads.query<Record<string, string | number>[]>(
      `select upstream_id, model, count(*)::int as requests,
              coalesce(sum(greatest(coalesce(prompt_tokens, 0) - coalesce(cache_read_tokens, 0) - coalesce(cache_write_tokens, 0), 0)), 0)::int8::text as input_tokens,
              coalesce(sum(cache_read_tokens), 0)::int8::text as cache_read_tokens, coalesce(sum(cache_write_tokens), 0)::int8::text as cache_write_tokens,
              coalesce(sum(completion_tokens), 0)::int8::text as output_tokens,
              (count(*) filter (where endpoint = '/v1/images/generations' and status = 'success'))::int as images,
              coalesce(sum(upstream_cost_usd), 0)::text as cost,
              (count(*) filter (where upstream_cost_usd is null and (prompt_tokens is not null or status = 'success')))::int as uncosted
         from usage_events
        where created_at >= ? and created_at < ? and upstream_id is not null ${upstreamId ? 'and upstream_id = ?' : ''}
          and (status = 'success' or amount_usd > 0)
        group by 1, 2 order by 1, 2`,
      upstreamId ? [from, to, upstreamId] : [from, to],
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
