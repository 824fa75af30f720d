import { readFile } from 'node:fs/promises';
import type { MikroORM } from '@mikro-orm/postgresql';
import { requireAdmin, type Actor } from '../shared/actor.js';
import { DomainError, StartupError } from '../shared/errors.js';
import type { SharedState } from '../shared/redis.js';
import type { Logger } from '../shared/logging.js';
import { formatUsd } from '../shared/money.js';
import { parseInput } from '../shared/validation.js';
import { Catalog } from './catalog.js';
import { CatalogRepository } from './catalog.repository.js';
import {
  catalogFile,
  catalogModel,
  groupPrices,
  pricingPlan,
  type CatalogData,
  type CatalogModel,
  type CatalogModelInput,
  type GroupPrices,
  type PricingPlan,
  type PricingPlanInput,
} from './catalog.schemas.js';
import defaultCatalog from './default-catalog.json' with { type: 'json' };

export interface PricingView {
  inputUsdPer1m: string | null;
  outputUsdPer1m: string | null;
  cacheReadUsdPer1m: string | null;
  cacheWriteUsdPer1m: string | null;
  usdPerGeneration: string | null;
  usdPerSecond: string | null;
}

export interface CatalogModelGroupView {
  id: string;
  label: string;
  /** `siberia` (public plans by name) or `custom`; never an internal plan name. */
  pricingPlan: string;
  pricing: PricingView;
}

export interface CatalogModelView {
  id: string;
  label: string;
  family: string;
  kind: 'text' | 'image' | 'video';
  endpoints: string[];
  capabilities: { tools: boolean; vision: boolean; streaming: boolean };
  contextWindow: number | null;
  maxOutputTokens: number | null;
  groups: CatalogModelGroupView[];
  official: PricingView | null;
  video: CatalogModel['video'];
}

export interface CatalogView {
  version: number;
  families: { id: string; label: string }[];
  groups: { id: string; label: string }[];
  models: CatalogModelView[];
}

/** Scopes a user's keys reach: (family, group, plan). */
export interface KeyScope {
  family: string;
  group: string;
  plan: string;
}

export function pricingView(prices: GroupPrices): PricingView {
  const view: PricingView = { inputUsdPer1m: null, outputUsdPer1m: null, cacheReadUsdPer1m: null, cacheWriteUsdPer1m: null, usdPerGeneration: null, usdPerSecond: null };
  if ('tokens' in prices) {
    view.inputUsdPer1m = formatUsd(prices.tokens.input);
    view.outputUsdPer1m = formatUsd(prices.tokens.output);
    view.cacheReadUsdPer1m = prices.tokens.cacheRead === null ? null : formatUsd(prices.tokens.cacheRead);
    view.cacheWriteUsdPer1m = prices.tokens.cacheWrite === null ? null : formatUsd(prices.tokens.cacheWrite);
  } else if ('perGeneration' in prices) view.usdPerGeneration = formatUsd(prices.perGeneration);
  else view.usdPerSecond = formatUsd(prices.perSecond);
  return view;
}

/**
 * The live catalog: loaded from PostgreSQL at boot (seeded from the catalog file on first start), kept
 * in memory as an immutable snapshot, and replaced atomically by admin edits.
 */
export class CatalogService {
  private current?: Catalog;

  /** `catalogFile`: BAIKAL_CATALOG, which seeds an empty database (the shipped catalog when unset). */
  private readonly store: CatalogRepository;

  constructor(private readonly deps: { orm: MikroORM; catalogFile?: string; log: Logger; shared?: SharedState }) {
    this.store = new CatalogRepository(deps.orm);
  }

  /** The in-memory snapshot; no database access. */
  get snapshot(): Catalog {
    if (!this.current) throw new Error('catalog not loaded');
    return this.current;
  }

