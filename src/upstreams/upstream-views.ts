import type { UpstreamPrices } from './model.js';
import type { StoredUpstreams, UpstreamFields } from './upstreams.repository.js';
import { pricesOf, routingIdOf, type Resolution } from './upstream-resolution.js';

/**
 * What an admin sees of a credential: where its secret comes from, never the secret. A stored one shows at most
 * its last four characters (`last4`); an environment one, the variable's name.
 */
export interface UpstreamCredentialView {
  id: string;
  /** The id routing knows it by (health, metrics, traces, usage events, the test action). */
  routingId: string;
  label: string;
  source: 'stored' | 'env';
  last4: string | null;
  env: string | null;
  enabled: boolean;
  maxConcurrent: number | null;
  /** Whether its secret can be had now (the variable is set; the stored secret opens with the configured keys). */
  usable: boolean;
  problem: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface UpstreamRouteView {
  id: string;
  model: string;
  group: string;
  upstreamModel: string;
  weight: number;
  priority: number;
  enabled: boolean;
}

export type UpstreamPriceView = UpstreamPrices & { model: string };

/** An upstream's stored settings (health as the operator file writes it, in seconds), with what routing makes of it. */
export interface UpstreamView extends UpstreamFields {
  id: string;
  /** Whether routing serves it (enabled, with a usable enabled credential and an enabled route). */
  active: boolean;
  /** Why routing leaves it out; null when active. */
  inactiveReason: string | null;
  credentials: UpstreamCredentialView[];
  routes: UpstreamRouteView[];
  prices: UpstreamPriceView[];
  createdAt: Date;
  updatedAt: Date;
}

/** Admin views of the stored upstreams, with what the resolution learned of each credential. */
export function upstreamViews(stored: StoredUpstreams, resolution: Resolution): UpstreamView[] {
  return stored.upstreams.map((row) => ({
    id: row.id,
    kind: row.kind,
    baseUrl: row.base_url,
    enabled: row.enabled,
    nativeResponses: row.native_responses,
    timeouts: { ...row.timeouts },
    maxConcurrent: row.max_concurrent,
    fallback: [...row.fallback],
    health: { ...row.health },
    active: !resolution.skipped.has(row.id),
    inactiveReason: resolution.skipped.get(row.id) ?? null,
    credentials: stored.credentials
      .filter((credential) => credential.upstream_id === row.id)
      .map((credential) => {
        const status = resolution.credentials.get(credential.id);
        return {
          id: credential.id,
          routingId: routingIdOf(credential),
          label: credential.label,
          source: credential.secret_env ? ('env' as const) : ('stored' as const),
          last4: credential.secret_env ? null : credential.secret_last4,
          env: credential.secret_env,
          enabled: credential.enabled,
          maxConcurrent: credential.max_concurrent,
          usable: status?.usable ?? false,
          problem: status?.problem ?? null,
          createdAt: new Date(credential.created_at),
          updatedAt: new Date(credential.updated_at),
        };
      }),
    routes: stored.routes
      .filter((route) => route.upstream_id === row.id)
      .map((route) => ({ id: route.id, model: route.model, group: route.route_group, upstreamModel: route.upstream_model, weight: Number(route.weight), priority: route.priority, enabled: route.enabled })),
    prices: stored.prices.filter((price) => price.upstream_id === row.id).map((price) => ({ model: price.model, ...pricesOf(price) })),
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  }));
}
