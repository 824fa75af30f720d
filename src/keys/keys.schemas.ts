import { z } from 'zod';
import { usdAmount } from '../shared/validation.js';

/** SPEC.md Key creation request; catalog rules (known family, public group of it, public plan) are checked by the service. */
export const createKeyInput = z.strictObject({
  label: z.string().trim().max(128, 'Label must be at most 128 characters').nullable().optional(),
  providerFamily: z.string().min(1).optional(),
  routeGroup: z.string().min(1).optional(),
  pricingPlan: z.string().min(1).optional(),
  monthlySpendCap: usdAmount.refine((v) => !v.startsWith('-'), 'The spend cap must not be negative').nullable().optional(),
});
export type CreateKeyInput = z.input<typeof createKeyInput>;

export const keyIdInput = z.strictObject({ keyId: z.uuid('Input should be a valid UUID') });

export const keyLimitsInput = z.strictObject({
  keyId: z.uuid('Input should be a valid UUID'),
  /** Requests per minute; null restores the baseline (SPEC.md section 8). */
  rpmLimit: z.number().int().min(1).max(100_000).nullable().optional(),
  concurrencyLimit: z.number().int().min(1).max(1_000).nullable().optional(),
  monthlySpendCap: usdAmount.refine((v) => !v.startsWith('-'), 'The spend cap must not be negative').nullable().optional(),
});
export type KeyLimitsInput = z.input<typeof keyLimitsInput>;

export const accountLimitsInput = z.strictObject({
  userId: z.uuid('Input should be a valid UUID'),
  /** Requests in flight across the account's keys; null restores ACCOUNT_CONCURRENCY_LIMIT. */
  concurrencyLimit: z.number().int().min(1).max(100_000).nullable(),
});
export type AccountLimitsInput = z.input<typeof accountLimitsInput>;
