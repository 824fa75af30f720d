/**
 * Ledger row kinds. Spending kinds are shown as usage; `topup` is money paid in. Others: `bonus`
 * (bonus credit), `adjustment` (admin, with a reason), `bonus_expiry`, `refund`.
 */
export const USAGE_KINDS = ['usage', 'video'] as const;
export const TOPUP_KINDS = ['topup'] as const;
export type UsageKind = (typeof USAGE_KINDS)[number];

/**
 * The idempotency-key prefix of a usage batch's debit: one ledger row covering the billed usage events of
 * one account, key and month in one batch (src/usage/usage-recorder.ts). Users see those events in its place.
 */
export const USAGE_BATCH_KEY_PREFIX = 'usage-batch:';
