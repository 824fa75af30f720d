import { z } from 'zod';
import { usdAmount } from '../shared/validation.js';
import { intParam } from '../shared/validation.js';

export const PAYMENT_LANGUAGES = ['ru', 'en'] as const;
export type PaymentLanguage = (typeof PAYMENT_LANGUAGES)[number];

const language = z.enum(PAYMENT_LANGUAGES, "Input should be 'ru' or 'en'");

/** GET /payments/config query; other query parameters are ignored, as everywhere in the shim. */
export const paymentConfigInput = z.object({ language: language.optional().transform((v) => v ?? 'ru') });
export type PaymentConfigInput = z.input<typeof paymentConfigInput>;

export const acceptAgreementInput = z.strictObject({
  language: language.optional().transform((v) => v ?? 'ru'),
  /** Where the user accepted (cabinet, bot, ...): a short free label. */
  surface: z
    .string()
    .trim()
    .regex(/^[a-z0-9_-]{1,32}$/, 'Input should be a short lowercase label such as cabinet')
    .optional()
    .transform((v) => v ?? 'cabinet'),
});
export type AcceptAgreementInput = z.input<typeof acceptAgreementInput>;

/** SPEC.md Invoice creation request. Amounts are whole cents (a payment cannot carry fractions of a cent). */
export const createInvoiceInput = z.strictObject({
  // `missing` is reported for an absent amount (a bare union would say `union_error`).
  amountUsd: z.custom<unknown>((value) => value !== undefined, { message: 'Field required', params: { type: 'missing' } }).pipe(usdAmount).superRefine((value, ctx) => {
    if (value.startsWith('-') || Number(value) <= 0) ctx.addIssue({ code: 'custom', message: 'Input should be greater than 0', params: { type: 'greater_than' } });
    else if (/\.\d{3,}$/.test(value)) ctx.addIssue({ code: 'custom', message: 'Input should have at most 2 decimal places', params: { type: 'decimal_max_places' } });
  }),
  method: z.string().min(1, 'Field required').max(64),
});
export type CreateInvoiceInput = z.input<typeof createInvoiceInput>;

export const listInvoicesInput = z.object({ limit: intParam(1, 100, 25) });
export type ListInvoicesInput = z.input<typeof listInvoicesInput>;

export const adminInvoicesInput = z.strictObject({
  status: z.enum(['pending', 'paid', 'expired', 'failed']).optional(),
  limit: intParam(1, 200, 50),
});
/** Raw, as a transport passes it: the schema says which statuses exist. */
export type AdminInvoicesInput = { status?: string; limit?: number };

export const invoiceIdInput = z.strictObject({ invoiceId: z.uuid('Input should be a valid UUID') });

export const markInvoicePaidInput = z.strictObject({
  invoiceId: z.uuid('Input should be a valid UUID'),
  reference: z.string().trim().min(1).max(200).optional(),
});

/** The hosted checkout's webhook body. */
export const checkoutEvent = z.object({
  id: z.string().min(1).max(200),
  type: z.enum(['invoice.paid', 'invoice.failed']),
  invoice_id: z.string().min(1).max(100),
  amount: z.union([z.string(), z.number()]).transform((v) => String(v).trim()).pipe(z.string().regex(/^\d{1,18}(\.\d{1,10})?$/)),
  currency: z.string().min(1).max(8),
  created: z.union([z.number(), z.string()]).optional(),
});
export type CheckoutEvent = z.output<typeof checkoutEvent>;
