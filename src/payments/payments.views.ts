import { Decimal } from 'decimal.js';
import { formatUsd, money } from '../shared/money.js';
import type { InvoiceEventPayload } from '../shared/pubsub.js';
import type { PaymentMethodConfig, PaymentsSettings } from './payments.config.js';
import type { InvoiceRow } from './payments.repository.js';

/** What payments show their callers, and the arithmetic of an invoice's amounts. */

export type InvoiceView = InvoiceEventPayload;
export type InvoiceStatus = InvoiceView['status'];

export interface PaymentMethodView {
  id: string;
  label: string;
  currency: string;
  minUsd: string;
  maxUsd: string;
  enabled: boolean;
}

export interface AgreementContentView {
  termsVersion: string;
  privacyVersion: string;
  title: string;
  intro: string;
  sections: { title: string; text: string }[];
}

export interface PaymentConfigView {
  paymentsEnabled: boolean;
  rubPerUsd: string;
  methods: PaymentMethodView[];
  agreement: AgreementContentView;
  agreementAccepted: boolean;
  paidBalanceUsd: string;
  bonusBalanceUsd: string;
  nextBonusExpiry: Date | null;
  bonusEnabled: boolean;
  bonusExpiryDays: number;
  bonusTiers: { minUsd: string; rate: string }[];
  trustedPartnerEnabled: boolean;
  trustedPartnerActive: boolean;
  trustedPartnerValidUntil: Date | null;
}

export interface AgreementAcceptanceView {
  accepted: true;
  termsVersion: string;
  privacyVersion: string;
}

/** What a webhook call did; `status` is the HTTP answer (200 applied/ignored/duplicate, 400 refused). */
export interface WebhookOutcome {
  status: 200 | 400;
  outcome: string;
}

/**
 * RUB amounts: usd x rub_per_usd, rounded half-up to whole kopecks (2 decimal places). USD amounts are
 * whole cents already (the request is validated so).
 */
export function amountInCurrency(usd: Decimal.Value, method: Pick<PaymentMethodConfig, 'currency'>, rubPerUsd: Decimal.Value): Decimal {
  const amount = money(usd);
  return method.currency === 'RUB' ? amount.times(rubPerUsd).toDecimalPlaces(2, Decimal.ROUND_HALF_UP) : amount;
}

/** The bonus share: the tier with the highest `minUsd` at or below the amount (boundary inclusive); 0 when none. */
export function bonusRateFor(usd: Decimal.Value, bonus: PaymentsSettings['bonus']): Decimal {
  if (!bonus.enabled) return money(0);
  let best: { min: Decimal; rate: Decimal } | null = null;
  for (const tier of bonus.tiers) {
    const min = money(tier.minUsd);
    if (min.lessThanOrEqualTo(usd) && (!best || min.greaterThan(best.min))) best = { min, rate: money(tier.rate) };
  }
  return best?.rate ?? money(0);
}

export function methodView(m: PaymentMethodConfig): PaymentMethodView {
  return { id: m.id, label: m.label, currency: m.currency, minUsd: formatUsd(m.minUsd), maxUsd: formatUsd(m.maxUsd), enabled: m.enabled };
}

export function toView(row: InvoiceRow): InvoiceView {
  return {
    id: row.id,
    method: row.method,
    amountRequested: formatUsd(row.amount_requested),
    currency: row.currency,
    usdCredit: formatUsd(row.usd_credit),
    bonusRate: formatUsd(row.bonus_rate),
    bonusUsd: formatUsd(row.bonus_usd),
    status: row.status as InvoiceStatus,
    paymentUrl: row.payment_url,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    paidAt: row.paid_at ? new Date(row.paid_at) : null,
  };
}
