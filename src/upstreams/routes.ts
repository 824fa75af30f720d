import type { Catalog } from '../catalog/catalog.js';
import { affinityOrder, DEFAULT_BALANCE_FACTOR } from './affinity.js';
import type { TargetHealth } from './breaker.js';
import type { UpstreamHealth } from './health.js';
import type { Upstream, UpstreamCredential } from './model.js';

/** One way to serve a model in a group: an upstream, one credential of its pool, and the name the upstream knows the model by. */
export interface RouteCandidate {
  upstream: Upstream;
  credential: UpstreamCredential;
  upstreamModel: string;
  /** The route's weight, shared among the upstream's credentials. */
  weight: number;
  priority: number;
  health: TargetHealth;
  /** The requests whose first-byte times compare with this route's (model, group; JSON and streams apart), made once. */
  peers: { json: string; stream: string };
  /** This route as the whole choice of a request: the usual case of one route, answered without an allocation. */
  alone: RouteChoice;
}

/** The routes to try for one request, in order. */
export interface RouteChoice {
  routes: RouteCandidate[];
  /**
   * How many of `routes` health allows; the rest are out (open, paused or refusing), the longest-failed
   * first, and are tried only when those failed or there are none: the request would fail anyway.
   */
  allowed: number;
  /** Every route that could take the request is at its concurrency limit. */
  busy: boolean;
}

/**
 * Which (upstream, credential) pairs serve which (model, group), and in which order to try them for a
 * request: by priority, then by weight (or by cache affinity), skipping what health says is out or full.
 * Rebuilt whole when the upstreams change; read in memory on every request; never shown to users.
 */
export class RouteTable {
  private routes = new Map<string, RouteCandidate[]>();
  private upstreams: Upstream[] = [];

  constructor(
    upstreams: Upstream[],
    private readonly health: UpstreamHealth,
    private readonly random: () => number = Math.random,
  ) {
    this.replace(upstreams);
  }

  /** Takes a new set of upstreams (an admin edit, here or in another process); requests already routed keep theirs. */
  replace(upstreams: Upstream[]): void {
    const routes = new Map<string, RouteCandidate[]>();
    const keys = new Set<string>();
    for (const upstream of upstreams) {
      for (const credential of upstream.credentials) {
        const health = this.health.target(upstream, credential);
        keys.add(health.key);
        for (const route of upstream.routes) {
          const key = routeKey(route.model, route.group);
          const list = routes.get(key) ?? [];
          const peers = { json: `${key}\u0000j`, stream: `${key}\u0000s` };
          const candidate = { upstream, credential, upstreamModel: route.upstreamModel, weight: route.weight / upstream.credentials.length, priority: route.priority, health, peers } as RouteCandidate;
          candidate.alone = { routes: [candidate], allowed: 1, busy: false };
          list.push(candidate);
          routes.set(key, list);
        }
      }
    }
    this.routes = routes;
    this.upstreams = upstreams;
    this.health.retain(keys);
  }

  get all(): readonly Upstream[] {
    return this.upstreams;
  }

  /** Every (group, model, upstream) this table routes to an upstream of `kind`. */
  served(kind: Upstream['kind']): { group: string; model: string; upstreamId: string }[] {
    return this.upstreams.filter((upstream) => upstream.kind === kind).flatMap((upstream) => upstream.routes.map((route) => ({ group: route.group, model: route.model, upstreamId: upstream.id })));
  }

  /** Every route serving `model` in `group`, in configuration order (no weighting, no copy: read only). */
  routesOf(model: string, group: string): readonly RouteCandidate[] {
    return this.routes.get(routeKey(model, group)) ?? NO_ROUTES;
  }

  /**
   * Routes for work outside the /v1 pipeline (status probes, video jobs, token counts): by priority,
   * then one picked by weight, its fallbacks, the rest by weight; health not consulted.
   */
  candidates(model: string, group: string): RouteCandidate[] {
    return this.ordered([...this.routesOf(model, group)]);
  }

