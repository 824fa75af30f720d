import { Router } from 'express';
import type { TotalsView, UsageEventView } from '../src/usage/analytics.service.js';
import { authed, from, SpecNames } from './handler.js';

/** SPEC.md's names for the usage filters' multi-word fields. */
const USAGE_FILTERS = new SpecNames(['provider_family']);


/** SPEC.md Usage event: every required key; amounts and prices as exact decimal strings. */
export function usageEventJson(e: UsageEventView) {
  return {
    id: e.id,
    request_id: e.requestId,
    client_surface: e.clientSurface,
    created_at: e.createdAt.toISOString(),
    completed_at: e.completedAt?.toISOString() ?? null,
    provider_family: e.providerFamily,
    route_group: e.routeGroup,
    route_group_label: e.routeGroupLabel,
    endpoint: e.endpoint,
    model: e.model,
    status: e.status,
    error_code: e.errorCode,
    latency_ms: e.latencyMs,
    prompt_tokens: e.promptTokens,
    completion_tokens: e.completionTokens,
    cache_read_tokens: e.cacheReadTokens,
    cache_write_tokens: e.cacheWriteTokens,
    total_tokens: e.totalTokens,
    cache_hit_ratio: e.cacheHitRatio,
    public_input_usd_per_1m: e.publicInputUsdPer1m,
    public_output_usd_per_1m: e.publicOutputUsdPer1m,
    public_cache_read_usd_per_1m: e.publicCacheReadUsdPer1m,
    public_cache_write_usd_per_1m: e.publicCacheWriteUsdPer1m,
    public_request_usd_per_generation: e.publicRequestUsdPerGeneration,
    amount_usd: e.amountUsd,
    official_cost_usd: e.officialCostUsd,
    saved_usd: e.savedUsd,
  };
}


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
    const query = USAGE_FILTERS.in('query', req.query);
    const list = await from('query', () => ctx.services.analytics.list(actor, query as never), USAGE_FILTERS);
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
    const query = USAGE_FILTERS.in('query', req.query);
    const series = await from('query', () => ctx.services.analytics.timeseries(actor, query as never), USAGE_FILTERS);
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
