import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds; dense below 100 ms, where a gateway's own overhead lives. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** Live figures read at scrape time, not on the hot path. */
export interface MetricsProbes {
  activeHolds(): number;
  concurrencySlots(): number;
  redisUp(): boolean | null;
  databaseUp(): Promise<boolean>;
}

/** What metrics read of a usage record (src/usage/usage-recorder.ts's UsageRecord has these fields). */
export type ObservedUsage = {
  endpoint: string | null;
  model: string;
  status: string;
  errorCode: string | null;
  latencyMs: number | null;
  promptTokens: number | null;
  completionTokens: number | null;
  amountUsd: string;
};

/**
 * Prometheus metrics for the operator (`GET /metrics`, behind METRICS_TOKEN). Labels carry public model
 * ids and endpoints, plus upstream ids on the upstream-error counter: operator-only data, which is why
 * the endpoint needs the operator's token.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({ name: 'baikal_requests_total', help: 'Finished inference requests by endpoint, model, status and error code', labelNames: ['endpoint', 'model', 'status', 'error_code'], registers: [this.registry] });
  private readonly latency = new Histogram({ name: 'baikal_request_duration_seconds', help: 'Inference request duration until the last byte', labelNames: ['endpoint', 'model'], buckets: LATENCY_BUCKETS, registers: [this.registry] });
  private readonly firstByte = new Histogram({ name: 'baikal_time_to_first_byte_seconds', help: 'Time until the first response byte (the JSON body, or the first stream event)', labelNames: ['endpoint', 'model'], buckets: LATENCY_BUCKETS, registers: [this.registry] });
  private readonly tokens = new Counter({ name: 'baikal_tokens_total', help: 'Tokens billed by model and kind', labelNames: ['model', 'kind'], registers: [this.registry] });
  private readonly spend = new Counter({ name: 'baikal_spend_usd_total', help: 'USD charged by model (a float for dashboards; the ledger is exact)', labelNames: ['model'], registers: [this.registry] });
  private readonly refusals = new Counter({ name: 'baikal_limit_refusals_total', help: 'Requests refused by a limit, by reason', labelNames: ['reason'], registers: [this.registry] });
  private readonly upstreamErrors = new Counter({ name: 'baikal_upstream_errors_total', help: 'Failed upstream calls by upstream (operator-only) and kind', labelNames: ['upstream', 'kind'], registers: [this.registry] });

  constructor(probes: MetricsProbes) {
    collectDefaultMetrics({ register: this.registry, prefix: 'baikal_' });
    new Gauge({ name: 'baikal_holds_active', help: 'Balance holds this process has open', registers: [this.registry], collect() { this.set(probes.activeHolds()); } });
    new Gauge({ name: 'baikal_concurrency_slots', help: 'Concurrency slots this process holds', registers: [this.registry], collect() { this.set(probes.concurrencySlots()); } });
    new Gauge({
      name: 'baikal_redis_up',
      help: '1 when Redis answers, 0 when not, absent without REDIS_URL',
      registers: [this.registry],
      aggregator: 'min',
      collect() {
        const up = probes.redisUp();
        if (up !== null) this.set(up ? 1 : 0);
      },
    });
    // A cluster worker's figures are read by the primary's aggregator.
    this.answerPrimary();
    new Gauge({ name: 'baikal_database_up', help: '1 when PostgreSQL answers', registers: [this.registry], aggregator: 'min', async collect() { this.set((await probes.databaseUp()) ? 1 : 0); } });
  }

  /** Every finished (or refused-for-money) request, from its usage record. */
  observeUsage(record: ObservedUsage): void {
    const endpoint = record.endpoint ?? 'unknown';
    this.requests.inc({ endpoint, model: record.model, status: record.status, error_code: record.errorCode ?? '' });
    if (record.errorCode === 'insufficient_balance' || record.errorCode === 'spend_cap_reached') this.refusals.inc({ reason: record.errorCode });
    if (record.latencyMs !== null) this.latency.observe({ endpoint, model: record.model }, record.latencyMs / 1000);
    if (record.promptTokens) this.tokens.inc({ model: record.model, kind: 'prompt' }, record.promptTokens);
    if (record.completionTokens) this.tokens.inc({ model: record.model, kind: 'completion' }, record.completionTokens);
    const amount = Number(record.amountUsd);
    if (amount > 0) this.spend.inc({ model: record.model }, amount);
  }

  /**
   * The text of a scrape. In a cluster worker it is the whole cluster's: the worker asks the primary,
   * which gathers every worker's registry (prom-client's aggregator) and answers.
   */
  async scrape(): Promise<string> {
    if (!cluster.isWorker || !process.send) return this.registry.metrics();
    this.answerPrimary();
    const id = randomUUID();
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => (process.off('message', onMessage), reject(new Error('the cluster primary did not answer the metrics request'))), 6_000);
      const onMessage = (message: { type?: string; id?: string; text?: string; error?: string }) => {
        if (message?.type !== CLUSTER_METRICS_RES || message.id !== id) return;
        clearTimeout(timer);
        process.off('message', onMessage);
        if (message.error !== undefined) reject(new Error(message.error));
        else resolve(message.text ?? '');
      };
      process.on('message', onMessage);
      process.send!({ type: CLUSTER_METRICS_REQ, id });
    });
  }

  /** Lets the primary's aggregator read this worker's registry. */
  answerPrimary(): void {
    if (!cluster.isWorker || this.answering) return;
    this.answering = true;
    AggregatorRegistry.setRegistries([this.registry]);
    new AggregatorRegistry(); // installs the worker's answering listener
  }

  private answering = false;

  observeFirstByte(endpoint: string, model: string, ms: number): void {
    this.firstByte.observe({ endpoint, model }, ms / 1000);
  }

  refused(reason: string): void {
    this.refusals.inc({ reason });
  }

  upstreamError(upstream: string, kind: string): void {
    this.upstreamErrors.inc({ upstream, kind });
  }
}

const CLUSTER_METRICS_REQ = 'baikal:metrics-request';
const CLUSTER_METRICS_RES = 'baikal:metrics-response';

/** In the cluster primary: answers workers' scrape requests with every worker's metrics, aggregated. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: { type?: string; id?: string }) => {
    if (message?.type !== CLUSTER_METRICS_REQ) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: CLUSTER_METRICS_RES, id: message.id, text }),
      (error: Error) => worker.send({ type: CLUSTER_METRICS_RES, id: message.id, error: error.message }),
    );
  });
}
