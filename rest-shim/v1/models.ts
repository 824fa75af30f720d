import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import type { Catalog } from '../../src/catalog/catalog.js';
import { pricingView } from '../../src/catalog/catalog.service.js';
import type { CatalogModel, GroupPrices } from '../../src/catalog/catalog.schemas.js';
import type { KeyPrincipal } from '../../src/keys/keys.service.js';
import { DomainError } from '../../src/shared/errors.js';
import { decimal } from '../answer-fields.js';
import { headerOf } from './auth.js';

/** A fixed creation time for catalog models (both list shapes require one). */
export const CATALOG_EPOCH_SECONDS = 1_767_225_600; // 2026-01-01T00:00:00Z
const CATALOG_EPOCH_ISO = new Date(CATALOG_EPOCH_SECONDS * 1000).toISOString();

/**
 * Anthropic-style callers (their SDK, Claude Code) always send `anthropic-version`; OpenAI-style
 * clients never do. The header alone picks the model shape and the error shape on /v1/models, so an
 * Anthropic client authenticating with a Bearer token gets its own shapes too.
 */
export function wantsAnthropicShape(req: IncomingMessage): boolean {
  return headerOf(req, 'anthropic-version') !== undefined;
}

/**
 * The models a caller may see: every model offered in a public group, plus those the presented key's
 * own (possibly private) group offers it. `only` narrows the list (the bridge's models).
 */
export function visibleModels(catalog: Catalog, key: KeyPrincipal | null, only?: (model: CatalogModel) => boolean): CatalogModel[] {
  return catalog.data.models.filter((model) => (only === undefined || only(model)) && visibleGroups(catalog, model, key).length > 0);
}

/**
 * The groups of a model a caller is shown, in catalog order: the public ones, and the key's own group
 * when the key may call the model there. Any other private group stays hidden.
 */
function visibleGroups(catalog: Catalog, model: CatalogModel, key: KeyPrincipal | null): string[] {
  const scope = key ? { family: key.providerFamily, group: key.routeGroup } : null;
  return catalog.data.groups
    .filter((group) => model.groups[group.id] !== undefined && (group.public || (scope !== null && group.id === scope.group && catalog.allows(scope, model))))
    .map((group) => group.id);
}

const groupPricingAnswer = z.union([
  z.object({ input_usd_per_1m: decimal, output_usd_per_1m: decimal, cache_read_usd_per_1m: decimal.nullable(), cache_write_usd_per_1m: decimal.nullable() }),
  z.object({ usd_per_generation: decimal }),
  z.object({ usd_per_second: decimal }),
]);

/**
 * One group's price as decimal strings: tokens in USD per 1M (a null cache price means that bucket is
 * billed at the input price), or USD per generation, or USD per second of video.
 */
function pricingJson(prices: GroupPrices): z.infer<typeof groupPricingAnswer> {
  const view = pricingView(prices);
  // pricingView fills exactly the prices of the kind it was given.
  if ('tokens' in prices) {
    return {
      input_usd_per_1m: view.inputUsdPer1m!,
      output_usd_per_1m: view.outputUsdPer1m!,
      cache_read_usd_per_1m: view.cacheReadUsdPer1m,
      cache_write_usd_per_1m: view.cacheWriteUsdPer1m,
    };
  }
  if ('perGeneration' in prices) return { usd_per_generation: view.usdPerGeneration! };
  return { usd_per_second: view.usdPerSecond! };
}

const catalogFieldsAnswer = {
  family: z.string(),
  kind: z.enum(['text', 'image', 'video']),
  endpoints: z.array(z.string()),
  context_window: z.int().nullable(),
  max_output_tokens: z.int().nullable(),
  groups: z.array(z.string()),
  pricing_plan: z.string(),
  pricing: z.record(z.string(), groupPricingAnswer).describe('Each shown group’s price on the key’s plan (the public plan without a key)'),
};

/**
 * What both list shapes add to a model (SPEC.md 4.6: "public models with groups and public prices"):
 * its family, kind, endpoints and limits, the groups the caller is shown, and each group's price on the
 * key's pricing plan (the default public plan without a key). Never an upstream or its model name.
 */
function catalogFields(catalog: Catalog, model: CatalogModel, key: KeyPrincipal | null): z.infer<z.ZodObject<typeof catalogFieldsAnswer>> {
  const plan = key?.pricingPlan ?? catalog.defaultPlan;
  const groups = visibleGroups(catalog, model, key);
  return {
    family: model.family,
    kind: model.kind,
    endpoints: [...model.endpoints],
    context_window: model.contextWindow,
    max_output_tokens: model.maxOutputTokens,
    groups,
    pricing_plan: catalog.publicPlanName(plan),
    pricing: Object.fromEntries(groups.map((group) => [group, pricingJson(catalog.priceOf(model.id, group, plan)!)])),
  };
}

