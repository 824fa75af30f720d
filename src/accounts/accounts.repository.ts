import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { TOPUP_KINDS, USAGE_BATCH_KEY_PREFIX, USAGE_KINDS } from '../ledger/kinds.js';
import { formatUsd } from '../shared/money.js';
import type { TransactionView } from './account-view.js';
import { Session } from './session.entity.js';
import { User } from './user.entity.js';

/**
 * The users and sessions tables as the accounts service and the admin bootstrap use them. An account and
 * its sessions are entities (created, or loaded, changed and flushed, through MikroORM's unit of work);
 * the session check every authenticated request makes, and the account's sums and ledger, are SQL on the
 * same connection.
 */

/** What a new account is made of; the entity's defaults fill the rest. */
export interface NewUser {
  username: string;
  email: string;
  passwordHash: string;
  emailVerified?: boolean;
  isAdmin?: boolean;
}

export interface NewSession {
  userId: string;
  tokenHash: string;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
  clientAddress: string | null;
  userAgent: string | null;
}

/** An unrevoked session and its account's admin flag (whether it is still valid is the service's rule). */
export interface OpenSession {
  id: string;
  userId: string;
  isAdmin: boolean;
  lastSeenAt: Date;
  expiresAt: Date;
}

/** An account's sums: what its usage cost, what it topped up (USD, null without rows) and its active keys. */
export interface AccountTotals {
  usageUsd: string | null;
  topupUsd: string | null;
  activeKeys: number;
}

interface OpenSessionRow {
  id: string;
  user_id: string;
  is_admin: boolean;
  last_seen_at: Date;
  expires_at: Date;
}

interface TransactionRow {
  id: string;
  user_id: string;
  amount_usd: string;
  kind: string;
  api_key_id: string | null;
  provider: string | null;
  model: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  created_at: Date;
}

/** True when an insert failed on a unique index (two registrations racing for one name). */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof UniqueConstraintViolationException;
}

export class AccountsRepository {
  constructor(private readonly orm: MikroORM) {}

  private em() {
    return this.orm.em.fork();
  }

  user(id: string): Promise<User | null> {
    return this.em().findOne(User, { id });
  }

  /** A login with "@" is an e-mail (stored lower-case), otherwise a username (matched case-insensitively). */
  async userByLogin(login: string): Promise<User | null> {
    const em = this.em();
    if (login.includes('@')) return em.findOne(User, { email: login });
    const [row] = await em.execute<{ id: string }[]>('select id from users where lower(username) = ?', [login]);
    return row ? em.findOne(User, { id: row.id }) : null;
  }

  /** Ids of the accounts whose username or e-mail is `login` (case-insensitively). */
  async idsByLogin(login: string): Promise<string[]> {
    const rows = await this.em().execute<{ id: string }[]>('select id from users where lower(username) = lower(?) or lower(email) = lower(?)', [login, login]);
    return rows.map((row) => row.id);
  }

  /** Whether another account already has this username or this e-mail (case-insensitively). */
  async namesTaken(username: string, email: string): Promise<{ username: boolean; email: boolean }> {
    const [row] = await this.em().execute<{ username_taken: boolean; email_taken: boolean }[]>(
      `select exists(select 1 from users where lower(username) = lower(?)) as username_taken,
              exists(select 1 from users where lower(email) = lower(?)) as email_taken`,
      [username, email],
    );
    return { username: row!.username_taken, email: row!.email_taken };
  }

  /** Inserts an account; a name taken meanwhile throws (see isUniqueViolation). */
  async insertUser(fields: NewUser): Promise<User> {
    const em = this.em();
    const user = em.create(User, fields);
    await em.flush();
    return user;
  }

  /** Loads the account, makes it an admin and flushes the change. */
  async makeAdmin(id: string): Promise<User> {
    const em = this.em();
    const user = await em.findOneOrFail(User, { id });
    user.isAdmin = true;
    await em.flush();
    return user;
  }

  async hasAdmin(): Promise<boolean> {
    const rows = await this.em().execute<{ found: number }[]>('select 1 as found from users where is_admin limit 1');
    return rows.length > 0;
  }

  async insertSession(fields: NewSession): Promise<Session> {
    const em = this.em();
    const session = em.create(Session, fields);
    await em.flush();
    return session;
  }

  /** The unrevoked session with this token hash or id (every authenticated request asks: one indexed join). */
  async openSession(by: { tokenHash: string } | { id: string }): Promise<OpenSession | null> {
    const [where, value] = 'tokenHash' in by ? ['s.token_hash = ?', by.tokenHash] : ['s.id = ?', by.id];
    const [row] = await this.em().execute<OpenSessionRow[]>(
      `select s.id, s.user_id, u.is_admin, s.last_seen_at, s.expires_at
         from sessions s join users u on u.id = s.user_id
        where ${where} and s.revoked_at is null`,
      [value],
    );
    return row ? { id: row.id, userId: row.user_id, isAdmin: row.is_admin, lastSeenAt: new Date(row.last_seen_at), expiresAt: new Date(row.expires_at) } : null;
  }

