import { NOOP_TRACING, nonEmpty, type Tracing, type TracingLog } from './tracing-api.js';

export * from './tracing-api.js';

/** Why tracing stays off for this environment, or null when it is to be started. */
export function tracingDisabledBecause(env: NodeJS.ProcessEnv): string | null {
  const endpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) ?? nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (endpoint === undefined) return 'no OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT';
  if (nonEmpty(env.OTEL_SDK_DISABLED)?.toLowerCase() === 'true') return 'OTEL_SDK_DISABLED=true';
  const exporter = nonEmpty(env.OTEL_TRACES_EXPORTER)?.toLowerCase();
  if (exporter !== undefined && exporter !== 'otlp') return `OTEL_TRACES_EXPORTER=${exporter} (only otlp is supported)`;
  return null;
}

/**
 * Traces for the /v1 pipeline, configured by the standard OTEL_* variables (docs/operations.md, "Traces").
 * Without an endpoint this resolves to NOOP_TRACING at once; with one, the SDK is loaded and started.
 */
export async function createTracing(env: NodeJS.ProcessEnv, log: TracingLog): Promise<Tracing> {
  const off = tracingDisabledBecause(env);
  if (off !== null) {
    // Only say so when someone evidently meant to trace; an unset endpoint is the quiet default.
    if (!off.startsWith('no ')) log.info({ reason: off }, 'traces: off');
    return NOOP_TRACING;
  }
  const { startSdkTracing } = await import('./tracing-sdk.js');
  return startSdkTracing(env, log);
}
