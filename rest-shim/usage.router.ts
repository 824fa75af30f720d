import { Router } from 'express';
import type { TotalsView, UsageEventRow } from '../src/usage/analytics.service.js';
import { plainDecimal } from '../src/shared/money.js';
import { authed, from } from './handler.js';

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

/** SPEC.md Usage event: every required key; amounts and prices as exact decimal strings. */
export function usageEventJson(e: UsageEventRow) {
  return {
    id: e.id,
    request_id: e.request_id,
    client_surface: e.client_surface,
    created_at: iso(e.created_at),
    completed_at: iso(e.completed_at),
    provider_family: e.provider_family,
    route_group: e.route_group,
    route_group_label: e.route_group_label,
    endpoint: e.endpoint,
    model: e.model,
    status: e.status,
    error_code: e.error_code,
    latency_ms: e.latency_ms,
    prompt_tokens: e.prompt_tokens,
    completion_tokens: e.completion_tokens,
    cache_read_tokens: e.cache_read_tokens,
    cache_write_tokens: e.cache_write_tokens,
    total_tokens: e.total_tokens,
    cache_hit_ratio: decimal(e.cache_hit_ratio),
    public_input_usd_per_1m: decimal(e.public_input_usd_per_1m)!,
    public_output_usd_per_1m: decimal(e.public_output_usd_per_1m)!,
    public_cache_read_usd_per_1m: decimal(e.public_cache_read_usd_per_1m),
    public_cache_write_usd_per_1m: decimal(e.public_cache_write_usd_per_1m),
    public_request_usd_per_generation: decimal(e.public_request_usd_per_generation),
    amount_usd: decimal(e.amount_usd)!,
    official_cost_usd: decimal(e.official_cost_usd),
    saved_usd: decimal(e.saved_usd),
  };
}

const decimal = plainDecimal;

function totalsJson(t: TotalsView) {
  return {
    requests: t.requests,
    spend_usd: t.spendUsd,
    input_tokens: t.inputTokens,
    output_tokens: t.outputTokens,
    cache_read_tokens: t.cacheReadTokens,
    cache_write_tokens: t.cacheWriteTokens,
    avg_cost_per_request_usd: t.avgCostPerRequestUsd,
    savings_gateway_cost_usd: t.gatewayCostUsd,
    savings_official_cost_usd: t.officialCostUsd,
    savings_saved_usd: t.savedUsd,
    savings_saved_percent: t.savedPercent,
    savings_comparable_requests: t.comparableRequests,
  };
}

/** SPEC.md 4.3: the signed-in account's usage events, summary and timeseries. */
export function usageRouter(): Router {
  const router = Router();

  router.get('/', authed(async (actor, ctx, req, res) => {
    const list = await from('query', () => ctx.services.analytics.list(actor, req.query as never));
    res.json({ items: list.items.map(usageEventJson), limit: list.limit });
  }));

  router.get('/summary', authed(async (actor, ctx, req, res) => {
    const summary = await from('query', () => ctx.services.analytics.summary(actor, req.query as never));
    const t = summary.totals;
    res.json({
      total_spend_usd: t.spendUsd,
      total_requests: t.requests,
      avg_cost_per_request_usd: t.avgCostPerRequestUsd,
      total_input_tokens: t.inputTokens,
      total_output_tokens: t.outputTokens,
      total_cache_read_tokens: t.cacheReadTokens,
      total_cache_write_tokens: t.cacheWriteTokens,
      savings_gateway_cost_usd: t.gatewayCostUsd,
      savings_official_cost_usd: t.officialCostUsd,
      savings_saved_usd: t.savedUsd,
      savings_saved_percent: t.savedPercent,
      savings_comparable_requests: t.comparableRequests,
      by_model: Object.fromEntries(Object.entries(summary.byModel).map(([model, totals]) => [model, totalsJson(totals)])),
      by_group: Object.fromEntries(Object.entries(summary.byGroup).map(([group, totals]) => [group, { label: totals.label, ...totalsJson(totals) }])),
    });
  }));

  router.get('/timeseries', authed(async (actor, ctx, req, res) => {
    const series = await from('query', () => ctx.services.analytics.timeseries(actor, req.query as never));
    res.json({
      bucket: series.bucket,
      from_: series.from.toISOString(),
      to: series.to.toISOString(),
      points: series.points.map((p) => ({
        ts: p.ts.toISOString(),
        requests: p.requests,
        spend_usd: p.spendUsd,
        input_tokens: p.inputTokens,
        output_tokens: p.outputTokens,
        cache_read_tokens: p.cacheReadTokens,
        cache_write_tokens: p.cacheWriteTokens,
      })),
    });
  }));

  router.get('/:request_id', authed(async (actor, ctx, req, res) => {
    res.json(usageEventJson(await from('path', () => ctx.services.analytics.event(actor, String(req.params.request_id)))));
  }));

  return router;
}
