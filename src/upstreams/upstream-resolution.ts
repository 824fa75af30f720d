import { plainDecimal } from '../shared/money.js';
import { healthSettingsOf } from './config.js';
import type { Upstream, UpstreamCredential, UpstreamPrices } from './model.js';
import type { CredentialRow, PriceRow, StoredUpstreams } from './upstreams.repository.js';
import { VaultError, type CredentialVault } from './vault.js';

/** Whether routing can use a stored credential, and if not, why (words for the operator: never a secret). */
export interface CredentialStatus {
  usable: boolean;
  problem: string | null;
}

/** The stored upstreams as the gateway runs them, and what kept any of them out. */
export interface Resolution {
  /** Enabled upstreams with at least one usable enabled credential and one enabled route. */
  upstreams: Upstream[];
  /** Every secret that could be resolved (disabled credentials too: a request already sent may still echo one). */
  secrets: string[];
  /** By credential row id. */
  credentials: Map<string, CredentialStatus>;
  /** Upstream id -> why routing leaves it out. */
  skipped: Map<string, string>;
}

/**
 * Resolves every stored credential (opens sealed secrets with the vault, reads named variables from `env`) and
 * builds the runtime upstreams. Decrypted secrets exist only in the returned objects, in memory.
 */
export function resolveStored(stored: StoredUpstreams, deps: { vault: CredentialVault; env: NodeJS.ProcessEnv }): Resolution {
  const credentials = new Map<string, CredentialStatus>();
  const secrets: string[] = [];
  const pools = new Map<string, UpstreamCredential[]>();
  for (const row of stored.credentials) {
    const resolved = secretOf(row, deps);
    credentials.set(row.id, { usable: resolved.secret !== null, problem: resolved.problem });
    if (resolved.secret === null) continue;
    secrets.push(resolved.secret);
    if (!row.enabled) continue;
    const pool = pools.get(row.upstream_id) ?? [];
    // A named variable keeps the id the operator file gave it, so routing's health of it survives the move here.
    pool.push({ id: routingIdOf(row), label: row.label, secret: resolved.secret, maxConcurrent: row.max_concurrent });
    pools.set(row.upstream_id, pool);
  }

  const upstreams: Upstream[] = [];
  const skipped = new Map<string, string>();
  for (const row of stored.upstreams) {
    const routes = stored.routes
      .filter((route) => route.upstream_id === row.id && route.enabled)
      .map((route) => ({ model: route.model, group: route.route_group, upstreamModel: route.upstream_model, weight: Number(route.weight), priority: route.priority }));
    const pool = pools.get(row.id) ?? [];
    const why = !row.enabled ? 'disabled' : !pool.length ? 'no usable enabled credential' : !routes.length ? 'no enabled route' : null;
    if (why) {
      skipped.set(row.id, why);
      continue;
    }
    upstreams.push({
      id: row.id,
      kind: row.kind,
      baseUrl: row.base_url,
      timeouts: { ...row.timeouts },
      nativeResponses: row.native_responses,
      maxConcurrent: row.max_concurrent,
      credentials: pool,
      routes,
      fallback: [...row.fallback],
      prices: Object.fromEntries(stored.prices.filter((price) => price.upstream_id === row.id).map((price) => [price.model, pricesOf(price)])),
      health: healthSettingsOf(row.health),
    });
  }
  return { upstreams, secrets, credentials, skipped };
}

function secretOf(row: CredentialRow, deps: { vault: CredentialVault; env: NodeJS.ProcessEnv }): { secret: string | null; problem: string | null } {
  if (row.secret_env) {
    const value = deps.env[row.secret_env]?.trim();
    return value ? { secret: value, problem: null } : { secret: null, problem: `environment variable ${row.secret_env} is not set` };
  }
  try {
    return { secret: deps.vault.open(row.sealed_secret!, { upstreamId: row.upstream_id, credentialId: row.id }), problem: null };
  } catch (error) {
    // The vault's words name keys by id and never hold a secret; anything else is not ours to repeat.
    return { secret: null, problem: `the stored secret cannot be decrypted${error instanceof VaultError ? `: ${error.message}` : ''}` };
  }
}

export function pricesOf(row: PriceRow): UpstreamPrices {
  return {
    inputPer1m: plainDecimal(row.input_per_1m),
    outputPer1m: plainDecimal(row.output_per_1m),
    cacheReadPer1m: plainDecimal(row.cache_read_per_1m),
    cacheWritePer1m: plainDecimal(row.cache_write_per_1m),
    perImage: plainDecimal(row.per_image),
    perVideoSecond: plainDecimal(row.per_video_second),
  };
}

/**
 * The id routing, metrics, traces and usage events know a credential by: `env:NAME` for one read from an
 * environment variable (the same as the operator file's, so what routing learned carries over), else its row id.
 */
export function routingIdOf(row: { id: string; secret_env: string | null }): string {
  return row.secret_env ? `env:${row.secret_env}` : row.id;
}
