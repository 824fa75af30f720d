import { z } from 'zod';
import type { AccountView } from '../src/accounts/account-view.js';
import type { AccountSummaryView, TransactionView } from '../src/accounts/accounts.service.js';
import type { MessengerLinkStatusView, MessengerLinksView } from '../src/accounts/identity.service.js';
import { videoSpec } from '../src/catalog/catalog.schemas.js';
import type { CatalogModelView, CatalogView, PricingView } from '../src/catalog/catalog.service.js';
import type { CreatedKeyView, KeyView } from '../src/keys/keys.service.js';
import { decimal, timestamp } from './answer-fields.js';

/**
 * Service views -> SPEC.md section 2 JSON shapes (snake_case, decimals as strings, ISO timestamps).
 * Each mapper returns its answer schema's type, so the interface description cannot drift from it.
 */

export const accountAnswer = z
  .object({
    user_id: z.string(),
    username: z.string().nullable(),
    email: z.string().nullable(),
    email_verified: z.boolean(),
    balance_usd: decimal,
    is_admin: z.boolean(),
  })
  .meta({ id: 'Account', description: 'SPEC.md Account (register, login, me, verify-email).' });

export function accountJson(view: AccountView): z.infer<typeof accountAnswer> {
  return {
    user_id: view.userId,
    username: view.username,
    email: view.email,
    email_verified: view.emailVerified,
    balance_usd: view.balanceUsd,
    is_admin: view.isAdmin,
  };
}

export const accountSummaryAnswer = z
  .object({ user_id: z.string(), email: z.string().nullable(), balance_usd: decimal, active_keys: z.int(), usage_usd: decimal, topup_usd: decimal })
  .meta({ id: 'AccountSummary', description: 'SPEC.md Account summary.' });

export function accountSummaryJson(view: AccountSummaryView): z.infer<typeof accountSummaryAnswer> {
  return {
    user_id: view.userId,
    email: view.email,
    balance_usd: view.balanceUsd,
    active_keys: view.activeKeys,
    usage_usd: view.usageUsd,
    topup_usd: view.topupUsd,
  };
}

export const transactionAnswer = z
  .object({
    id: z.string(),
    user_id: z.string(),
    amount_usd: decimal,
    kind: z.string(),
    api_key_id: z.string().nullable(),
    provider: z.string().nullable(),
    model: z.string().nullable(),
    prompt_tokens: z.int().nullable(),
    completion_tokens: z.int().nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'Transaction', description: 'SPEC.md Transaction: one ledger row of the account.' });

export function transactionJson(view: TransactionView): z.infer<typeof transactionAnswer> {
  return {
    id: view.id,
    user_id: view.userId,
    amount_usd: view.amountUsd,
    kind: view.kind,
    api_key_id: view.apiKeyId,
    provider: view.provider,
    model: view.model,
    prompt_tokens: view.promptTokens,
    completion_tokens: view.completionTokens,
    created_at: view.createdAt.toISOString(),
  };
}

const keyFields = {
  id: z.string(),
  label: z.string().nullable(),
  provider_family: z.string(),
  route_group: z.string(),
  pricing_plan: z.string(),
  monthly_spend_cap: decimal.nullable(),
  created_at: timestamp,
};

export const keyAnswer = z.object({ ...keyFields, last_used: timestamp.nullable() }).meta({ id: 'Key', description: 'SPEC.md Key (list item).' });

export function keyJson(view: KeyView): z.infer<typeof keyAnswer> {
  return {
    id: view.id,
    label: view.label,
    provider_family: view.providerFamily,
    route_group: view.routeGroup,
    pricing_plan: view.pricingPlan,
    monthly_spend_cap: view.monthlySpendCap,
    last_used: view.lastUsed?.toISOString() ?? null,
    created_at: view.createdAt.toISOString(),
  };
}

export const createdKeyAnswer = z
  .object({ ...keyFields, key: z.string().describe('The raw key: shown once, never again') })
  .meta({ id: 'KeyCreated', description: 'SPEC.md Key created: the raw key in place of last_used.' });

export function createdKeyJson(view: CreatedKeyView): z.infer<typeof createdKeyAnswer> {
  return {
    id: view.id,
    key: view.key,
    label: view.label,
    provider_family: view.providerFamily,
    route_group: view.routeGroup,
    pricing_plan: view.pricingPlan,
    monthly_spend_cap: view.monthlySpendCap,
    created_at: view.createdAt.toISOString(),
  };
}

const pricingAnswer = z
  .object({
    input_usd_per_1m: decimal.nullable(),
    output_usd_per_1m: decimal.nullable(),
    cache_read_usd_per_1m: decimal.nullable(),
    cache_write_usd_per_1m: decimal.nullable(),
    usd_per_generation: decimal.nullable(),
    usd_per_second: decimal.nullable(),
  })
  .meta({ id: 'Pricing', description: 'Public prices: tokens in USD per 1M, or USD per generation, or per second of video.' });