  /**
   * Another process committed a catalog edit: take its result without a database read, so the next
   * request here already bills at the new prices. Older or equal versions are ignored.
   */
  adopt(data: unknown, version: number): void {
    if (this.current && this.current.version >= version) return;
    this.current = new Catalog(parseCatalog(data, 'catalog from another process'), version);
    this.deps.log.info({ version }, 'catalog updated by another process');
  }

  /** Loads the stored catalog, seeding it from the catalog file when the database has none. */
  async load(): Promise<Catalog> {
    const stored = await this.store.current();
    if (stored) {
      this.current = new Catalog(parseCatalog(stored.data, 'stored catalog'), stored.version);
      // An operator who edits the file and restarts would otherwise wonder why nothing changed.
      if (this.deps.catalogFile) this.deps.log.info({ file: this.deps.catalogFile }, 'BAIKAL_CATALOG seeds an empty database only: the stored catalog is used; `npm run admin -- load-catalog` replaces it with the file');
    } else {
      await this.store.seed(await this.readCatalogFile());
      return this.load();
    }
    this.deps.log.info({ version: this.current.version, models: this.current.models.size }, 'catalog loaded');
    return this.current;
  }

  /** The catalog file (or the shipped one); what is wrong with the operator's file stops a start as one line (StartupError). */
  private async readCatalogFile(): Promise<CatalogData> {
    const path = this.deps.catalogFile;
    if (!path) return parseCatalog(defaultCatalog, 'shipped default catalog');
    let raw: unknown;
    try {
      raw = JSON.parse(await readFile(path, 'utf8'));
    } catch (error) {
      throw new StartupError(`BAIKAL_CATALOG: cannot read ${path}: ${(error as Error).message}`);
    }
    try {
      return parseCatalog(raw, path);
    } catch (error) {
      throw new StartupError(`BAIKAL_CATALOG: ${(error as Error).message}`);
    }
  }

  /** Replaces the stored catalog with the catalog file (operator CLI). */
  async reloadFromFile(): Promise<Catalog> {
    const data = await this.readCatalogFile();
    return this.edit(() => data);
  }

  publicCatalog(): CatalogView {
    const catalog = this.snapshot;
    const scopes = catalog.data.models.flatMap((model) =>
      Object.keys(model.groups)
        .filter((group) => catalog.groups.get(group)?.public)
        .map((group) => ({ family: model.family, group, plan: catalog.defaultPlan })),
    );
    return this.viewFor(scopes);
  }

  /** The models a set of key scopes can reach, priced at each key's plan. */
  viewFor(scopes: KeyScope[]): CatalogView {
    const catalog = this.snapshot;
    const unique = [...new Map(scopes.map((s) => [`${s.family}/${s.group}/${s.plan}`, s])).values()];
    const models: CatalogModelView[] = [];
    for (const model of catalog.data.models) {
      const groups: CatalogModelGroupView[] = [];
      for (const scope of unique) {
        if (!catalog.allows(scope, model)) continue;
        const price = catalog.priceOf(model.id, scope.group, scope.plan)!;
        groups.push({ id: scope.group, label: catalog.groups.get(scope.group)!.label, pricingPlan: catalog.publicPlanName(scope.plan), pricing: pricingView(price) });
      }
      if (groups.length === 0) continue;
      models.push({
        id: model.id,
        label: model.label,
        family: model.family,
        kind: model.kind,
        endpoints: [...model.endpoints],
        capabilities: { ...model.capabilities },
        contextWindow: model.contextWindow,
        maxOutputTokens: model.maxOutputTokens,
        groups,
        official: model.official ? pricingView(model.official) : null,
        video: model.video,
      });
    }
    const familyIds = new Set(models.map((m) => m.family));
    const groupIds = new Set(models.flatMap((m) => m.groups.map((g) => g.id)));
    return {
      version: catalog.version,
      families: catalog.data.families.filter((f) => familyIds.has(f.id)).map((f) => ({ id: f.id, label: f.label })),
      groups: catalog.data.groups.filter((g) => groupIds.has(g.id)).map((g) => ({ id: g.id, label: g.label })),
      models,
    };
  }

