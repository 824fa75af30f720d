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
  durableHolds: { id: string; keyId: string | null; amount: Decimal; expiresAt: number }[];
  keySpent: Decimal | null;
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

/** The key's monthly spend cap (null: none); undefined when the account has no such key. */
export async function keySpendCap(em: EntityManager, keyId: string, userId: string): Promise<string | null | undefined> {
  const [key] = await em.execute<{ monthly_spend_cap_usd: string | null }[]>('select monthly_spend_cap_usd from api_keys where id = ? and user_id = ?', [keyId, userId]);
  return key?.monthly_spend_cap_usd;
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

export async function loadWalletFigures(em: EntityManager, userId: string, keyId: string | null): Promise<WalletFigures> {
  const [row] = await em.execute<{ balance: string; trusted_partner_until: Date | null; credit_limit_usd: string; key_spent: string | null }[]>(
    `select u.balance_paid_usd + u.balance_bonus_usd as balance, u.trusted_partner_until, u.credit_limit_usd,
            case when ?::uuid is null then null else
              (select coalesce(-sum(amount_usd), 0) from transactions t
                where t.api_key_id = ?::uuid and t.kind in (${USAGE_KIND_LIST})
                  and t.created_at >= date_trunc('month', now() at time zone 'utc') at time zone 'utc') end as key_spent
       from users u where u.id = ?`,
    [keyId, keyId, userId],
  );
  if (!row) throw new DomainError('not_found', 'No such account');
  const holds = await durableHoldsOf(em, userId);
  return {
    balance: money(row.balance),
    creditLimit: money(row.credit_limit_usd),
    partnerUntil: row.trusted_partner_until ? new Date(row.trusted_partner_until).getTime() : null,
    durableHolds: holds.map((h) => ({ id: h.requestId, keyId: h.apiKeyId, amount: money(h.amountUsd), expiresAt: h.expiresAt.getTime() })),
    keySpent: row.key_spent === null ? null : money(row.key_spent),
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
