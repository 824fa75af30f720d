import { Decimal } from 'decimal.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { BillingService, PostRequest, Settlement } from '../billing/billing.service.js';
import { requireAdmin } from '../shared/actor.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logging.js';
import type { Actor } from '../shared/actor.js';
import { DomainError } from '../shared/errors.js';
import { isUuid, newId } from '../shared/ids.js';
import { formatUsd, money } from '../shared/money.js';
import { Topics, type PubSub } from '../shared/pubsub.js';
import { parseInput } from '../shared/validation.js';
import { enqueueWebhookEvent } from '../events/outbox.js';
import type { OrganizationAccess } from '../organizations/organizations.service.js';
import { requireRole } from '../organizations/roles.js';
import type { PaymentsSettings } from './payments.config.js';
import * as store from './payments.repository.js';
import type { InvoiceRow } from './payments.repository.js';
import { amountInCurrency, bonusRateFor, methodView, toView, type AgreementAcceptanceView, type InvoiceView, type PaymentConfigView, type WebhookOutcome } from './payments.views.js';
import { CheckoutProvider } from './providers/checkout.js';
import { manualProvider } from './providers/manual.js';
import type { PaymentProvider } from './providers/provider.js';
import {
  acceptAgreementInput,
  adminInvoicesInput,
  createInvoiceInput,
  invoiceIdInput,
  listInvoicesInput,
  markInvoicePaidInput,
  paymentConfigInput,
  type AcceptAgreementInput,
  type AdminInvoicesInput,
  type CreateInvoiceInput,
  type ListInvoicesInput,
  type PaymentConfigInput,
} from './payments.schemas.js';

export type { AgreementAcceptanceView, AgreementContentView, InvoiceStatus, InvoiceView, PaymentConfigView, PaymentMethodView, WebhookOutcome } from './payments.views.js';

/** Bonus grants expired per sweep at most (the rest wait for the next sweep). */
const BONUS_EXPIRY_BATCH = 500;

/**
 * Payments (DESIGN.md Payments): operator-configured methods, agreement acceptance, invoices, and two
 * providers — `manual` (an admin marks an invoice paid) and a hosted `checkout` that confirms by an
 * HMAC-signed webhook. A paid invoice credits paid balance and its bonus in one transaction with the
 * invoice's compare-and-set to `paid`, so a payment credits exactly once whatever arrives when.
 */
export class PaymentsService {
  constructor(
    private readonly deps: {
      orm: MikroORM;
      settings: PaymentsSettings;
      clock: Clock;
      pubsub: PubSub;
      log: Logger;
      billing: BillingService;
      identity?: { requireVerifiedEmail(userId: string): Promise<void> };
    },
  ) {}

  /** The ways to pay, by the `provider` of a payment method. */
  private readonly providers: Record<PaymentProvider['id'], PaymentProvider> = {
    manual: manualProvider,
    checkout: new CheckoutProvider(() => this.settings),
  };

  private get settings(): PaymentsSettings {
    return this.deps.settings;
  }

  private em(): EntityManager {
    return this.deps.orm.em.fork();
  }

  private now(): Date {
    return this.deps.clock.now();
  }

