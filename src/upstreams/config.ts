import { z } from 'zod';
import { DEFAULT_HEALTH, DEFAULT_MAX_CONCURRENT, UPSTREAM_KINDS, type HealthSettings, type Upstream, type UpstreamPrices } from './model.js';

export type { Upstream } from './model.js';

/**
 * Upstream routes are operator configuration (the `upstreams` section of BAIKAL_CONFIG); credentials
 * come from the environment by variable name, so the file can be committed and never holds a secret.
 * Nothing here is ever shown to users.
 */
const upstreamRoute = z.strictObject({
  /** The public route group this route serves. */
  group: z.string().min(1),
  /** Public model ids served here; optionally mapped to the upstream's own model name. */
  models: z.array(z.string().min(1)).min(1),
  modelMap: z.record(z.string(), z.string().min(1)).default({}),
  /** Share of traffic among routes of one priority serving the same model and group. */
  weight: z.number().positive().default(1),
  /** Higher first: lower priorities serve only when every route of the higher ones is unavailable. */
  priority: z.number().int().min(-1000).max(1000).default(0),
});

export const envName = z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'must be an environment variable name');
export const decimal = z.string().regex(/^\d{1,12}(\.\d{1,10})?$/, 'must be a decimal string such as "0.15"');

/** What the upstream charges us for one model (per 1M tokens, per image, per video second). */
export const upstreamPrices = z.strictObject({
  inputPer1m: decimal.nullable().default(null),
  outputPer1m: decimal.nullable().default(null),
  cacheReadPer1m: decimal.nullable().default(null),
  cacheWritePer1m: decimal.nullable().default(null),
  perImage: decimal.nullable().default(null),
  perVideoSecond: decimal.nullable().default(null),
});

export const healthFields = {
    windowSeconds: z.number().positive().max(3_600).default(DEFAULT_HEALTH.windowMs / 1000),
    minFailures: z.number().int().positive().max(10_000).default(DEFAULT_HEALTH.minFailures),
    failureRate: z.number().gt(0).max(1).default(DEFAULT_HEALTH.failureRate),
    cooldownSeconds: z.number().positive().max(3_600).default(DEFAULT_HEALTH.cooldownMs / 1000),
    maxCooldownSeconds: z.number().positive().max(86_400).default(DEFAULT_HEALTH.maxCooldownMs / 1000),
    stallMs: z.number().int().positive().max(600_000).default(DEFAULT_HEALTH.stallMs),
};
const healthSettings = z.strictObject(healthFields).prefault({});
export type HealthDefinition = z.output<typeof healthSettings>;

export const upstreamId = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'ids are lowercase letters, digits, "_" or "-"');
export const baseUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .refine((value) => !new URL(value).username && !new URL(value).password, 'must not carry credentials; use credentialEnv');
export const timeoutFields = {
  connectMs: z.number().int().positive().default(5_000),
  firstByteMs: z.number().int().positive().default(60_000),
  idleMs: z.number().int().positive().default(120_000),
  /**
   * How long an idle connection to the upstream is kept for the next request, when the upstream's answer
   * names no `Keep-Alive: timeout` of its own (with one, its timeout less 2 s is used). Below the 5 s at
   * which common servers (uvicorn, as under vLLM; node) close idle connections without saying so: a
   * longer wait sends requests on connections the upstream is closing, and each such request fails.
   */
  keepAliveMs: z.number().int().positive().default(4_000),
};
export const maxConcurrent = z.number().int().positive().max(100_000);

