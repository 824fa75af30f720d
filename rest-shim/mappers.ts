import type { AccountSummaryView, AccountView, TransactionView } from '../src/accounts/accounts.service.js';

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
