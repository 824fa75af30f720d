import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../shared/ids.js';

/**
 * The payments tables: invoices, agreement_acceptances, payment_events and bonus_grants. Each function
 * runs on the EntityManager it is given: a fresh one, or the transaction that holds the account's row
 * lock while an invoice is credited once (PaymentsService.applyPaid) or a bonus grant expires. Ledger
 * rows are not written here: src/ledger/ledger.ts is the one writer of money.
 */
export interface InvoiceRow {
  id: string;
  user_id: string;
  method: string;
  provider: string;
  currency: string;
  amount_requested: string;
  usd_credit: string;
  bonus_rate: string;
  bonus_usd: string;
  status: string;
  payment_url: string | null;
  provider_ref: string | null;
  created_at: Date | string;
  updated_at: Date | string;
  paid_at: Date | string | null;
  expires_at: Date | string;
}

export interface NewInvoice {
  id: string;
  userId: string;
  method: string;
  provider: string;
  currency: string;
  amountRequested: string;
  usdCredit: string;
  bonusRate: string;
  bonusUsd: string;
  paymentUrl: string | null;
  expiresAt: Date;
}

export interface AgreementVersions {
  termsVersion: string;
  privacyVersion: string;
}

/** Statuses from which a confirmed payment still credits (money received after expiry or a failed attempt is not lost). */
const PAYABLE = `('pending', 'expired', 'failed')`;
/** Largest webhook body kept in `payment_events.raw`. */
const MAX_RAW_EVENT = 64 * 1024;

/** An account's balances, partner status, next bonus expiry and whether it accepted these versions. */
export async function paymentStateOf(em: EntityManager, userId: string, versions: AgreementVersions) {
  const [row] = await em.execute<{ balance_paid_usd: string; balance_bonus_usd: string; trusted_partner_until: Date | null; next_expiry: Date | null; accepted: boolean }[]>(
    `select u.balance_paid_usd, u.balance_bonus_usd, u.trusted_partner_until,
            (select min(g.expires_at) from bonus_grants g where g.user_id = u.id and g.expired_at is null) as next_expiry,
            exists (select 1 from agreement_acceptances a where a.user_id = u.id and a.terms_version = ? and a.privacy_version = ?) as accepted
       from users u where u.id = ?`,
    [versions.termsVersion, versions.privacyVersion, userId],
  );
  return row;
}

export async function recordAcceptance(
  em: EntityManager,
  acceptance: AgreementVersions & { userId: string; language: string; surface: string; clientAddress: string | null; at: Date },
): Promise<void> {
  await em.execute(
    `insert into agreement_acceptances (id, user_id, terms_version, privacy_version, language, surface, client_address, accepted_at)
     values (?, ?, ?, ?, ?, ?, ?, ?::timestamptz)`,
    [newId(), acceptance.userId, acceptance.termsVersion, acceptance.privacyVersion, acceptance.language, acceptance.surface, acceptance.clientAddress, acceptance.at],
  );
}

export async function hasAccepted(em: EntityManager, userId: string, versions: AgreementVersions): Promise<boolean> {
  const rows = await em.execute<{ ok: number }[]>('select 1 as ok from agreement_acceptances where user_id = ? and terms_version = ? and privacy_version = ? limit 1', [
    userId,
    versions.termsVersion,
    versions.privacyVersion,
  ]);
  return rows.length > 0;
}

export async function insertInvoice(em: EntityManager, invoice: NewInvoice, at: Date): Promise<InvoiceRow> {
  const [row] = await em.execute<InvoiceRow[]>(
    `insert into invoices (id, user_id, method, provider, currency, amount_requested, usd_credit, bonus_rate, bonus_usd, status, payment_url,
                           created_at, updated_at, expires_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?::timestamptz, ?::timestamptz, ?::timestamptz) returning *`,
    [invoice.id, invoice.userId, invoice.method, invoice.provider, invoice.currency, invoice.amountRequested, invoice.usdCredit, invoice.bonusRate, invoice.bonusUsd, invoice.paymentUrl, at, at, invoice.expiresAt],
  );
  return row!;
}

export function invoicesOf(em: EntityManager, userId: string, limit: number): Promise<InvoiceRow[]> {
  return em.execute('select * from invoices where user_id = ? order by created_at desc, id desc limit ?', [userId, limit]);
}

/** The newest invoices of every account (an operator's list), optionally of one status, with the account's name. */
export function recentInvoices(em: EntityManager, status: string | null, limit: number): Promise<(InvoiceRow & { username: string | null; email: string | null })[]> {
  return em.execute(
    `select i.*, u.username, u.email from invoices i join users u on u.id = i.user_id ${status ? 'where i.status = ?' : ''} order by i.created_at desc, i.id desc limit ?`,
    status ? [status, limit] : [limit],
  );
}

/** An invoice by id; with `userId`, only that account's. */
export async function invoiceById(em: EntityManager, id: string, userId?: string): Promise<InvoiceRow | undefined> {
  const [row] = userId
    ? await em.execute<InvoiceRow[]>('select * from invoices where id = ? and user_id = ?', [id, userId])
    : await em.execute<InvoiceRow[]>('select * from invoices where id = ?', [id]);
  return row;
}

