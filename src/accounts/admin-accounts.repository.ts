import type { MikroORM } from '@mikro-orm/postgresql';
import { formatUsd, money } from '../shared/money.js';
import type { AdminAccountView } from './account-view.js';

/** What the cabinet's admin pages read about accounts: set-based reads, SQL on the ORM's connection. */

interface AccountRow {
  id: string;
  username: string | null;
  email: string | null;
  email_verified: boolean;
  is_admin: boolean;
  balance_paid_usd: string;
  balance_bonus_usd: string;
  credit_limit_usd: string;
  trusted_partner_until: Date | string | null;
  concurrency_limit: number | null;
  created_at: Date | string;
  active_keys: string;
  active_sessions: string;
}


/** Raw SQL answers timestamps as text: views carry dates. */
function dateOrNull(value: Date | string | null): Date | null {
  return value === null ? null : new Date(value);
}

export class AdminAccountsRepository {
  constructor(private readonly orm: MikroORM) {}

  /**
   * The newest `limit` accounts whose lower-cased username or e-mail is like `pattern` or whose id is
   * `search`; every account when `pattern` is null.
   */
  async search(pattern: string | null, search: string | undefined, limit: number): Promise<AdminAccountView[]> {
    const rows = await this.orm.em.fork().execute<AccountRow[]>(
      // An organization (issue 56) is a ledger owner of its own: operators find and fund it under its name.
      `select u.id, coalesce(u.username, o.name) as username, u.email, u.email_verified, u.is_admin, u.balance_paid_usd, u.balance_bonus_usd, u.credit_limit_usd,
              u.trusted_partner_until, u.concurrency_limit, u.created_at,
              (select count(*) from api_keys k where k.user_id = u.id and k.revoked_at is null) as active_keys,
              (select count(*) from sessions s where s.user_id = u.id and s.revoked_at is null and s.expires_at > now()) as active_sessions
         from users u left join organizations o on o.id = u.id
        ${pattern ? `where lower(coalesce(u.username, o.name)) like ? or lower(u.email) like ? or u.id::text = ?` : ''}
        order by u.created_at desc, u.id
        limit ?`,
      pattern ? [pattern, pattern, search, limit] : [limit],
    );
    return rows.map(toAdminAccountView);
  }

}

function toAdminAccountView(row: AccountRow): AdminAccountView {
  return {
    userId: row.id,
    username: row.username,
    email: row.email,
    emailVerified: row.email_verified,
    isAdmin: row.is_admin,
    balanceUsd: formatUsd(money(row.balance_paid_usd).plus(row.balance_bonus_usd)),
    paidBalanceUsd: formatUsd(row.balance_paid_usd),
    bonusBalanceUsd: formatUsd(row.balance_bonus_usd),
    creditLimitUsd: formatUsd(row.credit_limit_usd),
    trustedPartnerUntil: dateOrNull(row.trusted_partner_until),
    concurrencyLimit: row.concurrency_limit,
    activeKeys: Number(row.active_keys),
    activeSessions: Number(row.active_sessions),
    createdAt: new Date(row.created_at),
  };
}