  async touchSession(id: string, at: Date): Promise<void> {
    await this.em().execute('update sessions set last_seen_at = ? where id = ?', [at, id]);
  }

  async revokeSession(id: string, at: Date): Promise<void> {
    await this.em().execute('update sessions set revoked_at = ? where id = ? and revoked_at is null', [at, id]);
  }

  /** Revokes every open session of the account; answers their ids. */
  async revokeSessionsOf(userId: string, at: Date): Promise<string[]> {
    const rows = await this.em().execute<{ id: string }[]>('update sessions set revoked_at = ? where user_id = ? and revoked_at is null returning id', [at, userId]);
    return rows.map((row) => row.id);
  }

  async totals(userId: string): Promise<AccountTotals> {
    const [row] = await this.em().execute<{ usage: string | null; topup: string | null; active_keys: string }[]>(
      `select (select -sum(amount_usd) from transactions where user_id = ? and kind in (${USAGE_KINDS.map(() => '?').join(',')})) as usage,
              (select sum(amount_usd) from transactions where user_id = ? and kind in (${TOPUP_KINDS.map(() => '?').join(',')})) as topup,
              (select count(*) from api_keys where user_id = ? and revoked_at is null) as active_keys`,
      [userId, ...USAGE_KINDS, userId, ...TOPUP_KINDS, userId],
    );
    return { usageUsd: row!.usage, topupUsd: row!.topup, activeKeys: Number(row!.active_keys) };
  }

  /**
   * The account's ledger, newest first, one row per money effect: a usage batch's debit (one row for the
   * billed requests of one account, key and month in a batch, see src/usage/usage-recorder.ts) is shown as
   * the requests it covers, each its usage event's charge, dated when the request started; every other row
   * as it is. Both sides read along an index, newest first: the account's `limit` newest billed events, then
   * its other ledger rows no older than the oldest of those (when there are `limit` of them, no older row
   * can be shown), so the batch debits stepped over are about as many as the events shown. A batch debit of a
   * month with no usage event of the account left is shown as itself: USAGE_RETENTION_MONTHS dropped that month's
   * events, and the rows must still add up to the balance (one index probe per debit, on (user_id, created_at)).
   * A debit's month is that of its requests' completion and an event's partition that of its start, so a request
   * that ran across the first midnight of a kept month after a dropped one is the one case shown by neither.
   */
  async ledger(userId: string, limit: number): Promise<TransactionView[]> {
    const rows = await this.em().execute<TransactionRow[]>(
      `with usage as (
         select e.id, e.user_id, -e.amount_usd as amount_usd, 'usage' as kind, e.api_key_id, e.provider_family as provider, e.model,
                e.prompt_tokens, e.completion_tokens, e.created_at
           from usage_events e
          where e.user_id = ? and e.transaction_id is not null
            and exists (select 1 from transactions t where t.id = e.transaction_id and t.idempotency_key like '${USAGE_BATCH_KEY_PREFIX}%')
          order by e.created_at desc, e.id desc limit ?),
       since as (select case when count(*) < ? then '-infinity' else min(created_at) end as at from usage)
       select * from (
         (select id, user_id, amount_usd, kind, api_key_id, provider, model, prompt_tokens, completion_tokens, created_at
            from transactions t
           where user_id = ? and created_at >= (select at from since)
             and (idempotency_key not like '${USAGE_BATCH_KEY_PREFIX}%'
                  or not exists (select 1 from usage_events e
                                  where e.user_id = t.user_id
                                    and e.created_at >= date_trunc('month', t.created_at at time zone 'utc') at time zone 'utc'
                                    and e.created_at < (date_trunc('month', t.created_at at time zone 'utc') + interval '1 month') at time zone 'utc'))
           order by created_at desc, id desc limit ?)
         union all
         select * from usage) ledger
       order by created_at desc, id desc limit ?`,
      [userId, limit, limit, userId, limit, limit],
    );
    return rows.map(toTransactionView);
  }
}

function toTransactionView(row: TransactionRow): TransactionView {
  return {
    id: row.id,
    userId: row.user_id,
    amountUsd: formatUsd(row.amount_usd),
    kind: row.kind,
    apiKeyId: row.api_key_id,
    provider: row.provider,
    model: row.model,
    promptTokens: row.prompt_tokens,
    completionTokens: row.completion_tokens,
    createdAt: new Date(row.created_at),
  };
}
