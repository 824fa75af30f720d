import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { InvoiceView, PaymentConfigView } from '../src/payments/payments.service.js';
import type { Services } from '../src/services.js';
import { authed, from, SpecNames } from './handler.js';

/** SPEC.md's names for the invoice inputs' multi-word fields. */
const INVOICE_FIELDS = new SpecNames(['amount_usd']);
const INVOICE_PATH = new SpecNames(['invoice_id']);

/** SPEC.md Invoice. */
export function invoiceJson(view: InvoiceView) {
  return {
    id: view.id,
    method: view.method,
    amount_requested: view.amountRequested,
    currency: view.currency,
    usd_credit: view.usdCredit,
    bonus_rate: view.bonusRate,
    bonus_usd: view.bonusUsd,
    status: view.status,
    payment_url: view.paymentUrl,
    created_at: view.createdAt.toISOString(),
    updated_at: view.updatedAt.toISOString(),
    paid_at: view.paidAt ? view.paidAt.toISOString() : null,
  };
}

/** SPEC.md Payment config. */
export function paymentConfigJson(view: PaymentConfigView) {
  return {
    payments_enabled: view.paymentsEnabled,
    rub_per_usd: view.rubPerUsd,
    methods: view.methods.map((m) => ({ id: m.id, label: m.label, currency: m.currency, min_usd: m.minUsd, max_usd: m.maxUsd, enabled: m.enabled })),
    agreement: {
      terms_version: view.agreement.termsVersion,
      privacy_version: view.agreement.privacyVersion,
      title: view.agreement.title,
      intro: view.agreement.intro,
      sections: view.agreement.sections,
    },
    agreement_accepted: view.agreementAccepted,
    paid_balance_usd: view.paidBalanceUsd,
    bonus_balance_usd: view.bonusBalanceUsd,
    next_bonus_expiry: view.nextBonusExpiry ? view.nextBonusExpiry.toISOString() : null,
    bonus_enabled: view.bonusEnabled,
    bonus_expiry_days: view.bonusExpiryDays,
    bonus_tiers: view.bonusTiers.map((t) => ({ min_usd: t.minUsd, rate: t.rate })),
    trusted_partner_enabled: view.trustedPartnerEnabled,
    trusted_partner_active: view.trustedPartnerActive,
    trusted_partner_valid_until: view.trustedPartnerValidUntil ? view.trustedPartnerValidUntil.toISOString() : null,
  };
}

/** SPEC.md 4.4. */
export function paymentsRouter(): Router {
  const router = Router();

  router.get('/config', authed(async (actor, ctx, req, res) => {
    const view = await from('query', () => ctx.services.payments.config(actor, { language: req.query.language as 'ru' | 'en' | undefined }));
    res.json(paymentConfigJson(view));
  }));

  router.post('/agreements/accept', authed(async (actor, ctx, req, res) => {
    const accepted = await from('body', () => ctx.services.payments.acceptAgreement(actor, req.body ?? {}, ctx.caller.clientAddress));
    res.json({ accepted: accepted.accepted, terms_version: accepted.termsVersion, privacy_version: accepted.privacyVersion });
  }));

  router.get('/invoices', authed(async (actor, ctx, req, res) => {
    const items = await from('query', () => ctx.services.payments.listInvoices(actor, { limit: req.query.limit as string | undefined }));
    res.json({ items: items.map(invoiceJson) });
  }));

  router.post('/invoices', authed(async (actor, ctx, req, res) => {
    const input = INVOICE_FIELDS.in('body', req.body ?? {});
    const invoice = await from('body', () => ctx.services.payments.createInvoice(actor, input as never), INVOICE_FIELDS);
    res.status(201).json(invoiceJson(invoice));
  }));

  router.get('/invoices/:invoice_id', authed(async (actor, ctx, req, res) => {
    res.json(invoiceJson(await from('path', () => ctx.services.payments.getInvoice(actor, String(req.params.invoice_id)), INVOICE_PATH)));
  }));

  return router;
}

/** POST /payments/webhooks/checkout: no session; mounted with a raw body parser (the signature covers the bytes). */
export function checkoutWebhook(services: Services): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    services.payments.handleCheckoutWebhook(body, req.get('x-checkout-signature')).then(({ status, outcome }) => {
      if (status === 200) res.status(200).json({ ok: true, outcome });
      else res.status(400).json({ detail: 'Event refused', code: 'invalid_event' });
    }, next);
  };
}
