import { z } from 'zod';
import { baseUrl, envName, healthFields, maxConcurrent, timeoutFields, upstreamId, upstreamPrices } from './config.js';
import { DEFAULT_MAX_CONCURRENT, UPSTREAM_KINDS } from './model.js';

/**
 * What admins send to manage upstreams (camelCase; the same rules as the operator file's `upstreams`, whose field
 * schemas these reuse). Secrets are write-only: they are read here and never part of any output.
 */

/** The same fields, each optional and without its default: an update names only what changes. */
function patchOf<T extends Record<string, z.ZodDefault<z.ZodType>>>(fields: T) {
  const patch = Object.fromEntries(Object.entries(fields).map(([name, field]) => [name, field.unwrap().optional()]));
  return z.strictObject(patch as { [K in keyof T]: z.ZodOptional<ReturnType<T[K]['unwrap']>> });
}

const label = z.string().trim().min(1).max(64);
/** Sent as a header value: visible ASCII only, so no line break or space can reach a request. */
const secret = z
  .string()
  .trim()
  .min(1)
  .max(4096)
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');
const modelId = z.string().trim().min(1).max(200);
const uuid = z.uuid({ error: 'must be a credential id' });

function oneSource(value: { secret?: string | null; env?: string | null }, ctx: z.RefinementCtx, required: boolean): void {
  const given = Number(value.secret != null) + Number(value.env != null);
  if (given > 1) ctx.addIssue({ code: 'custom', path: ['secret'], message: 'give either secret or env, not both' });
  else if (required && given === 0) ctx.addIssue({ code: 'custom', path: ['secret'], message: 'give either secret (stored encrypted) or env (the name of an environment variable holding it)' });
}

const credentialFields = {
  label: label.optional(),
  /** Stored sealed by the vault; shown afterwards only as its last characters. */
  secret: secret.optional(),
  /** The name of an environment variable of the gateway's processes that holds the secret. */
  env: envName.optional(),
  enabled: z.boolean().optional(),
  /** null: no limit of its own. */
  maxConcurrent: maxConcurrent.nullable().optional(),
};

export const credentialInput = z.strictObject(credentialFields).superRefine((value, ctx) => oneSource(value, ctx, true));
export type CredentialInput = z.input<typeof credentialInput>;

export const addCredentialInput = z.strictObject({ upstreamId, ...credentialFields }).superRefine((value, ctx) => oneSource(value, ctx, true));
export type AddCredentialInput = z.input<typeof addCredentialInput>;

/** Giving `secret` or `env` replaces the credential's source (one of the two). */
export const updateCredentialInput = z.strictObject({ id: uuid, ...credentialFields }).superRefine((value, ctx) => oneSource(value, ctx, false));
export type UpdateCredentialInput = z.input<typeof updateCredentialInput>;

export const routeInput = z
  .strictObject({
    model: modelId,
    group: modelId,
    /** The upstream's own name of the model (default: the public id). */
    upstreamModel: modelId.optional(),
    weight: z.number().positive().max(1_000_000).default(1),
    priority: z.number().int().min(-1000).max(1000).default(0),
    enabled: z.boolean().default(true),
  })
  .transform((route) => ({ ...route, upstreamModel: route.upstreamModel ?? route.model }));
export type RouteInput = z.input<typeof routeInput>;
export type Route = z.output<typeof routeInput>;

export const priceInput = z.strictObject({ model: modelId, ...upstreamPrices.shape });
export type PriceInput = z.input<typeof priceInput>;
export type Price = z.output<typeof priceInput>;

export const setRoutesInput = z.strictObject({ upstreamId, routes: z.array(routeInput).max(1_000) });
export type SetRoutesInput = z.input<typeof setRoutesInput>;

export const setPricesInput = z.strictObject({ upstreamId, prices: z.array(priceInput).max(1_000) });
export type SetPricesInput = z.input<typeof setPricesInput>;

const fallback = z.array(upstreamId).max(32);

export const createUpstreamInput = z.strictObject({
  id: upstreamId,
  kind: z.enum(UPSTREAM_KINDS),
  baseUrl,
  enabled: z.boolean().default(true),
  /** openai-compatible only: the upstream also serves the Responses API. */
  nativeResponses: z.boolean().default(false),
  timeouts: z.strictObject(timeoutFields).prefault({}),
  maxConcurrent: maxConcurrent.default(DEFAULT_MAX_CONCURRENT),
  fallback: fallback.default([]),
  health: z.strictObject(healthFields).prefault({}),
  credentials: z.array(credentialInput).max(100).default([]),
  routes: z.array(routeInput).max(1_000).default([]),
  prices: z.array(priceInput).max(1_000).default([]),
});
export type CreateUpstreamInput = z.input<typeof createUpstreamInput>;
export type CreateUpstream = z.output<typeof createUpstreamInput>;

/** Absent fields keep their value; `timeouts` and `health` change only the settings they name. */
export const updateUpstreamInput = z.strictObject({
  id: upstreamId,
  kind: z.enum(UPSTREAM_KINDS).optional(),
  baseUrl: baseUrl.optional(),
  enabled: z.boolean().optional(),
  nativeResponses: z.boolean().optional(),
  timeouts: patchOf(timeoutFields).optional(),
  maxConcurrent: maxConcurrent.optional(),
  fallback: fallback.optional(),
  health: patchOf(healthFields).optional(),
});
export type UpdateUpstreamInput = z.input<typeof updateUpstreamInput>;
export type UpdateUpstream = z.output<typeof updateUpstreamInput>;

export const upstreamRef = z.strictObject({ id: upstreamId });
export const credentialRef = z.strictObject({ id: uuid });
export const setEnabledInput = z.strictObject({ id: upstreamId, enabled: z.boolean() });
export type SetEnabledInput = z.input<typeof setEnabledInput>;