  async config(actor: Actor, raw: PaymentConfigInput = {}): Promise<PaymentConfigView> {
    const { language } = parseInput(paymentConfigInput, raw ?? {});
    const s = this.settings;
    const now = this.now();
    const row = await store.paymentStateOf(this.em(), actor.userId, s.agreement);
    if (!row) throw new DomainError('unauthenticated', 'Not signed in');
    const bonusBalance = money(row.balance_bonus_usd);
    const until = row.trusted_partner_until ? new Date(row.trusted_partner_until) : null;
    const text = s.agreement[language];
    return {
      paymentsEnabled: s.enabled,
      rubPerUsd: formatUsd(s.rubPerUsd),
      methods: s.methods.map(methodView),
      agreement: { termsVersion: s.agreement.termsVersion, privacyVersion: s.agreement.privacyVersion, title: text.title, intro: text.intro, sections: text.sections.map((x) => ({ title: x.title, text: x.text })) },
      agreementAccepted: Boolean(row.accepted),
      paidBalanceUsd: formatUsd(row.balance_paid_usd),
      bonusBalanceUsd: formatUsd(bonusBalance),
      // Only bonus that is still there can expire.
      nextBonusExpiry: bonusBalance.greaterThan(0) && row.next_expiry ? new Date(row.next_expiry) : null,
      bonusEnabled: s.bonus.enabled,
      bonusExpiryDays: s.bonus.expiryDays,
      bonusTiers: [...s.bonus.tiers].sort((a, b) => money(a.minUsd).comparedTo(b.minUsd)).map((t) => ({ minUsd: formatUsd(t.minUsd), rate: formatUsd(t.rate) })),
      trustedPartnerEnabled: s.trustedPartner.enabled,
      trustedPartnerActive: s.trustedPartner.enabled && until !== null && until.getTime() > now.getTime(),
      trustedPartnerValidUntil: until,
    };
  }

  /** Records acceptance of the current agreement versions (a new version needs a new acceptance). */
  async acceptAgreement(actor: Actor, raw: AcceptAgreementInput, clientAddress: string | null): Promise<AgreementAcceptanceView> {
    const input = parseInput(acceptAgreementInput, raw ?? {});
    const { termsVersion, privacyVersion } = this.settings.agreement;
    await store.recordAcceptance(this.em(), { userId: actor.userId, termsVersion, privacyVersion, language: input.language, surface: input.surface, clientAddress, at: this.now() });
    this.deps.log.info({ userId: actor.userId, termsVersion, privacyVersion, surface: input.surface }, 'agreement accepted');
    return { accepted: true, termsVersion, privacyVersion };
  }

  async createInvoice(actor: Actor, raw: CreateInvoiceInput): Promise<InvoiceView> {
    return this.issueInvoice(actor, actor.userId, raw);
  }

  /**
   * An invoice that funds an organization's wallet (issue 56), made by one of its billing members: the same methods,
   * bonus tiers and providers as an account's. The organization is the ledger owner (`invoices.user_id`), so paying
   * it credits the organization's balance through the same `applyPaid`; the acting member is the one who must have
   * a verified e-mail and have accepted the agreement (an organization has neither).
   */
  async createOrganizationInvoice(actor: Actor, access: OrganizationAccess, raw: CreateInvoiceInput): Promise<InvoiceView> {
    requireRole(access.role, 'billing');
    return this.issueInvoice(actor, access.organizationId, raw);
  }

  /** An organization's invoices, newest first (billing roles). */
  async organizationInvoices(access: OrganizationAccess, raw: ListInvoicesInput = {}): Promise<InvoiceView[]> {
    requireRole(access.role, 'billing');
    const { limit } = parseInput(listInvoicesInput, raw ?? {});
    return (await store.invoicesOf(this.em(), access.organizationId, limit)).map(toView);
  }

