import { Router } from 'express';
import { z } from 'zod';
import { usageListQuery, usageSummaryQuery, usageTimeseriesQuery, type AnalyticsService, type TotalsView, type UsageEventView, type UsageSummaryView } from '../src/usage/analytics.service.js';
import { decimal, timestamp } from './answer-fields.js';
import { authed, SpecNames, withInput } from './handler.js';
import { reply, routes, serve } from './route.js';

export const usageEventAnswer = z
  .object({
    id: z.string(),
    request_id: z.string(),
    client_surface: z.string(),
    created_at: timestamp,
    completed_at: timestamp.nullable(),
    provider_family: z.string(),
    route_group: z.string().nullable(),
    route_group_label: z.string(),
    endpoint: z.string().nullable(),
    model: z.string(),
    status: z.string(),
    error_code: z.string().nullable(),
    latency_ms: z.int().nullable(),
    prompt_tokens: z.int().nullable(),
    completion_tokens: z.int().nullable(),
    cache_read_tokens: z.int().nullable(),
    cache_write_tokens: z.int().nullable(),
    total_tokens: z.int().nullable(),
    cache_hit_ratio: decimal.nullable(),
    public_input_usd_per_1m: decimal,
    public_output_usd_per_1m: decimal,
    public_cache_read_usd_per_1m: decimal.nullable(),
    public_cache_write_usd_per_1m: decimal.nullable(),
    public_request_usd_per_generation: decimal.nullable(),
    amount_usd: decimal,
    official_cost_usd: decimal.nullable(),
    saved_usd: decimal.nullable(),
  })
  .meta({ id: 'UsageEvent', description: 'SPEC.md Usage event: every required key; amounts and prices as exact decimal strings.' });

/** SPEC.md Usage event: every required key; amounts and prices as exact decimal strings. */
export function usageEventJson(e: UsageEventView): z.infer<typeof usageEventAnswer> {
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

const savingsFields = {
  savings_gateway_cost_usd: decimal,
  savings_official_cost_usd: decimal,
  savings_saved_usd: decimal,
  savings_saved_percent: decimal,
  savings_comparable_requests: z.int(),
};

export const totalsAnswer = z.object({
  requests: z.int(),
  spend_usd: decimal,
  input_tokens: z.int(),
  output_tokens: z.int(),
  cache_read_tokens: z.int(),
  cache_write_tokens: z.int(),
  avg_cost_per_request_usd: decimal,
  ...savingsFields,
});

export function totalsJson(t: TotalsView): z.infer<typeof totalsAnswer> {
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

export const usageSummaryAnswer = z
  .object({
    total_spend_usd: decimal,
    total_requests: z.int(),
    avg_cost_per_request_usd: decimal,
    total_input_tokens: z.int(),
    total_output_tokens: z.int(),
    total_cache_read_tokens: z.int(),
    total_cache_write_tokens: z.int(),
    ...savingsFields,
    by_model: z.record(z.string(), totalsAnswer),
    by_group: z.record(z.string(), totalsAnswer.extend({ label: z.string() })),
  })
  .meta({ id: 'UsageSummary', description: 'SPEC.md Usage summary, with totals per model and per route group.' });

function usageSummaryJson(summary: UsageSummaryView): z.infer<typeof usageSummaryAnswer> {
  const t = summary.totals;
  return {
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
  };
}

export const usageTimeseriesAnswer = z
  .object({
    bucket: z.string().describe('minute, hour or day'),
    from_: timestamp,
    to: timestamp,
    points: z.array(
      z.object({ ts: timestamp, requests: z.int(), spend_usd: decimal, input_tokens: z.int(), output_tokens: z.int(), cache_read_tokens: z.int(), cache_write_tokens: z.int() }),
    ),
  })
  .meta({ id: 'UsageTimeseries', description: 'SPEC.md Usage timeseries.' });

type TimeseriesView = Awaited<ReturnType<AnalyticsService['timeseries']>>;

export function usageTimeseriesJson(series: TimeseriesView): z.infer<typeof usageTimeseriesAnswer> {
  return {
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
  };
}

/** SPEC.md 4.3: the signed-in account's usage events, summary and timeseries. */
export const USAGE_ROUTES = routes('/usage', 'usage', {
  list: {
    method: 'get',
    at: '/',
    summary: 'The account’s usage events, newest first',
    access: 'session',
    query: new SpecNames(usageListQuery),
    answers: { 200: { description: 'SPEC.md Usage list', json: z.object({ items: z.array(usageEventAnswer), limit: z.int() }) } },
  },
  summary: { method: 'get', at: '/summary', summary: 'Spend, tokens and savings over a period', access: 'session', query: new SpecNames(usageSummaryQuery), answers: { 200: { description: 'Usage summary', json: usageSummaryAnswer } } },
  timeseries: { method: 'get', at: '/timeseries', summary: 'Usage per time bucket', access: 'session', query: new SpecNames(usageTimeseriesQuery), answers: { 200: { description: 'Usage timeseries', json: usageTimeseriesAnswer } } },
  event: {
    method: 'get',
    at: '/:request_id',
    summary: 'One usage event by its request id',
    access: 'session',
    params: new SpecNames(z.object({ requestId: z.string() })),
    answers: { 200: { description: 'Usage event', json: usageEventAnswer } },
  },
});

export function usageRouter(): Router {
  const router = Router();
  const { list, summary, timeseries, event } = USAGE_ROUTES;

  serve(router, list, authed(async (actor, ctx, req, res) => {
    const page = await withInput('query', list.query, req.query, (query) => ctx.services.analytics.list(actor, query));
    reply(res, list, 200, { items: page.items.map(usageEventJson), limit: page.limit });
  }));

  serve(router, summary, authed(async (actor, ctx, req, res) => {
    reply(res, summary, 200, usageSummaryJson(await withInput('query', summary.query, req.query, (query) => ctx.services.analytics.summary(actor, query))));
  }));

  serve(router, timeseries, authed(async (actor, ctx, req, res) => {
    reply(res, timeseries, 200, usageTimeseriesJson(await withInput('query', timeseries.query, req.query, (query) => ctx.services.analytics.timeseries(actor, query))));
  }));

  serve(router, event, authed(async (actor, ctx, req, res) => {
    reply(res, event, 200, usageEventJson(await withInput('path', event.params, req.params, ({ requestId }) => ctx.services.analytics.event(actor, requestId))));
  }));

  return router;
}
