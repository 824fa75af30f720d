/**
 * The upstreams as the gateway runs them: what the operator file or the admin pages define, with every
 * credential's secret resolved (decrypted, or read from its environment variable). Built anew on each
 * change and swapped whole; nothing here is ever shown to a customer.
 */
export const UPSTREAM_KINDS = ['openai-compatible', 'anthropic', 'video-jobs'] as const;
export type UpstreamKind = (typeof UPSTREAM_KINDS)[number];

export interface UpstreamTimeouts {
  connectMs: number;
  /** Until the response headers (a JSON answer's headers come with its whole body). */
  firstByteMs: number;
  /** Between two body chunks. */
  idleMs: number;
  /** How long an idle connection is kept when the upstream names no Keep-Alive timeout. */
  keepAliveMs: number;
}

/** One credential of an upstream's pool (each is its own provider account, with its own limits and prompt cache). */
export interface UpstreamCredential {
  /** Stable id: a uuid for one entered by an admin, `env:NAME` for one read from an environment variable. */
  id: string;
  label: string;
  secret: string;
  /** Requests in flight through this credential at most, in each process (null: only the upstream's limit). */
  maxConcurrent: number | null;
}

/** One (model, group) an upstream serves, under the name the upstream knows the model by. */
export interface UpstreamRoute {
  model: string;
  group: string;
  upstreamModel: string;
  /** Share of traffic among the routes of one priority serving the same model and group. */
  weight: number;
  /** Higher first: a lower priority is used only when every route of the higher ones is unavailable. */
  priority: number;
}

/** What the upstream charges us, per model (exact decimal strings; null: nothing in that unit). */
export interface UpstreamPrices {
  inputPer1m: string | null;
  outputPer1m: string | null;
  cacheReadPer1m: string | null;
  cacheWritePer1m: string | null;
  perImage: string | null;
  perVideoSecond: string | null;
}

/** How a route's health is judged (see health.ts); defaults in DEFAULT_HEALTH. */
export interface HealthSettings {
  /** Outcomes older than this are forgotten. */
  windowMs: number;
  /** Failures in the window before the breaker may open... */
  minFailures: number;
  /** ...and the share of failures among the window's outcomes it takes. */
  failureRate: number;
  /** First wait before a probe; doubled after each failed probe, up to maxCooldownMs. */
  cooldownMs: number;
  maxCooldownMs: number;
  /**
   * A request unanswered for this long (or 4 times the recent first-byte p95 of the model, if longer)
   * while another route of the model has since answered a later request is a stall: it counts as a failure.
   */
  stallMs: number;
}

export const DEFAULT_HEALTH: HealthSettings = { windowMs: 30_000, minFailures: 5, failureRate: 0.5, cooldownMs: 5_000, maxCooldownMs: 60_000, stallMs: 1_000 };

export interface Upstream {
  id: string;
  kind: UpstreamKind;
  baseUrl: string;
  timeouts: UpstreamTimeouts;
  /**
   * An `openai-compatible` upstream that also serves the Responses API (`POST <baseUrl>/responses`):
   * `/v1/responses` goes to it natively (reasoning items and hosted tools kept) instead of through chat.
   */
  nativeResponses: boolean;
  /** Requests in flight to this upstream at most, in each process: its stuck requests can take no more of the gateway. */
  maxConcurrent: number;
  /** At least one. */
  credentials: UpstreamCredential[];
  routes: UpstreamRoute[];
  /** Upstreams tried, in order, when this one fails before any byte reached the client (among equal priorities). */
  fallback: string[];
  /** The upstream's own prices by public model id (for cost and margin). */
  prices: Record<string, UpstreamPrices>;
  health: HealthSettings;
}

export const DEFAULT_MAX_CONCURRENT = 32;