  /** An invoice crediting `ledgerOwnerId` (the actor's account, or an organization the actor may bill for). */
  private async issueInvoice(actor: Actor, ledgerOwnerId: string, raw: CreateInvoiceInput): Promise<InvoiceView> {
    const input = parseInput(createInvoiceInput, raw ?? {});
    const s = this.settings;
    if (!s.enabled) throw new DomainError('forbidden', 'Payments are disabled', { reason: 'payments_disabled' });
    const method = s.methods.find((m) => m.id === input.method && m.enabled);
    if (!method) {
      const ids = s.methods.filter((m) => m.enabled).map((m) => m.id);
      throw new DomainError('validation_failed', 'Request validation failed', {
        issues: [{ loc: ['method'], msg: `Input should be one of: ${ids.join(', ') || 'none'}`, type: 'enum' }],
      });
    }
    const usd = money(input.amountUsd);
    if (usd.lessThan(method.minUsd) || usd.greaterThan(method.maxUsd)) {
      throw new DomainError('validation_failed', 'Request validation failed', {
        issues: [{ loc: ['amountUsd'], msg: `Input should be between ${formatUsd(method.minUsd)} and ${formatUsd(method.maxUsd)} USD for ${method.id}`, type: 'range_error' }],
      });
    }
    // Money in requires a reachable, verified person (docs/cabinet.md "Identity"): 403 email_not_verified.
    await this.deps.identity?.requireVerifiedEmail(actor.userId);
    const em = this.em();
    if (!(await store.hasAccepted(em, actor.userId, s.agreement))) throw new DomainError('forbidden', 'Accept the current terms and privacy policy first', { reason: 'agreement_required' });

    const id = newId();
    const amount = amountInCurrency(usd, method, s.rubPerUsd);
    const rate = bonusRateFor(usd, s.bonus);
    const bonusUsd = usd.times(rate);
    const paymentUrl = this.providers[method.provider].paymentUrl({ id, amount, currency: method.currency });
    const now = this.now();
    const row = await store.insertInvoice(
      em,
      {
        id,
        userId: ledgerOwnerId,
        method: method.id,
        provider: method.provider,
        currency: method.currency,
        amountRequested: amount.toFixed(),
        usdCredit: usd.toFixed(),
        bonusRate: rate.toFixed(),
        bonusUsd: bonusUsd.toFixed(),
        paymentUrl,
        expiresAt: new Date(now.getTime() + s.invoiceTtlMinutes * 60_000),
      },
      now,
    );
    this.deps.log.info({ invoiceId: id, userId: ledgerOwnerId, createdBy: actor.userId, method: method.id, usd: usd.toFixed() }, 'invoice created');
    const view = toView(row);
    this.publish(row.user_id, view);
    return view;
  }

  async listInvoices(actor: Actor, raw: ListInvoicesInput = {}): Promise<InvoiceView[]> {
    const { limit } = parseInput(listInvoicesInput, raw ?? {});
    return (await store.invoicesOf(this.em(), actor.userId, limit)).map(toView);
  }

  /** Admin: the newest invoices of every account, for marking manual ones paid. */
  async adminInvoices(actor: Actor, raw: AdminInvoicesInput = {}): Promise<(InvoiceView & { userId: string; account: string })[]> {
    requireAdmin(actor);
    const { status, limit } = parseInput(adminInvoicesInput, raw);
    const rows = await store.recentInvoices(this.em(), status ?? null, limit);
    return rows.map((row) => ({ ...toView(row), userId: row.user_id, account: row.username ?? row.email ?? row.user_id }));
  }

  /** One of the caller's invoices; 404 for an unknown or someone else's id. */
  async getInvoice(actor: Actor, invoiceId: string): Promise<InvoiceView> {
    const { invoiceId: id } = parseInput(invoiceIdInput, { invoiceId });
    const row = await store.invoiceById(this.em(), id, actor.userId);
    if (!row) throw new DomainError('not_found', 'No such invoice');
    return toView(row);
  }

  /** Admin (manual provider, or an operator override): marks an invoice paid and credits it once. */
  async markPaid(actor: Actor, invoiceId: string, reference?: string | null): Promise<InvoiceView> {
    requireAdmin(actor);
    const input = parseInput(markInvoicePaidInput, { invoiceId, ...(reference != null ? { reference } : {}) });
    const result = await this.applyPaid(input.invoiceId, input.reference ?? `manual:${actor.userId}`);
    if (!result) throw new DomainError('not_found', 'No such invoice');
    this.deps.log.info({ invoiceId: input.invoiceId, admin: actor.userId, changed: result.changed }, 'invoice marked paid');
    return toView(result.row);
  }

