import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import type { InvoiceView, PaymentConfigView } from '../src/payments/payments.service.js';
import { acceptAgreementInput, createInvoiceInput, invoiceIdInput, listInvoicesInput, paymentConfigInput } from '../src/payments/payments.schemas.js';
import type { Services } from '../src/services.js';
import { decimal, timestamp } from './answer-fields.js';
import { authed, SpecNames, withInput } from './handler.js';
import { reply, routes, serve } from './route.js';

export const invoiceAnswer = z
  .object({
    id: z.string(),
    method: z.string(),
    amount_requested: decimal,
    currency: z.string(),
    usd_credit: decimal,
    bonus_rate: decimal,
    bonus_usd: decimal,
    status: z.enum(['pending', 'paid', 'expired', 'cancelled', 'failed']),
    payment_url: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
    paid_at: timestamp.nullable(),
  })
  .meta({ id: 'Invoice', description: 'SPEC.md Invoice.' });

/** SPEC.md Invoice. */
export function invoiceJson(view: InvoiceView): z.infer<typeof invoiceAnswer> {
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

export const paymentConfigAnswer = z
  .object({
    payments_enabled: z.boolean(),
    rub_per_usd: decimal,
    methods: z.array(z.object({ id: z.string(), label: z.string(), currency: z.string(), min_usd: decimal, max_usd: decimal, enabled: z.boolean() })),
    agreement: z.object({
      terms_version: z.string(),
      privacy_version: z.string(),
      title: z.string(),
      intro: z.string(),
      sections: z.array(z.object({ title: z.string(), text: z.string() })),
    }),
    agreement_accepted: z.boolean(),
    paid_balance_usd: decimal,
    bonus_balance_usd: decimal,
    next_bonus_expiry: timestamp.nullable(),
    bonus_enabled: z.boolean(),
    bonus_expiry_days: z.int(),
    bonus_tiers: z.array(z.object({ min_usd: decimal, rate: decimal })),
    trusted_partner_enabled: z.boolean(),
    trusted_partner_active: z.boolean(),
    trusted_partner_valid_until: timestamp.nullable(),
  })
  .meta({ id: 'PaymentConfig', description: 'SPEC.md Payment config (with its Payment methods and Agreement content).' });

/** SPEC.md Payment config. */
export function paymentConfigJson(view: PaymentConfigView): z.infer<typeof paymentConfigAnswer> {
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

const agreementAcceptedAnswer = z
  .object({ accepted: z.literal(true), terms_version: z.string(), privacy_version: z.string() })
  .meta({ id: 'AgreementAcceptance', description: 'SPEC.md Agreement acceptance (the answer).' });

/** SPEC.md 4.4. */
export const PAYMENT_ROUTES = routes('/payments', 'payments', {
  config: {
    method: 'get',
    at: '/config',
    summary: 'Payment methods, bonus tiers, balances and the agreement to accept',
    access: 'session',
    query: new SpecNames(paymentConfigInput),
    answers: { 200: { description: 'Payment config', json: paymentConfigAnswer } },
  },
  acceptAgreement: {
    method: 'post',
    at: '/agreements/accept',
    summary: 'Accept the current terms and privacy policy',
    access: 'session',
    body: new SpecNames(acceptAgreementInput),
    optionalBody: true,
    answers: { 200: { description: 'Accepted', json: agreementAcceptedAnswer } },
  },
  invoices: {
    method: 'get',
    at: '/invoices',
    summary: 'The account’s invoices, newest first',
    access: 'session',
    query: new SpecNames(listInvoicesInput),
    answers: { 200: { description: 'Invoices', json: z.object({ items: z.array(invoiceAnswer) }) } },
  },
  createInvoice: {
    method: 'post',
    at: '/invoices',
    summary: 'Create an invoice to top up the balance',
    access: 'session',
    body: new SpecNames(createInvoiceInput),
    answers: { 201: { description: 'Invoice', json: invoiceAnswer } },
  },
  invoice: {
    method: 'get',
    at: '/invoices/:invoice_id',
    summary: 'One of the account’s invoices',
    access: 'session',
    params: new SpecNames(invoiceIdInput),
    answers: { 200: { description: 'Invoice', json: invoiceAnswer } },
  },
});

export function paymentsRouter(): Router {
  const router = Router();
  const { config, acceptAgreement, invoices, createInvoice, invoice } = PAYMENT_ROUTES;

  serve(router, config, authed(async (actor, ctx, req, res) => {
    const view = await withInput('query', config.query, req.query, (query) => ctx.services.payments.config(actor, query));
    reply(res, config, 200, paymentConfigJson(view));
  }));

  serve(router, acceptAgreement, authed(async (actor, ctx, req, res) => {
    const accepted = await withInput('body', acceptAgreement.body, req.body ?? {}, (input) => ctx.services.payments.acceptAgreement(actor, input, ctx.caller.clientAddress));
    reply(res, acceptAgreement, 200, { accepted: accepted.accepted, terms_version: accepted.termsVersion, privacy_version: accepted.privacyVersion });
  }));

  serve(router, invoices, authed(async (actor, ctx, req, res) => {
    const items = await withInput('query', invoices.query, req.query, (query) => ctx.services.payments.listInvoices(actor, query));
    reply(res, invoices, 200, { items: items.map(invoiceJson) });
  }));

  serve(router, createInvoice, authed(async (actor, ctx, req, res) => {
    const created = await withInput('body', createInvoice.body, req.body ?? {}, (input) => ctx.services.payments.createInvoice(actor, input));
    reply(res, createInvoice, 201, invoiceJson(created));
  }));

  serve(router, invoice, authed(async (actor, ctx, req, res) => {
    reply(res, invoice, 200, invoiceJson(await withInput('path', invoice.params, req.params, ({ invoiceId }) => ctx.services.payments.getInvoice(actor, invoiceId))));
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
