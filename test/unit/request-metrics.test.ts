import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Metrics, type ObservedUsage } from '../../src/metrics.js';

const probes = { activeHolds: () => 0, concurrencySlots: () => 0, redisUp: () => null, databaseUp: async () => true };
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** The same series as prom-client's own Counter and Histogram would keep them: what the scrape must match. */
function reference() {
  const registry = new Registry();
  const requests = new Counter({ name: 'baikal_requests_total', help: 'Finished inference requests by endpoint, model, status and error code', labelNames: ['endpoint', 'model', 'status', 'error_code'], registers: [registry] });
  const latency = new Histogram({ name: 'baikal_request_duration_seconds', help: 'Inference request duration until the last byte', labelNames: ['endpoint', 'model'], buckets: BUCKETS, registers: [registry] });
  const firstByte = new Histogram({ name: 'baikal_time_to_first_byte_seconds', help: 'Time until the first response byte (the JSON body, or the first stream event)', labelNames: ['endpoint', 'model'], buckets: BUCKETS, registers: [registry] });
  const tokens = new Counter({ name: 'baikal_tokens_total', help: 'Tokens billed by model and kind', labelNames: ['model', 'kind'], registers: [registry] });
  const spend = new Counter({ name: 'baikal_spend_usd_total', help: 'USD charged by model (a float for dashboards; the ledger is exact)', labelNames: ['model'], registers: [registry] });
  return {
    registry,
    observe(record: ObservedUsage) {
      const endpoint = record.endpoint ?? 'unknown';
      requests.inc({ endpoint, model: record.model, status: record.status, error_code: record.errorCode ?? '' });
      if (record.latencyMs !== null) latency.observe({ endpoint, model: record.model }, record.latencyMs / 1000);
      if (record.promptTokens) tokens.inc({ model: record.model, kind: 'prompt' }, record.promptTokens);
      if (record.completionTokens) tokens.inc({ model: record.model, kind: 'completion' }, record.completionTokens);
      if (Number(record.amountUsd) > 0) spend.inc({ model: record.model }, Number(record.amountUsd));
    },
    firstByte: (endpoint: string, model: string, ms: number) => firstByte.observe({ endpoint, model }, ms / 1000),
  };
}

const NAMES = ['baikal_requests_total', 'baikal_request_duration_seconds', 'baikal_time_to_first_byte_seconds', 'baikal_tokens_total', 'baikal_spend_usd_total'];

/** The blocks of the request metrics in a scrape, by name. */
async function blocks(registry: Registry): Promise<Record<string, string>> {
  return Object.fromEntries(await Promise.all(NAMES.map(async (name) => [name, await registry.getSingleMetricAsString(name)] as const)));
}

function usage(i: number): ObservedUsage {
  return {
    endpoint: i % 5 === 4 ? null : i % 2 ? '/v1/chat/completions' : '/v1/messages',
    model: i % 3 ? 'gen-5.6-luna' : 'gen-5.6-sol',
    status: i % 7 === 0 ? 'error' : 'success',
    errorCode: i % 7 === 0 ? 'upstream_timeout' : null,
    latencyMs: i % 11 === 0 ? null : [0, 1, 3, 7, 40, 250, 999, 1000, 130_000][i % 9]!,
    promptTokens: i % 7 === 0 ? null : 10 + i,
    completionTokens: i % 7 === 0 ? 0 : 2 * i,
    // Binary fractions: sums of floats are then exact in any order (the counter adds a read's sum, not each amount).
    amountUsd: i % 7 === 0 ? '0' : String((i % 4) * 0.125 + 0.0625),
  };
}

describe('request metrics (summed per label set, read by prom-client when scraped)', () => {
  it('scrape the same text as prom-client\'s own Counter and Histogram, read after read', async () => {
    const metrics = new Metrics(probes);
    const expected = reference();
    for (let round = 0; round < 3; round++) {
      for (let i = round * 40; i < round * 40 + 40; i++) {
        metrics.observeUsage(usage(i));
        expected.observe(usage(i));
        metrics.observeFirstByte('/v1/chat/completions', i % 2 ? 'gen-5.6-luna' : 'gen-5.6-sol', i * 0.7);
        expected.firstByte('/v1/chat/completions', i % 2 ? 'gen-5.6-luna' : 'gen-5.6-sol', i * 0.7);
      }
      // Each read adds only what came since the last one: reading twice changes nothing.
      expect(await blocks(metrics.registry)).toEqual(await blocks(expected.registry));
      expect(await blocks(metrics.registry)).toEqual(await blocks(expected.registry));
    }
    const scrape = await metrics.registry.metrics();
    expect(scrape).toContain('baikal_request_duration_seconds_bucket{le="+Inf",endpoint="unknown",model="gen-5.6-luna"}');
    expect(scrape).toMatch(/^baikal_requests_total\{endpoint="\/v1\/chat\/completions",model="gen-5\.6-luna",status="success",error_code=""\} \d+$/m);
  });

  it('aggregate across cluster workers as prom-client\'s own do', async () => {
    const workers = [new Metrics(probes), new Metrics(probes)];
    const expected = [reference(), reference()];
    for (let i = 0; i < 60; i++) {
      workers[i % 2]!.observeUsage(usage(i));
      expected[i % 2]!.observe(usage(i));
    }
    const aggregate = async (registries: Registry[]) => {
      const merged = AggregatorRegistry.aggregate(await Promise.all(registries.map((r) => r.getMetricsAsJSON())));
      return Object.fromEntries(await Promise.all(NAMES.map(async (name) => [name, await merged.getSingleMetricAsString(name)] as const)));
    };
    expect(await aggregate(workers.map((w) => w.registry))).toEqual(await aggregate(expected.map((e) => e.registry)));
  });
});