  /**
   * Pending/expired/failed -> paid by compare-and-set, with the paid credit, the bonus credit and its
   * grant in the same transaction (under the account lock). Returns null for an unknown invoice and
   * `changed: false` when it was already paid (or cancelled): nothing is credited twice.
   */
  private async applyPaid(
    invoiceId: string,
    providerRef: string | null,
    within?: (tx: EntityManager, changed: boolean) => Promise<void>,
  ): Promise<{ changed: boolean; row: InvoiceRow } | null> {
    const found = await store.invoiceById(this.em(), invoiceId);
    if (!found) return null;
    const now = this.now();
    const expiresAt = new Date(now.getTime() + this.settings.bonus.expiryDays * 86_400_000);
    const result = await this.deps.billing.withAccount(found.user_id, async (tx, post: (r: PostRequest) => Promise<Settlement>) => {
      const row = await store.markInvoicePaid(tx, invoiceId, now, providerRef);
      if (!row) {
        const current = await store.invoiceById(tx, invoiceId);
        await within?.(tx, false);
        return { changed: false, row: current! };
      }
      await post({ userId: row.user_id, amountUsd: row.usd_credit, kind: 'topup', bucket: 'paid', idempotencyKey: `invoice:${row.id}:paid`, note: `invoice ${row.id} (${row.method})` });
      if (money(row.bonus_usd).greaterThan(0)) {
        const bonus = await post({ userId: row.user_id, amountUsd: row.bonus_usd, kind: 'bonus', bucket: 'bonus', idempotencyKey: `invoice:${row.id}:bonus`, note: `bonus for invoice ${row.id}` });
        if (bonus.applied) {
          await store.grantBonus(tx, { userId: row.user_id, invoiceId: row.id, amount: row.bonus_usd, at: now, expiresAt });
        }
      }
      // The account's webhooks learn of it in the transaction that credits it: both or neither.
      await enqueueWebhookEvent(tx, { userId: row.user_id, type: 'invoice.paid', data: { invoice: { ...toView(row) } } });
      await within?.(tx, true);
      return { changed: true, row };
    });
    if (result.changed) this.publish(result.row.user_id, toView(result.row));
    return result;
  }

