import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import type { TracingLog } from './tracing-api.js';

/** Export failures are logged at most this often (the first at once, then a summary). */
const FAILURE_LOG_INTERVAL_MS = 60_000;

type ExportCallback = Parameters<SpanExporter['export']>[1];
type ExportResult = Parameters<ExportCallback>[0];
/** ExportResultCode.FAILED of @opentelemetry/core. */
const EXPORT_FAILED = 1;

/**
 * The OTLP exporter, with its failures counted and logged at most once a minute. The batch processor
 * exports off the request path, so a collector that is down costs spans, never a request.
 */
export class ReportingExporter implements SpanExporter {
  private failedExports = 0;
  private lostSpans = 0;
  private lastError = '';
  private lastLoggedAt = -Infinity;

  constructor(
    private readonly inner: SpanExporter,
    private readonly log: TracingLog,
  ) {}

  export(spans: ReadableSpan[], done: ExportCallback): void {
    const finish = (result: ExportResult) => {
      if (result.code === EXPORT_FAILED) this.failed(spans.length, result.error);
      done(result);
    };
    try {
      this.inner.export(spans, finish);
    } catch (error) {
      finish({ code: EXPORT_FAILED, error: error instanceof Error ? error : new Error(String(error)) });
    }
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }

  /** Logs failures not yet logged (at shutdown). */
  reportPending(): void {
    if (this.failedExports > 0) this.logFailures();
  }

  private failed(spans: number, error: Error | undefined): void {
    this.failedExports += 1;
    this.lostSpans += spans;
    // The collector's own words (status, its answer's start): operator data; truncated.
    if (error) this.lastError = error.message.slice(0, 200);
    if (performance.now() - this.lastLoggedAt >= FAILURE_LOG_INTERVAL_MS) this.logFailures();
  }

  private logFailures(): void {
    this.log.warn({ failedExports: this.failedExports, lostSpans: this.lostSpans, error: this.lastError }, 'traces: export to the OTLP endpoint failed; spans lost');
    this.failedExports = 0;
    this.lostSpans = 0;
    this.lastLoggedAt = performance.now();
  }
}