function pricingJson(view: PricingView): z.infer<typeof pricingAnswer> {
  return {
    input_usd_per_1m: view.inputUsdPer1m,
    output_usd_per_1m: view.outputUsdPer1m,
    cache_read_usd_per_1m: view.cacheReadUsdPer1m,
    cache_write_usd_per_1m: view.cacheWriteUsdPer1m,
    usd_per_generation: view.usdPerGeneration,
    usd_per_second: view.usdPerSecond,
  };
}

/** A video model's parameters: the catalog's own field schemas, under SPEC names. */
const videoAnswer = z.object({
  modes: videoSpec.shape.modes,
  seconds: videoSpec.shape.seconds,
  resolutions: videoSpec.shape.resolutions,
  aspect_ratios: videoSpec.shape.ratios,
  audio: videoSpec.shape.audio,
  references: videoSpec.shape.references,
  prompt_extend: videoSpec.shape.promptExtend,
});

function videoJson(video: CatalogModelView['video']): z.infer<typeof videoAnswer> | null {
  if (!video) return null;
  return {
    modes: video.modes,
    seconds: video.seconds,
    resolutions: video.resolutions,
    aspect_ratios: video.ratios,
    audio: video.audio,
    references: video.references,
    prompt_extend: video.promptExtend,
  };
}

const namedAnswer = z.object({ id: z.string(), label: z.string() });

export const catalogAnswer = z
  .object({
    object: z.literal('list'),
    version: z.int(),
    families: z.array(namedAnswer),
    groups: z.array(namedAnswer),
    data: z.array(
      z.object({
        id: z.string(),
        object: z.literal('model'),
        label: z.string(),
        provider_family: z.string(),
        kind: z.enum(['text', 'image', 'video']),
        endpoints: z.array(z.string()),
        capabilities: z.object({ tools: z.boolean(), vision: z.boolean(), streaming: z.boolean() }),
        context_window: z.int().nullable(),
        max_output_tokens: z.int().nullable(),
        groups: z.array(z.object({ id: z.string(), label: z.string(), pricing_plan: z.string(), pricing: pricingAnswer })),
        official_pricing: pricingAnswer.nullable(),
        video: videoAnswer.nullable(),
      }),
    ),
  })
  .meta({ id: 'Catalog', description: 'The public catalog (an open object in SPEC.md): models with their groups and public prices per 1M tokens.' });

/** The public catalog (an open object in SPEC.md): models with their groups and public prices per 1M tokens. */
export function catalogJson(view: CatalogView): z.infer<typeof catalogAnswer> {
  return {
    object: 'list',
    version: view.version,
    families: view.families,
    groups: view.groups,
    data: view.models.map((model) => ({
      id: model.id,
      object: 'model',
      label: model.label,
      provider_family: model.family,
      kind: model.kind,
      endpoints: model.endpoints,
      capabilities: model.capabilities,
      context_window: model.contextWindow,
      max_output_tokens: model.maxOutputTokens,
      groups: model.groups.map((group) => ({ id: group.id, label: group.label, pricing_plan: group.pricingPlan, pricing: pricingJson(group.pricing) })),
      official_pricing: model.official ? pricingJson(model.official) : null,
      video: videoJson(model.video),
    })),
  };
}

const messengerLinksFields = {
  linked: z.boolean(),
  messenger_label: z.string().nullable(),
  has_password: z.boolean(),
  email: z.string().nullable(),
  email_verified: z.boolean(),
};

export const messengerLinksAnswer = z.object(messengerLinksFields).meta({ id: 'MessengerLinks', description: 'SPEC.md Messenger link (account).' });

/** SPEC.md "Messenger link (account)". */
export function messengerLinksJson(view: MessengerLinksView): z.infer<typeof messengerLinksAnswer> {
  return {
    linked: view.linked,
    messenger_label: view.messengerLabel,
    has_password: view.hasPassword,
    email: view.email,
    email_verified: view.emailVerified,
  };
}

export const messengerLinkStatusAnswer = z
  .object({
    ...messengerLinksFields,
    status: z.string().nullable(),
    expires_at: timestamp.nullable(),
    initiated_by: z.string().nullable(),
    error_code: z.string().nullable(),
    bot_url: z.string().nullable(),
  })
  .meta({ id: 'MessengerLinkStatus', description: 'SPEC.md Messenger link status.' });

/** SPEC.md "Messenger link status". */
export function messengerLinkStatusJson(view: MessengerLinkStatusView): z.infer<typeof messengerLinkStatusAnswer> {
  return {
    ...messengerLinksJson(view),
    status: view.status,
    expires_at: view.expiresAt?.toISOString() ?? null,
    initiated_by: view.initiatedBy,
    error_code: view.errorCode,
    bot_url: view.botUrl,
  };
}
