import { z } from 'zod';
import { usdAmount } from '../shared/validation.js';

export const adjustBalanceInput = z.strictObject({
  userId: z.uuid('Input should be a valid UUID'),
  amountUsd: usdAmount.refine((v) => Number(v) !== 0, 'The adjustment must not be zero'),
  reason: z.string().trim().min(3, 'Give a reason of at least 3 characters').max(500),
  /** Makes a retried adjustment apply once. */
  idempotencyKey: z.string().min(8).max(200).optional(),
});
export type AdjustBalanceInput = z.input<typeof adjustBalanceInput>;

const FIRST_YEAR_1 = Date.parse('0001-01-01T00:00:00Z');
const FIRST_YEAR_10000 = Date.parse('+010000-01-01T00:00:00Z');

export const trustedPartnerInput = z.strictObject({
  userId: z.uuid('Input should be a valid UUID'),
  // Years 1 to 9999, which PostgreSQL stores: JavaScript also holds dates up to year 275760, which it refuses.
  validUntil: z.coerce.date().refine((d) => d.getTime() >= FIRST_YEAR_1 && d.getTime() < FIRST_YEAR_10000, 'The date must be between the years 1 and 9999'),
  creditLimitUsd: usdAmount.refine((v) => !v.startsWith('-'), 'The credit limit must not be negative'),
});
export type TrustedPartnerInput = z.input<typeof trustedPartnerInput>;

export const userIdInput = z.strictObject({ userId: z.uuid('Input should be a valid UUID') });
