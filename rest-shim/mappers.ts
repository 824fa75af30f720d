import type { AccountView } from '../src/accounts/account-view.js';
import type { AccountSummaryView, TransactionView } from '../src/accounts/accounts.service.js';
import type { MessengerLinkStatusView, MessengerLinksView } from '../src/accounts/identity.service.js';
import type { CatalogModelView, CatalogView, PricingView } from '../src/catalog/catalog.service.js';
import type { CreatedKeyView, KeyView } from '../src/keys/keys.service.js';

/** Service views -> SPEC.md section 2 JSON shapes (snake_case, decimals as strings, ISO timestamps). */

export function accountJson(view: AccountView) {
  return {
    user_id: view.userId,
    username: view.username,
    email: view.email,
    email_verified: view.emailVerified,
    balance_usd: view.balanceUsd,
    is_admin: view.isAdmin,
  };
}

export function accountSummaryJson(view: AccountSummaryView) {
  return {
    user_id: view.userId,
    email: view.email,
    balance_usd: view.balanceUsd,
    active_keys: view.activeKeys,
    usage_usd: view.usageUsd,
    topup_usd: view.topupUsd,
  };
}

export function transactionJson(view: TransactionView) {
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

export function keyJson(view: KeyView) {
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

export function createdKeyJson(view: CreatedKeyView) {
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

function pricingJson(view: PricingView) {
  return {
    input_usd_per_1m: view.inputUsdPer1m,
    output_usd_per_1m: view.outputUsdPer1m,
    cache_read_usd_per_1m: view.cacheReadUsdPer1m,
    cache_write_usd_per_1m: view.cacheWriteUsdPer1m,
    usd_per_generation: view.usdPerGeneration,
    usd_per_second: view.usdPerSecond,
  };
}

function videoJson(video: CatalogModelView['video']) {
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

/** The public catalog (an open object in SPEC.md): models with their groups and public prices per 1M tokens. */
export function catalogJson(view: CatalogView) {
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

/** SPEC.md "Messenger link (account)". */
export function messengerLinksJson(view: MessengerLinksView) {
  return {
    linked: view.linked,
    messenger_label: view.messengerLabel,
    has_password: view.hasPassword,
    email: view.email,
    email_verified: view.emailVerified,
  };
}

/** SPEC.md "Messenger link status". */
export function messengerLinkStatusJson(view: MessengerLinkStatusView) {
  return {
    ...messengerLinksJson(view),
    status: view.status,
    expires_at: view.expiresAt?.toISOString() ?? null,
    initiated_by: view.initiatedBy,
    error_code: view.errorCode,
    bot_url: view.botUrl,
  };
}
