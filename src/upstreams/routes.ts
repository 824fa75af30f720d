import type { Catalog } from '../catalog/catalog.js';
import type { Upstream } from './config.js';

/** One way to serve a model in a group: an upstream and the name the upstream knows the model by. */
export interface RouteCandidate {
  upstream: Upstream;
  upstreamModel: string;
}

interface WeightedRoute extends RouteCandidate {
  weight: number;
}

/**
 * Which upstreams serve which (model, group), and in which order to try them. Built once from
 * configuration; never shown to users.
 */
export class RouteTable {
  private readonly routes = new Map<string, WeightedRoute[]>();
  constructor(
    private readonly upstreams: Upstream[],
    private readonly random: () => number = Math.random,
  ) {
    for (const upstream of upstreams) {
      for (const route of upstream.routes) {
        for (const model of route.models) {
          const key = routeKey(model, route.group);
          const list = this.routes.get(key) ?? [];
          list.push({ upstream, upstreamModel: route.modelMap[model] ?? model, weight: route.weight });
          this.routes.set(key, list);
        }
      }
    }
  }

  /** Every (group, model, upstream) this table routes to an upstream of `kind`. */
  served(kind: Upstream['kind']): { group: string; model: string; upstreamId: string }[] {
    return this.upstreams
      .filter((upstream) => upstream.kind === kind)
      .flatMap((upstream) => upstream.routes.flatMap((route) => route.models.map((model) => ({ group: route.group, model, upstreamId: upstream.id }))));
  }

  /** Every route serving `model` in `group`, in configuration order (no weighting, no copy: read only). */
  routesOf(model: string, group: string): readonly RouteCandidate[] {
    return this.routes.get(routeKey(model, group)) ?? NO_ROUTES;
  }

  /**
   * Upstreams to try for `model` in `group`: one picked by weight, then that upstream's configured
   * fallbacks (in their order) among those serving the model, then the rest by weight. Empty when
   * nothing serves it.
   */
  candidates(model: string, group: string): RouteCandidate[] {
    const routes = this.routes.get(routeKey(model, group)) ?? [];
    // One route (the usual case): nothing to order.
    if (routes.length === 1) return [{ upstream: routes[0]!.upstream, upstreamModel: routes[0]!.upstreamModel }];
    const [first, ...rest] = this.weightedOrder(routes);
    if (!first) return [];
    const preferred = first.upstream.fallback.flatMap((id) => rest.filter((r) => r.upstream.id === id));
    const others = rest.filter((r) => !preferred.includes(r));
    return [first, ...preferred, ...others].map(({ upstream, upstreamModel }) => ({ upstream, upstreamModel }));
  }

  private weightedOrder(routes: WeightedRoute[]): WeightedRoute[] {
    const left = [...routes];
    const order: WeightedRoute[] = [];
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
      for (const model of route.models) {
        routed.add(routeKey(model, route.group));
        const offered = catalog.models.get(model);
        if (!offered) deadRoutes.push(`${upstream.id}: model ${model} is not in the catalog`);
        else if (!catalog.groups.has(route.group)) deadRoutes.push(`${upstream.id}: group ${route.group} is not in the catalog`);
        else if (offered.groups[route.group] === undefined) deadRoutes.push(`${upstream.id}: the catalog does not offer ${model} in group ${route.group}`);
      }
    }
  }
  const unrouted = [...catalog.models.values()].flatMap((model) => Object.keys(model.groups).filter((group) => !routed.has(routeKey(model.id, group))).map((group) => `${model.id} in ${group}`));
  return { deadRoutes: [...new Set(deadRoutes)], unrouted };
}