/** The invoice as paid, if it was still payable (the compare-and-set that makes a payment credit once). */
export async function markInvoicePaid(tx: EntityManager, id: string, at: Date, providerRef: string | null): Promise<InvoiceRow | undefined> {
  const [row] = await tx.execute<InvoiceRow[]>(
    `update invoices set status = 'paid', paid_at = ?::timestamptz, updated_at = ?::timestamptz, provider_ref = coalesce(?, provider_ref)
      where id = ? and status in ${PAYABLE} returning *`,
    [at, at, providerRef, id],
  );
  return row;
}

/** The invoice as failed, if it was pending. */
export async function markInvoiceFailed(em: EntityManager, id: string, at: Date): Promise<InvoiceRow | undefined> {
  const [row] = await em.execute<InvoiceRow[]>(`update invoices set status = 'failed', updated_at = ?::timestamptz where id = ? and status = 'pending' returning *`, [at, id]);
  return row;
}

/** Pending invoices past their expiry, now `expired`. */
export function expireInvoices(em: EntityManager, at: Date): Promise<InvoiceRow[]> {
  return em.execute(`update invoices set status = 'expired', updated_at = ?::timestamptz where status = 'pending' and expires_at <= ?::timestamptz returning *`, [at, at]);
}

export async function grantBonus(tx: EntityManager, grant: { userId: string; invoiceId: string; amount: string; at: Date; expiresAt: Date }): Promise<void> {
  await tx.execute(
    `insert into bonus_grants (id, user_id, invoice_id, amount, granted_at, expires_at) values (?, ?, ?, ?, ?::timestamptz, ?::timestamptz)
     on conflict (invoice_id) where invoice_id is not null do nothing`,
    [newId(), grant.userId, grant.invoiceId, grant.amount, grant.at, grant.expiresAt],
  );
}

/** Unexpired grants past their expiry, oldest first. */
export function dueBonusGrants(em: EntityManager, at: Date, limit: number): Promise<{ id: string; user_id: string }[]> {
  return em.execute(`select id, user_id from bonus_grants where expired_at is null and expires_at <= ?::timestamptz order by expires_at, granted_at, id limit ?`, [at, limit]);
}

/**
 * A grant still unexpired (locked), with its account's bonus balance and the sum of the account's newer
 * unexpired grants.
 */
export async function lockBonusGrant(tx: EntityManager, id: string): Promise<{ id: string; userId: string; amount: string; bonus: string; newer: string } | null> {
  const [grant] = await tx.execute<{ id: string; amount: string; granted_at: Date; user_id: string }[]>(
    'select id, amount, granted_at, user_id from bonus_grants where id = ? and expired_at is null for update',
    [id],
  );
  if (!grant) return null;
  const [state] = await tx.execute<{ bonus: string; newer: string }[]>(
    `select u.balance_bonus_usd as bonus,
            coalesce((select sum(n.amount) from bonus_grants n
                       where n.user_id = u.id and n.expired_at is null and n.id <> ? and (n.granted_at, n.id) > (?::timestamptz, ?::uuid)), 0) as newer
       from users u where u.id = ?`,
    [grant.id, grant.granted_at, grant.id, grant.user_id],
  );
  return { id: grant.id, userId: grant.user_id, amount: grant.amount, bonus: state!.bonus, newer: state!.newer };
}

export async function markBonusGrantExpired(tx: EntityManager, id: string, at: Date): Promise<void> {
  await tx.execute('update bonus_grants set expired_at = ?::timestamptz where id = ?', [at, id]);
}

/** Whether a checkout event was already applied or ignored (a replay). */
export async function eventHandled(em: EntityManager, provider: string, eventId: string): Promise<boolean> {
  const rows = await em.execute<{ outcome: string }[]>(`select outcome from payment_events where provider = ? and event_id = ? and outcome in ('applied', 'ignored') limit 1`, [provider, eventId]);
  return rows.length > 0;
}

/** An invoice of this provider by id. */
export async function providerInvoice(em: EntityManager, provider: string, id: string): Promise<InvoiceRow | undefined> {
  const [row] = await em.execute<InvoiceRow[]>('select * from invoices where id = ? and provider = ?', [id, provider]);
  return row;
}

/** Every webhook call is kept with its outcome (the raw body cut to 64 KiB, NULs removed). */
export async function recordEvent(
  em: EntityManager,
  e: { provider: string; eventId: string | null; invoiceId: string | null; type: string | null; raw: string; outcome: string; at: Date },
): Promise<void> {
  await em.execute(`insert into payment_events (id, provider, event_id, invoice_id, type, raw, outcome, received_at) values (?, ?, ?, ?, ?, ?, ?, ?::timestamptz)`, [
    newId(),
    e.provider,
    e.eventId,
    e.invoiceId,
    e.type,
    e.raw.slice(0, MAX_RAW_EVENT).replace(/\u0000/g, ''),
    e.outcome,
    e.at,
  ]);
}