  // ---- admin edits: each validates the whole resulting catalog, bumps the version, and swaps the snapshot.

  async upsertModel(actor: Actor, raw: CatalogModelInput): Promise<CatalogModelView> {
    requireAdmin(actor);
    const model = parseInput(catalogModel, raw);
    await this.edit((data) => ({ ...data, models: [...data.models.filter((m) => m.id !== model.id), model] }));
    return this.modelView(model.id);
  }

  async removeModel(actor: Actor, modelId: string): Promise<boolean> {
    requireAdmin(actor);
    let found = false;
    await this.edit((data) => {
      found = data.models.some((m) => m.id === modelId);
      if (!found) throw new DomainError('not_found', `No model ${modelId}`);
      return { ...data, models: data.models.filter((m) => m.id !== modelId) };
    });
    return found;
  }

  async setModelPrices(actor: Actor, modelId: string, groupId: string, raw: unknown): Promise<CatalogModelView> {
    requireAdmin(actor);
    const prices = parseInput(groupPrices, raw);
    await this.edit((data) => {
      const model = data.models.find((m) => m.id === modelId);
      if (!model) throw new DomainError('not_found', `No model ${modelId}`);
      const updated = { ...model, groups: { ...model.groups, [groupId]: prices } };
      return { ...data, models: data.models.map((m) => (m.id === modelId ? updated : m)) };
    });
    return this.modelView(modelId);
  }

  async upsertPlan(actor: Actor, raw: PricingPlanInput): Promise<PricingPlanView> {
    requireAdmin(actor);
    const plan = parseInput(pricingPlan, raw);
    await this.edit((data) => ({ ...data, plans: [...data.plans.filter((p) => p.id !== plan.id), plan] }));
    return planView(plan);
  }

  /** Admin: every pricing plan, the default first, then by id. */
  plans(actor: Actor): PricingPlanView[] {
    requireAdmin(actor);
    const { plans, defaultPlan } = this.snapshot;
    return [...plans.values()].sort((a, b) => Number(b.id === defaultPlan) - Number(a.id === defaultPlan) || a.id.localeCompare(b.id)).map(planView);
  }

  private modelView(modelId: string): CatalogModelView {
    const model = this.snapshot.models.get(modelId)!;
    const scopes = Object.keys(model.groups).map((group) => ({ family: model.family, group, plan: this.snapshot.defaultPlan }));
    return this.viewFor(scopes).models.find((m) => m.id === modelId)!;
  }

  private async edit(change: (data: CatalogData) => CatalogData): Promise<Catalog> {
    const next = await this.store.edit((row) => {
      const data = change(parseCatalog(row.data, 'stored catalog'));
      const checked = catalogFile.safeParse(data);
      if (!checked.success) {
        throw new DomainError('validation_failed', 'The catalog change is not valid', {
          issues: checked.error.issues.map((issue) => ({ loc: issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p)), msg: issue.message, type: 'value_error' })),
        });
      }
      return new Catalog(checked.data, row.version + 1);
    });
    this.current = next;
    this.deps.log.info({ version: next.version }, 'catalog updated');
    await this.deps.shared?.publish({ type: 'catalog-changed', version: next.version, data: next.data });
    return next;
  }
}

function parseCatalog(raw: unknown, source: string): CatalogData {
  const parsed = catalogFile.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.slice(0, 10).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  throw new Error(`Invalid catalog (${source}): ${problems.join('; ')}`);
}

/** A plan as the admin sees it (its per-model overrides included). */
export interface PricingPlanView {
  id: string;
  label: string;
  public: boolean;
  multiplier: string;
  overrides: Record<string, unknown>;
}

function planView(plan: PricingPlan): PricingPlanView {
  return { id: plan.id, label: plan.label, public: plan.public, multiplier: plan.multiplier, overrides: plan.overrides };
}
