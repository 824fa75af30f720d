import { randomUUID } from 'node:crypto';
import type { Actor } from '../../src/shared/actor.js';
import { registerRest } from './clients.js';
import type { TestGateway } from './gateway.js';

/** A registered account, its session token and its actor, optionally funded with paid balance through the ledger. */
export async function newFundedAccount(gw: TestGateway, paidUsd?: string) {
  const registered = await registerRest(gw.url);
  const actor: Actor = (await gw.services.accounts.authenticate(registered.token))!;
  if (paidUsd) {
    await gw.services.billing.post({ userId: actor.userId, amountUsd: paidUsd, kind: 'topup', bucket: 'paid', idempotencyKey: `test-topup:${randomUUID()}` });
  }
  return { ...registered, actor, userId: actor.userId };
}

/** An admin session: an account promoted in the database, as the admin CLI does. */
export async function newAdmin(gw: TestGateway) {
  const account = await newFundedAccount(gw);
  await gw.db.query('update users set is_admin = true where id = $1', [account.userId]);
  return { ...account, actor: { ...account.actor, isAdmin: true } };
}

/**
 * The invariant of DESIGN.md Ledger, checked with plain SQL: the cached paid and bonus balances equal
 * the sums of the account's ledger rows. Returns the balance as text.
 */
export async function ledgerBalance(gw: Pick<TestGateway, 'db'>, userId: string): Promise<{ balance: string; ledger: string; paidMatches: boolean; bonusMatches: boolean }> {
  const [row] = await gw.db.query<{ balance: string; ledger: string; paid_ok: boolean; bonus_ok: boolean }>(
    `select (u.balance_paid_usd + u.balance_bonus_usd)::text as balance,
            coalesce((select sum(amount_usd) from transactions t where t.user_id = u.id), 0)::text as ledger,
            u.balance_paid_usd = coalesce((select sum(paid_usd) from transactions t where t.user_id = u.id), 0) as paid_ok,
            u.balance_bonus_usd = coalesce((select sum(bonus_usd) from transactions t where t.user_id = u.id), 0) as bonus_ok
       from users u where u.id = $1`,
    [userId],
  );
  return { balance: row!.balance, ledger: row!.ledger, paidMatches: row!.paid_ok, bonusMatches: row!.bonus_ok };
}