export const openAiModelAnswer = z
  .object({ id: z.string(), object: z.literal('model'), created: z.int(), owned_by: z.string(), ...catalogFieldsAnswer })
  .meta({ id: 'Model', description: 'OpenAI’s model object plus the catalog fields: family, kind, endpoints, limits, groups and prices.' });

/** OpenAI's model object (`id, object, created, owned_by`) plus the catalog fields. */
export function openAiModel(catalog: Catalog, model: CatalogModel, key: KeyPrincipal | null): z.infer<typeof openAiModelAnswer> {
  return { id: model.id, object: 'model', created: CATALOG_EPOCH_SECONDS, owned_by: 'baikal', ...catalogFields(catalog, model, key) };
}

export const anthropicModelAnswer = z
  .object({
    type: z.literal('model'),
    id: z.string(),
    display_name: z.string(),
    created_at: z.iso.datetime(),
    max_input_tokens: z.int().nullable(),
    max_tokens: z.int().nullable(),
    ...catalogFieldsAnswer,
  })
  .meta({ id: 'AnthropicModel', description: 'Anthropic’s model object (asked with anthropic-version) plus the catalog fields.' });

/** Anthropic's model object (`type, id, display_name, created_at`, token limits) plus the catalog fields. */
export function anthropicModel(catalog: Catalog, model: CatalogModel, key: KeyPrincipal | null): z.infer<typeof anthropicModelAnswer> {
  return {
    type: 'model',
    id: model.id,
    display_name: model.label,
    created_at: CATALOG_EPOCH_ISO,
    max_input_tokens: model.contextWindow,
    max_tokens: model.maxOutputTokens,
    ...catalogFields(catalog, model, key),
  };
}

export const openAiModelListAnswer = z.object({ object: z.literal('list'), data: z.array(openAiModelAnswer) }).meta({ id: 'ModelList' });

export const anthropicModelListAnswer = z
  .object({ data: z.array(anthropicModelAnswer), has_more: z.boolean(), first_id: z.string().nullable(), last_id: z.string().nullable() })
  .meta({ id: 'AnthropicModelList', description: 'Anthropic’s paginated list (limit, after_id, before_id).' });

/** Anthropic's list defaults: 20 per page, at most 1000. */
const ANTHROPIC_PAGE = { default: 20, max: 1000 };

/**
 * Anthropic's paginated list (`limit`, `after_id`, `before_id`; `has_more`, `first_id`, `last_id`),
 * so its SDK's auto-pagination walks the whole catalog. An unknown cursor id is a 400, as a cursor
 * that points nowhere cannot be honoured.
 */
export function anthropicList(catalog: Catalog, models: CatalogModel[], key: KeyPrincipal | null, query: Record<string, unknown>): z.infer<typeof anthropicModelListAnswer> {
  const text = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : undefined);
  const rawLimit = text('limit');
  const limit = rawLimit === undefined ? ANTHROPIC_PAGE.default : /^\d{1,4}$/.test(rawLimit) ? Number(rawLimit) : NaN;
  if (!Number.isInteger(limit) || limit < 1 || limit > ANTHROPIC_PAGE.max) {
    throw new DomainError('validation_failed', 'Request validation failed', { issues: [{ loc: ['query', 'limit'], msg: `Input should be an integer from 1 to ${ANTHROPIC_PAGE.max}`, type: 'int_parsing' }] });
  }
  const cursor = (name: 'after_id' | 'before_id') => {
    const id = text(name);
    if (id === undefined) return undefined;
    const index = models.findIndex((m) => m.id === id);
    if (index < 0) throw new DomainError('bad_request', `${name} ${JSON.stringify(id)} is not a model in this list`, { reason: 'invalid_cursor' });
    return index;
  };
  const after = cursor('after_id');
  const before = cursor('before_id');
  let page: CatalogModel[];
  let hasMore: boolean;
  if (before !== undefined) {
    // Paging backwards: the `limit` models just before the cursor; more remain if any precede them.
    const start = Math.max(0, before - limit);
    page = models.slice(start, before);
    hasMore = start > 0;
  } else {
    const start = after === undefined ? 0 : after + 1;
    page = models.slice(start, start + limit);
    hasMore = start + limit < models.length;
  }
  const data = page.map((model) => anthropicModel(catalog, model, key));
  return { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}