  /**
   * The routes a /v1 request tries, in order: those health allows and with room, by priority (a lower
   * one only after every higher one), each priority by weight. When none is allowed, the one that failed
   * longest ago is still tried (then the others), so a blip of a model's only upstream is never an outage;
   * so are they when every allowed route failed this request.
   */
  choose(model: string, group: string, accepts: (route: RouteCandidate) => boolean, affinityKey: () => string | null = NO_AFFINITY): RouteChoice {
    const all = this.routesOf(model, group);
    const now = this.health.now();
    const only = all.length === 1 ? all[0]! : null;
    if (only && accepts(only) && only.health.available(now) && !this.health.full(only.upstream, only.credential, only.health)) return only.alone;
    const usable: RouteCandidate[] = [];
    const out: RouteCandidate[] = [];
    let fullButAnswering: RouteCandidate[] | null = null;
    for (const route of all) {
      if (!accepts(route)) continue;
      if (this.health.full(route.upstream, route.credential, route.health)) {
        if (route.health.slowPending === 0 && route.health.available(now)) (fullButAnswering ??= []).push(route);
        continue;
      }
      (route.health.available(now) ? usable : out).push(route);
    }
    // Every route at its limit: those still answering take the request; stuck ones never hold more of the gateway.
    if (!usable.length && fullButAnswering) usable.push(...fullButAnswering);
    if (!usable.length && !out.length) return { routes: [], allowed: 0, busy: all.some(accepts) };
    if (!out.length) return { routes: usable.length === 1 ? usable : this.ordered(usable, affinityKey), allowed: usable.length, busy: false };
    if (out.length > 1) out.sort((a, b) => a.health.lastFailureAt - b.health.lastFailureAt);
    return { routes: [...this.ordered(usable, affinityKey), ...out], allowed: usable.length, busy: false };
  }

  /**
   * By priority; within the first, by cache affinity when the request has a key (read only when there is a choice) (the same key keeps its
   * credential, and so its provider's prompt cache, while that one is not crowded), else by weight.
   */
  private ordered(routes: RouteCandidate[], affinityKey: () => string | null = NO_AFFINITY): RouteCandidate[] {
    if (routes.length < 2) return routes;
    const priorities = [...new Set(routes.map((r) => r.priority))].sort((a, b) => b - a);
    return priorities.flatMap((priority, i) => {
      const level = routes.filter((r) => r.priority === priority);
      const key = i === 0 && level.length > 1 ? affinityKey() : null;
      if (key === null) return this.byWeight(level);
      const targets = level.map((r) => ({ id: r.health.key, inFlight: r.health.inFlight, weight: r.weight }));
      return affinityOrder(key, targets, DEFAULT_BALANCE_FACTOR, AFFINITY_MIN_BOUND).map((index) => level[index]!);
    });
  }

  /** One picked by weight, then that upstream's configured fallbacks (in their order), then the rest by weight. */
  private byWeight(routes: RouteCandidate[]): RouteCandidate[] {
    if (routes.length < 2) return routes;
    const [first, ...rest] = this.weightedOrder(routes);
    const preferred = first!.upstream.fallback.flatMap((id) => rest.filter((r) => r.upstream.id === id));
    const others = rest.filter((r) => !preferred.includes(r));
    return [first!, ...preferred, ...others];
  }

  private weightedOrder(routes: RouteCandidate[]): RouteCandidate[] {
    const left = [...routes];
    const order: RouteCandidate[] = [];
    while (left.length) {
      const total = left.reduce((sum, r) => sum + r.weight, 0);
      let pick = this.random() * total;
      let index = left.findIndex((r) => (pick -= r.weight) < 0);
      if (index < 0) index = left.length - 1;
      order.push(...left.splice(index, 1));
    }
    return order;
  }
}

const NO_ROUTES: readonly RouteCandidate[] = [];
const NO_AFFINITY = () => null;

/**
 * Below this many requests in flight a credential never counts as crowded for cache affinity: with few
 * requests the load bound rounds down to one or two, and keys would leave their cached credential for nothing.
 */
const AFFINITY_MIN_BOUND = 8;

function routeKey(model: string, group: string): string {
  return `${group}\u0000${model}`;
}

/**
 * What an operator likely mistyped, by comparing the routes with the catalog: a route naming a model or group the
 * catalog lacks serves nothing, and a model the catalog offers in a group with no route answers 503 there. Said
 * once at start (the gateway serves what it can either way).
 */
export function routeCatalogMismatches(upstreams: Upstream[], catalog: Catalog): { deadRoutes: string[]; unrouted: string[] } {
  const deadRoutes: string[] = [];
  const routed = new Set<string>();
  for (const upstream of upstreams) {
    for (const route of upstream.routes) {
      routed.add(routeKey(route.model, route.group));
      const offered = catalog.models.get(route.model);
      if (!offered) deadRoutes.push(`${upstream.id}: model ${route.model} is not in the catalog`);
      else if (!catalog.groups.has(route.group)) deadRoutes.push(`${upstream.id}: group ${route.group} is not in the catalog`);
      else if (offered.groups[route.group] === undefined) deadRoutes.push(`${upstream.id}: the catalog does not offer ${route.model} in group ${route.group}`);
    }
  }
  const unrouted = [...catalog.models.values()].flatMap((model) => Object.keys(model.groups).filter((group) => !routed.has(routeKey(model.id, group))).map((group) => `${model.id} in ${group}`));
  return { deadRoutes: [...new Set(deadRoutes)], unrouted };
}
