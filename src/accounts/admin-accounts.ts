import type { MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { requireAdmin, type Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import { formatUsd, money } from '../shared/money.js';
import { Topics, type PubSub } from '../shared/pubsub.js';
import { intParam, parseInput } from '../shared/validation.js';
import type { KeyView } from '../keys/keys.service.js';

/** One account as an operator sees it in the cabinet: identity, balances, credit line, activity. */
export interface AdminAccountView {
  userId: string;
  username: string | null;
  email: string | null;
  emailVerified: boolean;
  isAdmin: boolean;
  balanceUsd: string;
  paidBalanceUsd: string;
  bonusBalanceUsd: string;
  creditLimitUsd: string;
  trustedPartnerUntil: Date | null;
  concurrencyLimit: number | null;
  activeKeys: number;
  activeSessions: number;
  createdAt: Date;
}

/** A key with the limits an operator may override (revoked keys too). */
export interface AdminKeyView extends KeyView {
  rpmLimit: number | null;
  concurrencyLimit: number | null;
  revokedAt: Date | null;
}

const searchInput = z.strictObject({
  search: z.string().trim().max(254, 'Search must be at most 254 characters').optional(),
  limit: intParam(1, 100, 25),
});
export type AdminAccountSearch = z.input<typeof searchInput>;
const userIdInput = z.strictObject({ userId: z.uuid('Not a valid account id') });

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

/** What the cabinet's admin pages read about accounts, and ending an account's sessions. Admins only. */
export class AdminAccountsService {
  constructor(private readonly deps: { orm: MikroORM; pubsub: PubSub; clock: Clock }) {}

  /** Accounts whose name, e-mail or id matches (newest first); every account when the search is empty. */
  async search(actor: Actor, raw: AdminAccountSearch): Promise<AdminAccountView[]> {
    requireAdmin(actor);
    const { search, limit } = parseInput(searchInput, raw);
    const pattern = search ? `%${search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
    const rows = await this.deps.orm.em.fork().execute<AccountRow[]>(
      `select u.id, u.username, u.email, u.email_verified, u.is_admin, u.balance_paid_usd, u.balance_bonus_usd, u.credit_limit_usd,
              u.trusted_partner_until, u.concurrency_limit, u.created_at,
              (select count(*) from api_keys k where k.user_id = u.id and k.revoked_at is null) as active_keys,
              (select count(*) from sessions s where s.user_id = u.id and s.revoked_at is null and s.expires_at > now()) as active_sessions
         from users u
        ${pattern ? `where lower(u.username) like ? or lower(u.email) like ? or u.id::text = ?` : ''}
        order by u.created_at desc, u.id
        limit ?`,
      pattern ? [pattern, pattern, search, limit] : [limit],
    );
    return rows.map((row) => ({
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
    }));
  }

  /** Every key of one account, revoked ones included, with their limit overrides. */
  async keysOf(actor: Actor, raw: { userId: string }): Promise<AdminKeyView[]> {
    requireAdmin(actor);
    const { userId } = parseInput(userIdInput, raw);
    const rows = await this.deps.orm.em.fork().execute<
      { id: string; label: string | null; provider_family: string; route_group: string; pricing_plan: string; monthly_spend_cap_usd: string | null; rpm_limit: number | null; concurrency_limit: number | null; last_used_at: Date | string | null; created_at: Date | string; revoked_at: Date | string | null }[]
    >('select id, label, provider_family, route_group, pricing_plan, monthly_spend_cap_usd, rpm_limit, concurrency_limit, last_used_at, created_at, revoked_at from api_keys where user_id = ? order by created_at desc, id', [userId]);
    return rows.map((row) => ({
      id: row.id,
      label: row.label,
      providerFamily: row.provider_family,
      routeGroup: row.route_group,
      pricingPlan: row.pricing_plan,
      monthlySpendCap: row.monthly_spend_cap_usd === null ? null : formatUsd(row.monthly_spend_cap_usd),
      rpmLimit: row.rpm_limit,
      concurrencyLimit: row.concurrency_limit,
      lastUsed: dateOrNull(row.last_used_at),
      createdAt: new Date(row.created_at),
      revokedAt: dateOrNull(row.revoked_at),
    }));
  }

  /**
   * Ends every open session of an account (a stolen device, a departing employee): the sessions stop
   * authenticating at once, and their websockets close through the same sign-out events as a logout.
   */
  async endSessions(actor: Actor, raw: { userId: string }): Promise<number> {
    requireAdmin(actor);
    const { userId } = parseInput(userIdInput, raw);
    const now = this.deps.clock.now();
    const ended = await this.deps.orm.em.fork().execute<{ id: string }[]>('update sessions set revoked_at = ? where user_id = ? and revoked_at is null returning id', [now, userId]);
    for (const { id } of ended) this.deps.pubsub.publish(Topics.SessionEvents, userId, { kind: 'signed_out', sessionId: id, at: now });
    return ended.length;
  }
}
