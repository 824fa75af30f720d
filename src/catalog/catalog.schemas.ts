import { z } from 'zod';

/** A decimal amount written as a string (or a number in hand-written files), never stored as a float. */
export const decimalString = z
  .union([z.string(), z.number()])
  .transform((value) => (typeof value === 'number' ? String(value) : value.trim()))
  .pipe(z.string().regex(/^\d{1,12}(\.\d{1,12})?$/, 'must be a non-negative decimal number'));

/** Token prices in USD per 1M tokens; a bucket without its own price is billed at the input price. */
export const tokenPrices = z.strictObject({
  input: decimalString,
  output: decimalString,
  cacheRead: decimalString.nullable().default(null),
  cacheWrite: decimalString.nullable().default(null),
});

/** Prices of one model in one route group: tokens, or per generation (images), or per second (video). */
export const groupPrices = z.union([
  z.strictObject({ tokens: tokenPrices }),
  z.strictObject({ perGeneration: decimalString }),
  z.strictObject({ perSecond: decimalString }),
]);

export const ENDPOINTS = [
  '/v1/chat/completions',
  '/v1/responses',
  '/v1/messages',
  '/v1/images/generations',
  '/v1/videos',
  '/v1/bridge/chat/completions',
  '/v1/bridge/responses',
] as const;
export type Endpoint = (typeof ENDPOINTS)[number];

const idSchema = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'ids are 1-64 lowercase letters, digits, ".", "_" or "-"');

/** Video generation rules (SPEC.md 4.8); enforced by the video capability. */
export const videoSpec = z.strictObject({
  modes: z.array(z.string()).min(1),
  seconds: z.strictObject({ min: z.number().int().positive(), max: z.number().int().positive(), default: z.number().int().positive().optional() }),
  resolutions: z.array(z.string()).min(1),
  ratios: z.array(z.string()).min(1),
  audio: z.enum(['native', 'silent', 'reference']),
  references: z.strictObject({
    images: z.number().int().min(0),
    videos: z.number().int().min(0).default(0),
    audio: z.number().int().min(0).default(0),
    roles: z.array(z.enum(['first_frame', 'last_frame', 'reference'])).default([]),
  }),
  promptExtend: z.boolean().default(false),
});

export const catalogModel = z.strictObject({
  id: idSchema,
  label: z.string().min(1).max(128),
  family: idSchema,
  kind: z.enum(['text', 'image', 'video']),
  endpoints: z.array(z.enum(ENDPOINTS)).min(1),
  capabilities: z
    .strictObject({ tools: z.boolean().default(false), vision: z.boolean().default(false), streaming: z.boolean().default(false) })
    .prefault({}),
  contextWindow: z.number().int().positive().nullable().default(null),
  maxOutputTokens: z.number().int().positive().nullable().default(null),
  /** Public prices per route group the model is offered in. */
  groups: z.record(idSchema, groupPrices).refine((groups) => Object.keys(groups).length > 0, 'a model must be offered in at least one group'),
  /** The vendor's own list prices, for the savings figures users see. */
  official: groupPrices.nullable().default(null),
  video: videoSpec.nullable().default(null),
});

export const pricingPlan = z.strictObject({
  id: idSchema,
  label: z.string().min(1).max(128),
  /** Non-public plans are assigned by operators and shown to users as `custom`. */
  public: z.boolean(),
  /** Applied to every public price; per-model overrides win. */
  multiplier: decimalString.default('1'),
  overrides: z.record(z.string(), groupPrices).default({}),
});

export const catalogFile = z
  .strictObject({
    families: z.array(z.strictObject({ id: idSchema, label: z.string().min(1) })).min(1),
    groups: z.array(z.strictObject({ id: idSchema, label: z.string().min(1), public: z.boolean().default(true) })).min(1),
    plans: z.array(pricingPlan).min(1),
    defaultPlan: idSchema,
    models: z.array(catalogModel),
  })
  .superRefine((catalog, ctx) => {
    const families = new Set(catalog.families.map((f) => f.id));
    const groups = new Set(catalog.groups.map((g) => g.id));
    const seen = new Set<string>();
    catalog.models.forEach((model, index) => {
      if (seen.has(model.id)) ctx.addIssue({ code: 'custom', path: ['models', index, 'id'], message: `duplicate model id ${model.id}` });
      seen.add(model.id);
      if (!families.has(model.family)) ctx.addIssue({ code: 'custom', path: ['models', index, 'family'], message: `unknown family ${model.family}` });
      for (const group of Object.keys(model.groups)) {
        if (!groups.has(group)) ctx.addIssue({ code: 'custom', path: ['models', index, 'groups', group], message: `unknown group ${group}` });
      }
    });
    const plan = catalog.plans.find((p) => p.id === catalog.defaultPlan);
    if (!plan?.public) ctx.addIssue({ code: 'custom', path: ['defaultPlan'], message: 'the default plan must be a public plan' });
  });

export type TokenPrices = z.output<typeof tokenPrices>;
export type GroupPrices = z.output<typeof groupPrices>;
export type CatalogModel = z.output<typeof catalogModel>;
export type PricingPlan = z.output<typeof pricingPlan>;
export type CatalogData = z.output<typeof catalogFile>;
export type CatalogModelInput = z.input<typeof catalogModel>;
export type PricingPlanInput = z.input<typeof pricingPlan>;