  /**
   * The hosted checkout's webhook: `x-checkout-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
   * Unsigned, wrongly signed, stale, malformed or mismatched events credit nothing, are recorded with
   * their outcome and logged, and answer 400; replays and valid events with no effect answer 200.
   */
  async handleCheckoutWebhook(rawBody: Buffer, signatureHeader: string | undefined): Promise<WebhookOutcome> {
    const provider = this.providers.checkout;
    const raw = rawBody.toString('utf8');
    let parsedJson: unknown = null;
    try {
      parsedJson = JSON.parse(raw);
    } catch {
      parsedJson = null;
    }
    const loose = (parsedJson && typeof parsedJson === 'object' ? parsedJson : {}) as Record<string, unknown>;
    const looseId = typeof loose.id === 'string' ? loose.id.slice(0, 200) : null;
    // Only a well-formed UUID is ever bound as one (36 characters of hex and dashes is not enough: a 500 from PostgreSQL).
    const looseInvoice = isUuid(loose.invoice_id) ? loose.invoice_id : null;
    const looseType = typeof loose.type === 'string' ? loose.type.slice(0, 64) : null;
    const refuse = async (outcome: string, detail: Record<string, unknown> = {}): Promise<WebhookOutcome> => {
      await store.recordEvent(this.em(), { provider: provider.id, eventId: looseId, invoiceId: looseInvoice, type: looseType, raw, outcome, at: this.now() });
      this.deps.log.warn({ provider: 'checkout', eventId: looseId, invoiceId: looseInvoice, outcome, ...detail }, 'payment webhook refused');
      return { status: 400, outcome };
    };

    const checked = provider.checkWebhook(rawBody, signatureHeader, this.now());
    if (!checked.ok) return refuse(checked.outcome, checked.detail);
    const event = checked.event;

    const em = this.em();
    if (await store.eventHandled(em, provider.id, event.id)) {
      await store.recordEvent(em, { provider: provider.id, eventId: event.id, invoiceId: looseInvoice, type: event.type, raw, outcome: 'duplicate', at: this.now() });
      return { status: 200, outcome: 'duplicate' };
    }
    const invoice = looseInvoice ? await store.providerInvoice(em, provider.id, event.invoice_id) : undefined;
    if (!invoice) return refuse('unknown_invoice');
    if (event.currency !== invoice.currency) return refuse('currency_mismatch', { expected: invoice.currency, got: event.currency });
    if (!money(event.amount).equals(invoice.amount_requested)) return refuse('amount_mismatch', { expected: formatUsd(invoice.amount_requested), got: event.amount });

    const record = (outcome: string) => (tx: EntityManager) =>
      store.recordEvent(tx, { provider: provider.id, eventId: event.id, invoiceId: invoice.id, type: event.type, raw, outcome, at: this.now() });
    if (event.type === 'invoice.paid') {
      const result = await this.applyPaid(invoice.id, event.id, (tx, changed) => record(changed ? 'applied' : 'ignored')(tx));
      const outcome = result?.changed ? 'applied' : 'ignored';
      this.deps.log.info({ provider: 'checkout', eventId: event.id, invoiceId: invoice.id, outcome }, 'payment webhook');
      return { status: 200, outcome };
    }
    // invoice.failed: only a pending invoice fails; after paid (or any other end) it changes nothing.
    const failed = await store.markInvoiceFailed(em, invoice.id, this.now());
    const outcome = failed ? 'applied' : 'ignored';
    await record(outcome)(em);
    if (failed) this.publish(failed.user_id, toView(failed));
    this.deps.log.info({ provider: 'checkout', eventId: event.id, invoiceId: invoice.id, outcome }, 'payment webhook');
    return { status: 200, outcome };
  }

  /** Pending invoices past their expiry become `expired`; returns how many. */
  async expireInvoices(now: Date = this.now()): Promise<number> {
    const rows = await store.expireInvoices(this.em(), now);
    for (const row of rows) this.publish(row.user_id, toView(row));
    return rows.length;
  }

  /**
   * Bonus grants past their expiry expire, oldest first. Bonus is spent first-in-first-out, so what
   * is left of a grant is max(0, bonus balance - newer unexpired grants), at most the grant; that
   * remainder leaves the bonus balance as a `bonus_expiry` ledger row. Returns how many grants expired.
   */
  async expireBonuses(now: Date = this.now()): Promise<number> {
    const due = await store.dueBonusGrants(this.em(), now, BONUS_EXPIRY_BATCH);
    let count = 0;
    for (const grant of due) {
      const expired = await this.deps.billing.withAccount(grant.user_id, async (tx, post) => {
        const g = await store.lockBonusGrant(tx, grant.id);
        if (!g) return false;
        const left = Decimal.min(money(g.amount), Decimal.max(0, money(g.bonus).minus(g.newer)));
        if (left.greaterThan(0)) {
          await post({ userId: g.userId, amountUsd: left.negated(), kind: 'bonus_expiry', idempotencyKey: `bonus-expiry:${g.id}`, note: `bonus grant ${g.id} expired` });
        }
        await store.markBonusGrantExpired(tx, g.id, now);
        return true;
      });
      if (expired) count += 1;
    }
    return count;
  }

  /** One sweep of both: called every ~30 s by the server and directly by tests. */
  async sweep(now: Date = this.now()): Promise<{ invoices: number; bonuses: number }> {
    return { invoices: await this.expireInvoices(now), bonuses: await this.expireBonuses(now) };
  }

  private publish(userId: string, view: InvoiceView): void {
    this.deps.pubsub.publish(Topics.InvoiceUpdated, userId, view);
  }
}
