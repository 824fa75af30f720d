/**
 * Ledger row kinds. Spending kinds are shown as usage; `topup` is money paid in. Others: `bonus`
 * (bonus credit), `adjustment` (admin, with a reason), `bonus_expiry`, `refund`.
 */
export const USAGE_KINDS = ['usage', 'video'] as const;
export const TOPUP_KINDS = ['topup'] as const;
export type UsageKind = (typeof USAGE_KINDS)[number];