const upstream = z.strictObject({
  id: upstreamId,
  // `video-jobs`: an asynchronous video API (submit, poll, download), see src/video/video-upstream.ts.
  kind: z.enum(UPSTREAM_KINDS),
  baseUrl,
  /** Name of the environment variable holding the credential (one credential; `credentials` for a pool). */
  credentialEnv: envName.optional(),
  /** A pool of credentials, each its own provider account, by environment variable. */
  credentials: z.array(z.strictObject({ env: envName, label: z.string().max(64).optional(), maxConcurrent: maxConcurrent.optional() })).optional(),
  /** Requests in flight to this upstream at most, per process. */
  maxConcurrent: maxConcurrent.default(DEFAULT_MAX_CONCURRENT),
  /** The upstream's own prices by public model id (cost and margin; never shown to customers). */
  prices: z.record(z.string(), upstreamPrices).default({}),
  health: healthSettings,
  timeouts: z.strictObject(timeoutFields).prefault({}),
  routes: z.array(upstreamRoute).min(1),
  /**
   * An `openai-compatible` upstream that also serves the Responses API (`POST <baseUrl>/responses`):
   * `/v1/responses` goes to it natively (reasoning items and hosted tools kept) instead of through chat.
   */
  nativeResponses: z.boolean().optional(),
  /** Upstreams tried, in order, when this one fails before any byte reached the client. */
  fallback: z.array(z.string()).default([]),
});

export const upstreamsSchema = z.array(upstream).default([]).superRefine((list, ctx) => {
  const ids = new Set<string>();
  list.forEach((u, i) => {
    if (!u.credentialEnv === !u.credentials?.length) ctx.addIssue({ code: 'custom', path: [i, 'credentialEnv'], message: 'give either credentialEnv or a non-empty credentials list' });
    if (u.nativeResponses && u.kind !== 'openai-compatible') ctx.addIssue({ code: 'custom', path: [i, 'nativeResponses'], message: 'only an openai-compatible upstream can serve the Responses API' });
    if (ids.has(u.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate upstream id ${u.id}` });
    ids.add(u.id);
  });
  list.forEach((u, i) =>
    u.fallback.forEach((f, j) => {
      if (!ids.has(f)) ctx.addIssue({ code: 'custom', path: [i, 'fallback', j], message: `unknown upstream ${f}` });
      if (f === u.id) ctx.addIssue({ code: 'custom', path: [i, 'fallback', j], message: 'an upstream cannot fall back to itself' });
    }),
  );
});

export type UpstreamDefinition = z.output<typeof upstream>;

/** The environment variables a definition reads its credentials from. */
export function credentialEnvsOf(definition: UpstreamDefinition): { env: string; label?: string; maxConcurrent?: number }[] {
  return definition.credentials?.length ? definition.credentials : [{ env: definition.credentialEnv! }];
}

/**
 * Resolves credentials from `env` into the upstreams the gateway runs. A missing variable is an error
 * naming the variable (never a value), so a misconfigured gateway stops at boot rather than failing requests later.
 */
export function resolveUpstreams(definitions: UpstreamDefinition[], env: NodeJS.ProcessEnv): Upstream[] {
  const missing = definitions.flatMap((u) => credentialEnvsOf(u).filter((c) => !env[c.env]?.trim()).map((c) => `${u.id}: ${c.env} is not set`));
  if (missing.length) throw new Error(`Upstream credentials missing: ${missing.join('; ')}`);
  return definitions.map((u) => ({
    id: u.id,
    kind: u.kind,
    baseUrl: u.baseUrl,
    timeouts: u.timeouts,
    nativeResponses: u.nativeResponses === true,
    maxConcurrent: u.maxConcurrent,
    credentials: credentialEnvsOf(u).map((c) => ({ id: `env:${c.env}`, label: c.label ?? c.env, secret: env[c.env]!.trim(), maxConcurrent: c.maxConcurrent ?? null })),
    routes: u.routes.flatMap((r) => r.models.map((model) => ({ model, group: r.group, upstreamModel: r.modelMap[model] ?? model, weight: r.weight, priority: r.priority }))),
    fallback: u.fallback,
    prices: Object.fromEntries(Object.entries(u.prices).map(([model, p]) => [model, p as UpstreamPrices])),
    health: healthSettingsOf(u.health),
  }));
}

/** The health settings routing reads, from the seconds an operator writes. */
export function healthSettingsOf(health: HealthDefinition): HealthSettings {
  return {
    windowMs: health.windowSeconds * 1000,
    minFailures: health.minFailures,
    failureRate: health.failureRate,
    cooldownMs: health.cooldownSeconds * 1000,
    maxCooldownMs: health.maxCooldownSeconds * 1000,
    stallMs: health.stallMs,
  };
}
