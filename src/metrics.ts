import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { createHistogram, performance, type RecordableHistogram } from 'node:perf_hooks';
import type { ReplicaStatus } from './shared/analytics-reads.js';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Registry, type LabelValues, type Metric, type MetricValueWithName } from 'prom-client';

/** Refusals by the money, counted from usage records: the balance, a key's cap, an organization member's and an organization's. */
const MONEY_REFUSALS = new Set(['insufficient_balance', 'spend_cap_reached', 'member_spend_cap_reached', 'organization_spend_cap_reached']);

/** Seconds; dense below 100 ms, where a gateway's own overhead lives. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/**
 * How often the event-loop delay is sampled while requests are served: every 10 ms (prom-client's default)
 * while they start at 200 a second or more, every 50 ms while they are sparser. Under load a sample rides on
 * wakeups the requests cause anyway; between sparse requests each sample is a wakeup of its own, and on the
 * bench's virtual machine a wakeup costs ~0.16 ms of CPU: at 100 requests a second, sampling every 10 ms added
 * about a tenth to what each request cost (CPU per request at 100/s: 1.19 -> 1.05 and 1.20 -> 1.00 ms with no
 * sampling at all, two A/B runs).
 */
export interface LoopDelayPeriods {
  denseMs: number;
  sparseMs: number;
}

const LOOP_DELAY_PERIODS: LoopDelayPeriods = { denseMs: 10, sparseMs: 50 };

/**
 * The event loop's delay while this process serves requests: how late a timer fires. The timer runs while
 * requests are in flight or started in the last period (`logRequest` marks each), and stops after a quiet
 * period; its period follows the request rate (see LOOP_DELAY_PERIODS). prom-client's own monitor keeps a
 * 10 ms timer running always: an idle gateway then wakes 100 times a second (in the bench's interleaved
 * 100 requests/s phase the gateway's main thread switched 3,507 times in 20 s with it, 2,131 with a timer
 * only while serving, the bare proxy's 1,394). Node's own monitor cannot be paused: its first sample after a
 * pause counts the whole pause. One per process, as the event loop is.
 */
export class LoopDelayWhileServing {
  /** Delays past each timer's due time, in ns. */
  readonly histogram = createHistogram();
  private inFlight = 0;
  /** Requests started since the timer last fired. */
  private startedSinceFired = 0;
  private timer: NodeJS.Timeout | null = null;
  private due = 0;
  private period: number;

  constructor(private readonly periods: LoopDelayPeriods = LOOP_DELAY_PERIODS) {
    this.period = periods.sparseMs;
  }

  started(): void {
    this.inFlight++;
    this.startedSinceFired++;
    if (!this.timer) this.arm(this.periods.sparseMs);
  }

  ended(): void {
    this.inFlight--;
  }

  private arm(period: number): void {
    this.period = period;
    this.due = performance.now() + period;
    this.timer = setTimeout(this.fired, period).unref();
  }

  private readonly fired = () => {
    this.histogram.record(Math.max(1, Math.round((performance.now() - this.due) * 1e6)));
    const { denseMs, sparseMs } = this.periods;
    // Dense: at least two requests started per dense period, on average, over the period just sampled.
    const dense = this.startedSinceFired * denseMs >= 2 * this.period;
    if (this.inFlight > 0 || this.startedSinceFired > 0) this.arm(dense ? denseMs : sparseMs);
    else this.timer = null;
    this.startedSinceFired = 0;
  };
}

export const loopDelay = new LoopDelayWhileServing();

/** The event-loop delay gauges prom-client's default metrics name; ours are fed by `loopDelay` (see above). */
const LOOP_DELAY_GAUGES: Record<string, (histogram: RecordableHistogram) => number> = {
  min: (h) => h.min,
  max: (h) => h.max,
  mean: (h) => h.mean,
  stddev: (h) => h.stddev,
  p50: (h) => h.percentile(50),
  p90: (h) => h.percentile(90),
  p99: (h) => h.percentile(99),
};

