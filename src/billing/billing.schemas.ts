import { z } from 'zod';

/** A USD amount from a client: a JSON number or a decimal string (SPEC.md), never exponent notation. */
export const usdAmount = z
  .union([z.number(), z.string()])
  .superRefine((value, ctx) => {
    const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : 'NaN') : value.trim();
    if (!/^-?\d{1,12}(\.\d{1,10})?$/.test(text)) {
      ctx.addIssue({ code: 'custom', message: 'Input should be a decimal number with at most 12 integer and 10 fractional digits', params: { type: 'decimal_parsing' } });
    }
  })
  .transform((value) => (typeof value === 'number' ? String(value) : value.trim()));

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
