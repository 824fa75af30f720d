import type { Decimal } from 'decimal.js';
import type { CheckoutEvent } from '../payments.schemas.js';

/** What a payment provider decides about an incoming webhook before anything is looked up or credited. */
export type WebhookCheck = { ok: true; event: CheckoutEvent } | { ok: false; outcome: string; detail?: Record<string, unknown> };

/**
 * A way money comes in (DESIGN.md Payments). The service owns invoices, agreements, bonuses and the
 * credit (once, with the invoice's move to `paid`); a provider says only what differs between ways to pay.
 */
export interface PaymentProvider {
  /** The `provider` of a configured payment method, stored on its invoices and events. */
  readonly id: 'manual' | 'checkout';
  /** Where the payer goes to pay a new invoice, or null when an admin confirms it by hand. */
  paymentUrl(invoice: { id: string; amount: Decimal; currency: string }): string | null;
  /** Authenticates and parses a webhook (providers without webhooks refuse every one). */
  checkWebhook(rawBody: Buffer, signatureHeader: string | undefined, now: Date): WebhookCheck;
}
