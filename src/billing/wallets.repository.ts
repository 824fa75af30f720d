import { Decimal } from 'decimal.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError } from '../shared/errors.js';
import { money } from '../shared/money.js';
import { USAGE_KINDS } from '../ledger/kinds.js';
import { durableHoldsOf } from './holds.repository.js';

/**
 * What billing reads and writes of accounts and keys beside the ledger: the account row lock every
 * ledger append runs under, the trusted-partner credit line, the figures every wallet cache is seeded
 * from, a key's spend cap, and the wallet epochs Redis had. Balances are not written here:
 * src/ledger/ledger.ts is the one writer of money. Plain SQL on the EntityManager given (a fresh one,
 * or the transaction that holds the lock): the users row is the accounts module's entity, which a
 * lower layer does not load, and every statement here is one lock, read or update.
 */

/** What PostgreSQL says of an account (and one key's spend this UTC month): the seed of every wallet cache. */
export interface WalletFigures {
  balance: Decimal;
  creditLimit: Decimal;
  partnerUntil: number | null;
  /** Active durable holds (video jobs) of the account, by their wallet hold id (the request id). */
  durableHolds: { id: string; keyId: string | null; memberId: string | null; amount: Decimal; expiresAt: number }[];
  keySpent: Decimal | null;
  /** An organization member's spend this UTC month through their keys of it (asked for with `memberId`). */
  memberSpent: Decimal | null;
  /** The account's own spend this UTC month (asked for with `ownerCapped`). */
  ownerSpent: Decimal | null;
}

export interface CreditLine {
  userId: string;
  until: Date | null;
  limitUsd: string;
}

const USAGE_KIND_LIST = USAGE_KINDS.map((k) => `'${k}'`).join(',');

/** Locks the account's row until the transaction ends; false when there is no such account. */
export async function lockAccount(tx: EntityManager, userId: string): Promise<boolean> {
  const rows = await tx.execute('select 1 from users where id = ? for update', [userId]);
  return rows.length > 0;
}

/** A key's caps: its own, and for an organization's key its member's and the organization's (null: none). */
export interface KeyCaps {
  keyCap: string | null;
  memberId: string | null;
  memberCap: string | null;
  ownerCap: string | null;
}

/** The caps a key's spending is held against; undefined when the account has no such key. */
export async function keySpendCaps(em: EntityManager, keyId: string, userId: string): Promise<KeyCaps | undefined> {
  const [key] = await em.execute<{ key_cap: string | null; created_by: string | null; member_cap: string | null; owner_cap: string | null }[]>(
    `select k.monthly_spend_cap_usd as key_cap, k.created_by, m.monthly_spend_cap_usd as member_cap, o.monthly_spend_cap_usd as owner_cap
       from api_keys k left join organizations o on o.id = k.user_id
       left join organization_members m on m.organization_id = k.user_id and m.user_id = k.created_by
      where k.id = ? and k.user_id = ?`,
    [keyId, userId],
  );
  return key && { keyCap: key.key_cap, memberId: key.created_by, memberCap: key.member_cap, ownerCap: key.owner_cap };
}

/** Sets an account's trusted-partner credit line; null when there is no such account. */
export async function setCreditLine(em: EntityManager, userId: string, until: Date, limitUsd: string): Promise<CreditLine | null> {
  const [row] = await em.execute<{ id: string; trusted_partner_until: Date | null; credit_limit_usd: string }[]>(
    'update users set trusted_partner_until = ?, credit_limit_usd = ?, updated_at = now() where id = ? returning id, trusted_partner_until, credit_limit_usd',
    [until, limitUsd, userId],
  );
  return row ? { userId: row.id, until: row.trusted_partner_until ? new Date(row.trusted_partner_until) : null, limitUsd: row.credit_limit_usd } : null;
}

