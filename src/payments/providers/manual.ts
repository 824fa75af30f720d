import type { PaymentProvider } from './provider.js';

/** An administrator marks the invoice paid (after a bank transfer, say): no payment page, no webhook. */
export const manualProvider: PaymentProvider = {
  id: 'manual',
  paymentUrl: () => null,
  checkWebhook: () => ({ ok: false, outcome: 'not_configured' }),
};
