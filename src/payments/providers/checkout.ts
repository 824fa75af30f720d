import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Decimal } from 'decimal.js';
import { formatUsd } from '../../shared/money.js';
import type { PaymentsSettings } from '../payments.config.js';
import { checkoutEvent } from '../payments.schemas.js';
import type { PaymentProvider, WebhookCheck } from './provider.js';

/**
 * A hosted checkout page: the payer is sent to `checkout.baseUrl` with the invoice, and the page
 * confirms by a webhook signed `x-checkout-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
 */
export class CheckoutProvider implements PaymentProvider {
  readonly id = 'checkout';

  /** `settings` is read at each use: the operator's payments settings as they are now. */
  constructor(private readonly settingsNow: () => Pick<PaymentsSettings, 'checkout' | 'checkoutSecret'>) {}

  paymentUrl(invoice: { id: string; amount: Decimal; currency: string }): string {
    const base = this.settingsNow().checkout.baseUrl;
    return `${base}${base.includes('?') ? '&' : '?'}invoice=${invoice.id}&amount=${encodeURIComponent(formatUsd(invoice.amount))}&currency=${invoice.currency}`;
  }

  /** Unsigned, wrongly signed, stale or malformed events are refused, each with its own outcome. */
  checkWebhook(rawBody: Buffer, signatureHeader: string | undefined, now: Date): WebhookCheck {
    const settings = this.settingsNow();
    const secret = settings.checkoutSecret;
    if (!secret) return { ok: false, outcome: 'not_configured' };
    const signature = parseSignature(signatureHeader);
    if (!signature) return { ok: false, outcome: 'unsigned' };
    const expected = createHmac('sha256', secret).update(`${signature.t}.`).update(rawBody).digest();
    const given = /^[0-9a-f]{64}$/i.test(signature.v1) ? Buffer.from(signature.v1, 'hex') : Buffer.alloc(0);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, outcome: 'bad_signature' };
    const skew = Math.abs(Math.floor(now.getTime() / 1000) - signature.t);
    if (skew > settings.checkout.toleranceSeconds) return { ok: false, outcome: 'stale', detail: { skewSeconds: skew } };
    let json: unknown;
    try {
      json = JSON.parse(rawBody.toString('utf8'));
    } catch {
      return { ok: false, outcome: 'malformed' };
    }
    const parsed = checkoutEvent.safeParse(json);
    return parsed.success ? { ok: true, event: parsed.data } : { ok: false, outcome: 'malformed' };
  }
}

function parseSignature(header: string | undefined): { t: number; v1: string } | null {
  if (!header) return null;
  const parts = new Map<string, string>();
  for (const piece of header.split(',')) {
    const index = piece.indexOf('=');
    if (index > 0) parts.set(piece.slice(0, index).trim(), piece.slice(index + 1).trim());
  }
  const t = parts.get('t');
  const v1 = parts.get('v1');
  if (!t || !/^\d{1,12}$/.test(t) || !v1) return null;
  return { t: Number(t), v1 };
}
