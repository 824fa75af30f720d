import { money } from '../shared/money.js';
import type { CatalogData, CatalogModel, Endpoint, GroupPrices, PricingPlan } from './catalog.schemas.js';

/**
 * An immutable, indexed snapshot of the catalog. Billing and inference read it synchronously: a price
 * lookup never touches the database. Admin edits replace the whole snapshot.
 */
export class Catalog {
  readonly models: ReadonlyMap<string, CatalogModel>;
  readonly families: ReadonlyMap<string, { id: string; label: string }>;
  readonly groups: ReadonlyMap<string, { id: string; label: string; public: boolean }>;
  readonly plans: ReadonlyMap<string, PricingPlan>;
  /**
   * Scaled prices by model, group and plan, computed on first use. The snapshot never changes, so the
   * same price object comes back every time (and the billing code's per-price-object caches hold).
   */
  private readonly scaled = new Map<string, GroupPrices>();

  constructor(
    readonly data: CatalogData,
    readonly version: number,
  ) {
    this.models = new Map(data.models.map((m) => [m.id, m]));
    this.families = new Map(data.families.map((f) => [f.id, f]));
    this.groups = new Map(data.groups.map((g) => [g.id, g]));
    this.plans = new Map(data.plans.map((p) => [p.id, p]));
  }

  get defaultPlan(): string {
    return this.data.defaultPlan;
  }

  /** Public groups in which at least one model of `family` is offered: the route groups a key of that family may use. */
  publicGroupsOf(family: string): string[] {
    const offered = new Set<string>();
    for (const model of this.data.models) if (model.family === family) for (const group of Object.keys(model.groups)) offered.add(group);
    return this.data.groups.filter((g) => g.public && offered.has(g.id)).map((g) => g.id);
  }

  /** Whether a key scoped to (family, group) may call `model` on `endpoint`. */
  allows(scope: { family: string; group: string }, model: CatalogModel, endpoint?: Endpoint): boolean {
    return model.family === scope.family && model.groups[scope.group] !== undefined && (endpoint === undefined || model.endpoints.includes(endpoint));
  }

  /** The price a key on `planId` pays for `modelId` in `groupId`: public price x plan multiplier, unless overridden. */
  priceOf(modelId: string, groupId: string, planId: string): GroupPrices | null {
    const model = this.models.get(modelId);
    const base = model?.groups[groupId];
    if (!model || !base) return null;
    // Only offered (model, group) pairs are kept, so the cache is bounded by the catalog and the plans in use.
    const cacheKey = `${modelId}\n${groupId}\n${planId}`;
    let prices = this.scaled.get(cacheKey);
    if (!prices) {
      prices = this.planPrice(model.id, base, planId);
      this.scaled.set(cacheKey, prices);
    }
    return prices;
  }

  private planPrice(modelId: string, base: GroupPrices, planId: string): GroupPrices {
    const plan = this.plans.get(planId) ?? this.plans.get(this.defaultPlan)!;
    const override = plan.overrides[modelId];
    if (override) return override;
    return scalePrices(base, plan.multiplier);
  }

  /** What users are told about a plan: its id when public, otherwise `custom`. */
  publicPlanName(planId: string): string {
    return this.plans.get(planId)?.public ? planId : 'custom';
  }
}

function scale(value: string, factor: string): string {
  return factor === '1' ? value : money(value).times(factor).toFixed();
}

export function scalePrices(prices: GroupPrices, factor: string): GroupPrices {
  if ('tokens' in prices) {
    const t = prices.tokens;
    return {
      tokens: {
        input: scale(t.input, factor),
        output: scale(t.output, factor),
        cacheRead: t.cacheRead === null ? null : scale(t.cacheRead, factor),
        cacheWrite: t.cacheWrite === null ? null : scale(t.cacheWrite, factor),
      },
    };
  }
  if ('perGeneration' in prices) return { perGeneration: scale(prices.perGeneration, factor) };
  return { perSecond: scale(prices.perSecond, factor) };
}