/** Ends an account's credit line; returns the account's id as stored, or null when there is no such account. */
export async function clearCreditLine(em: EntityManager, userId: string): Promise<string | null> {
  const [row] = await em.execute<{ id: string }[]>(`update users set trusted_partner_until = null, credit_limit_usd = 0, updated_at = now() where id = ? returning id`, [userId]);
  return row?.id ?? null;
}

const MONTH_START = `date_trunc('month', now() at time zone 'utc') at time zone 'utc'`;

/** The figures of an account, and the months a reservation spends against: its key's, its member's, its own. */
export async function loadWalletFigures(em: EntityManager, userId: string, keyId: string | null, months: { memberId?: string | null; ownerCapped?: boolean } = {}): Promise<WalletFigures> {
  const memberId = months.memberId ?? null;
  const [row] = await em.execute<{ balance: string; trusted_partner_until: Date | null; credit_limit_usd: string; key_spent: string | null; member_spent: string | null; owner_spent: string | null }[]>(
    `select u.balance_paid_usd + u.balance_bonus_usd as balance, u.trusted_partner_until, u.credit_limit_usd,
            case when ?::uuid is null then null else
              (select coalesce(-sum(amount_usd), 0) from transactions t
                where t.api_key_id = ?::uuid and t.kind in (${USAGE_KIND_LIST}) and t.created_at >= ${MONTH_START}) end as key_spent,
            case when ?::uuid is null then null else
              (select coalesce(-sum(t.amount_usd), 0) from transactions t join api_keys k on k.id = t.api_key_id
                where t.user_id = u.id and k.created_by = ?::uuid and t.kind in (${USAGE_KIND_LIST}) and t.created_at >= ${MONTH_START}) end as member_spent,
            case when not ?::boolean then null else
              (select coalesce(-sum(amount_usd), 0) from transactions t
                where t.user_id = u.id and t.kind in (${USAGE_KIND_LIST}) and t.created_at >= ${MONTH_START}) end as owner_spent
       from users u where u.id = ?`,
    [keyId, keyId, memberId, memberId, months.ownerCapped === true, userId],
  );
  if (!row) throw new DomainError('not_found', 'No such account');
  const holds = await durableHoldsOf(em, userId);
  return {
    balance: money(row.balance),
    creditLimit: money(row.credit_limit_usd),
    partnerUntil: row.trusted_partner_until ? new Date(row.trusted_partner_until).getTime() : null,
    durableHolds: holds.map((h) => ({ id: h.requestId, keyId: h.apiKeyId, memberId: h.memberId, amount: money(h.amountUsd), expiresAt: h.expiresAt.getTime() })),
    keySpent: row.key_spent === null ? null : money(row.key_spent),
    memberSpent: row.member_spent === null ? null : money(row.member_spent),
    ownerSpent: row.owner_spent === null ? null : money(row.owner_spent),
  };
}

/** Whether PostgreSQL recorded a wallet epoch for this Redis prefix (Redis had state to lose). */
export async function epochWitnessed(em: EntityManager, prefix: string): Promise<boolean> {
  const rows = await em.execute<{ n: number }[]>('select count(*)::int as n from wallet_epochs where prefix = ?', [prefix]);
  return (rows[0]?.n ?? 0) > 0;
}

/** Records the epoch Redis now has for this prefix. */
export async function witnessEpoch(em: EntityManager, prefix: string, epoch: string): Promise<void> {
  await em.execute('insert into wallet_epochs (prefix, epoch) values (?, ?) on conflict (prefix) do update set epoch = excluded.epoch, started_at = now()', [prefix, epoch]);
}

/** The account's stored (ledger) paid and bonus balances; null when there is no such account. */
export async function storedBalances(em: EntityManager, userId: string): Promise<{ paid: string; bonus: string } | null> {
  const [row] = await em.execute<{ paid: string; bonus: string }[]>('select balance_paid_usd::text as paid, balance_bonus_usd::text as bonus from users where id = ?', [userId]);
  return row ?? null;
}