/** Live figures read at scrape time, not on the hot path. */
export interface MetricsProbes {
  activeHolds(): number;
  concurrencySlots(): number;
  redisUp(): boolean | null;
  databaseUp(): Promise<boolean>;
  /** The analytics' read replica (DATABASE_READ_URL): whether it answers and its replay lag; absent without one. */
  replica?(): Promise<ReplicaStatus>;
  /** Every (upstream, credential) routing knows: its breaker state and requests in flight (absent: none). */
  upstreamTargets?(): { upstreamId: string; credentialId: string; state: string; inFlight: number }[];
}

/** `baikal_upstream_breaker_state`'s values. */
const BREAKER_STATE_VALUES: Record<string, number> = { closed: 0, half_open: 1, open: 2, rate_limited: 3, auth_failed: 4 };

/**
 * The per-request metrics keep their sums in plain objects, one per label set, and hand them to
 * prom-client only when it reads them (a scrape, or a cluster primary gathering its workers): prom-client
 * validates and hashes the labels on every call, and six such calls a request were about 3 % of the
 * gateway's CPU at saturation. A request pays a Map lookup by a key its caller builds from the label values.
 */
type Labels = LabelValues<string>;

/** A counter summed per label set between reads; each read adds the sums to prom-client's counter. */
class SummedCounter {
  private readonly series = new Map<string, { labels: Labels; value: number }>();

  constructor(config: { name: string; help: string; labelNames: string[]; registers: Registry[] }) {
    const series = this.series;
    new Counter({
      ...config,
      collect() {
        for (const entry of series.values()) {
          if (entry.value) this.inc(entry.labels, entry.value);
          entry.value = 0;
        }
      },
    });
  }

  /** `key` is unique to `labels` (their values joined); `labels` is called once per new label set. */
  inc(key: string, labels: () => Labels, value = 1): void {
    let entry = this.series.get(key);
    if (!entry) this.series.set(key, (entry = { labels: labels(), value: 0 }));
    entry.value += value;
  }
}

/**
 * A cumulative histogram read by prom-client's registry as its own Histogram would be (the same values,
 * names and `le` labels, so scrapes and the cluster aggregator see no difference).
 */
class BucketHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly upperBounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  observe(key: string, labels: () => Labels, value: number): void {
    let entry = this.series.get(key);
    if (!entry) this.series.set(key, (entry = { labels: labels(), counts: this.upperBounds.map(() => 0), sum: 0, count: 0 }));
    const bucket = this.upperBounds.findIndex((bound) => value <= bound);
    if (bucket !== -1) entry.counts[bucket]! += 1;
    entry.sum += value;
    entry.count += 1;
  }

  /** What prom-client's registry reads of a metric (its own Histogram's shape). */
  get(): { name: string; help: string; type: 'histogram'; values: MetricValueWithName<string>[]; aggregator: 'sum' } {
    const values: MetricValueWithName<string>[] = [];
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      this.upperBounds.forEach((le, i) => values.push({ labels: { le, ...labels }, value: (cumulative += counts[i]!), metricName: `${this.name}_bucket` }));
      values.push({ labels: { le: '+Inf', ...labels }, value: count, metricName: `${this.name}_bucket` });
      values.push({ labels, value: sum, metricName: `${this.name}_sum` }, { labels, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.series.clear();
  }
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
  private readonly requests = new SummedCounter({ name: 'baikal_requests_total', help: 'Finished inference requests by endpoint, model, status and error code', labelNames: ['endpoint', 'model', 'status', 'error_code'], registers: [this.registry] });
  private readonly latency = new BucketHistogram('baikal_request_duration_seconds', 'Inference request duration until the last byte', LATENCY_BUCKETS, this.registry);
  private readonly firstByte = new BucketHistogram('baikal_time_to_first_byte_seconds', 'Time until the first response byte (the JSON body, or the first stream event)', LATENCY_BUCKETS, this.registry);
  private readonly tokens = new SummedCounter({ name: 'baikal_tokens_total', help: 'Tokens billed by model and kind', labelNames: ['model', 'kind'], registers: [this.registry] });
  private readonly spend = new SummedCounter({ name: 'baikal_spend_usd_total', help: 'USD charged by model (a float for dashboards; the ledger is exact)', labelNames: ['model'], registers: [this.registry] });
  private readonly refusals = new Counter({ name: 'baikal_limit_refusals_total', help: 'Requests refused by a limit, by reason', labelNames: ['reason'], registers: [this.registry] });
  private readonly upstreamErrors = new Counter({ name: 'baikal_upstream_errors_total', help: 'Failed upstream calls by upstream (operator-only) and kind', labelNames: ['upstream', 'kind'], registers: [this.registry] });
  private readonly upstreamCalls = new SummedCounter({ name: 'baikal_upstream_requests_total', help: 'Upstream calls by upstream, credential and outcome (ok, cancelled, or the failure kind)', labelNames: ['upstream', 'credential', 'outcome'], registers: [this.registry] });
  private readonly upstreamFirstByte = new BucketHistogram('baikal_upstream_first_byte_seconds', 'Time until an upstream answered with its headers, by upstream and credential', LATENCY_BUCKETS, this.registry);
  private readonly upstreamDuration = new BucketHistogram('baikal_upstream_duration_seconds', 'Upstream calls from sending to their end, by upstream and credential', LATENCY_BUCKETS, this.registry);

  constructor(probes: MetricsProbes) {
    // prom-client's event-loop monitor cannot be left out of its defaults: given a period it never reaches,
    // its timer never fires, and its delay gauges are replaced by ones read from `loopDelay`.
    collectDefaultMetrics({ register: this.registry, prefix: 'baikal_', eventLoopMonitoringPrecision: 2 ** 31 - 1 });
    this.loopDelayGauges();
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
    const targets = probes.upstreamTargets;
    if (targets) {
      new Gauge({ name: 'baikal_upstream_in_flight', help: 'Requests in flight per upstream credential in this process', labelNames: ['upstream', 'credential'], registers: [this.registry], collect() { this.reset(); for (const t of targets()) this.set({ upstream: t.upstreamId, credential: t.credentialId }, t.inFlight); } });
      new Gauge({
        name: 'baikal_upstream_breaker_state',
        help: 'Routing state per upstream credential: 0 closed, 1 half-open (a probe may go), 2 open, 3 paused by a rate limit, 4 refused credential',
        labelNames: ['upstream', 'credential'],
        registers: [this.registry],
        aggregator: 'max',
        collect() {
          this.reset();
          for (const t of targets()) this.set({ upstream: t.upstreamId, credential: t.credentialId }, BREAKER_STATE_VALUES[t.state] ?? 0);
        },
      });
    }
    new Gauge({ name: 'baikal_database_up', help: '1 when PostgreSQL answers', registers: [this.registry], aggregator: 'min', async collect() { this.set((await probes.databaseUp()) ? 1 : 0); } });
    if (probes.replica) this.replicaGauges(probes.replica);
  }

  /**
   * The read replica's two gauges. A scrape reads its gauges concurrently, so both share the probe in flight
   * rather than asking the replica twice; the next scrape probes afresh.
   */
  private replicaGauges(probe: () => Promise<ReplicaStatus>): void {
    let inFlight: Promise<ReplicaStatus> | null = null;
    const status = () => (inFlight ??= probe().finally(() => (inFlight = null)));
    new Gauge({
      name: 'baikal_database_replica_up',
      help: '1 when the analytics read replica (DATABASE_READ_URL) answers; while 0, analytics read the primary',
      registers: [this.registry],
      aggregator: 'min',
      async collect() {
        this.set((await status()).up ? 1 : 0);
      },
    });
    new Gauge({
      name: 'baikal_database_replica_lag_seconds',
      help: 'How far the analytics read replica replays behind the primary (0: all it received is replayed); NaN while it does not answer',
      registers: [this.registry],
      aggregator: 'max',
      async collect() {
        this.set((await status()).lagSeconds ?? Number.NaN);
      },
    });
  }

  /** Every finished (or refused-for-money) request, from its usage record. */
  observeUsage(record: ObservedUsage): void {
    const endpoint = record.endpoint ?? 'unknown';
    const { model, status } = record;
    const errorCode = record.errorCode ?? '';
    // Label values are model ids, endpoints, statuses and error codes: none holds a NUL, so NUL joins them uniquely.
    const endpointModel = `${endpoint}\0${model}`;
    this.requests.inc(`${endpointModel}\0${status}\0${errorCode}`, () => ({ endpoint, model, status, error_code: errorCode }));
    if (errorCode !== '' && MONEY_REFUSALS.has(errorCode)) this.refusals.inc({ reason: errorCode });
    if (record.latencyMs !== null) this.latency.observe(endpointModel, () => ({ endpoint, model }), record.latencyMs / 1000);
    if (record.promptTokens) this.tokens.inc(`${model}\0prompt`, () => ({ model, kind: 'prompt' }), record.promptTokens);
    if (record.completionTokens) this.tokens.inc(`${model}\0completion`, () => ({ model, kind: 'completion' }), record.completionTokens);
    const amount = Number(record.amountUsd);
    if (amount > 0) this.spend.inc(model, () => ({ model }), amount);
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

  /** `baikal_nodejs_eventloop_lag_{min,max,mean,stddev,p50,p90,p99}_seconds` since the previous scrape (zero when nothing was sampled). */
  private loopDelayGauges(): void {
    const gauges: { read: (histogram: RecordableHistogram) => number; gauge: Gauge }[] = [];
    // The first gauge's collect sets them all, then starts the next window.
    const collect = () => {
      const { histogram } = loopDelay;
      for (const { read, gauge } of gauges) gauge.set(histogram.count ? read(histogram) / 1e9 : 0);
      histogram.reset();
    };
    for (const [name, read] of Object.entries(LOOP_DELAY_GAUGES)) {
      const metric = `baikal_nodejs_eventloop_lag_${name}_seconds`;
      this.registry.removeSingleMetric(metric);
      const help = `The ${name} of the event-loop delay while serving requests (how late a timer fires, sampled every ${LOOP_DELAY_PERIODS.denseMs} ms under load and every ${LOOP_DELAY_PERIODS.sparseMs} ms between sparse requests), in seconds.`;
      gauges.push({ read, gauge: new Gauge({ name: metric, help, registers: [this.registry], aggregator: 'average', ...(gauges.length ? {} : { collect }) }) });
    }
  }

  observeFirstByte(endpoint: string, model: string, ms: number): void {
    this.firstByte.observe(`${endpoint}\0${model}`, () => ({ endpoint, model }), ms / 1000);
  }

  refused(reason: string): void {
    this.refusals.inc({ reason });
  }

  upstreamError(upstream: string, kind: string): void {
    this.upstreamErrors.inc({ upstream, kind });
  }

  /** One upstream call ended: `outcome` is ok, cancelled or a failure kind; `firstByteMs` null when no answer came. */
  observeUpstream(upstream: string, credential: string, outcome: string, firstByteMs: number | null, durationMs: number): void {
    const target = `${upstream}\0${credential}`;
    const labels = () => ({ upstream, credential });
    this.upstreamCalls.inc(`${target}\0${outcome}`, () => ({ upstream, credential, outcome }));
    if (firstByteMs !== null) this.upstreamFirstByte.observe(target, labels, firstByteMs / 1000);
    this.upstreamDuration.observe(target, labels, durationMs / 1000);
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
