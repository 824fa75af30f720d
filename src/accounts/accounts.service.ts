import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { Config } from '../config.js';
import type { Actor, Caller } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import { DomainError } from '../shared/errors.js';
import { randomSecret, sha256Hex } from '../shared/ids.js';
import type { Logger } from '../shared/logging.js';
import { formatUsd } from '../shared/money.js';
import { Topics, type PubSub } from '../shared/pubsub.js';
import { attemptCounter, type AttemptCounter } from '../shared/throttle.js';
import type { SharedState } from '../shared/redis.js';
import { parseInput } from '../shared/validation.js';
import { TOPUP_KINDS, USAGE_BATCH_KEY_PREFIX, USAGE_KINDS } from '../ledger/kinds.js';
import { loginInput, registerInput, transactionsQuery, type LoginInput, type RegisterInput, type TransactionsQuery } from './accounts.schemas.js';
import { hashPassword, verifyDecoy, verifyPassword } from './password.js';
import { Session } from './session.entity.js';
import type { IdentityService } from './identity.service.js';
import { User } from './user.entity.js';
import { balanceOf, toAccountView, type AccountView } from './account-view.js';

export interface AccountSummaryView {
  userId: string;
  email: string | null;
  balanceUsd: string;
  activeKeys: number;
  usageUsd: string;
  topupUsd: string;
}

export interface TransactionView {
  id: string;
  userId: string;
  amountUsd: string;
  kind: string;
  apiKeyId: string | null;
  provider: string | null;
  model: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
  createdAt: Date;
}

/** A new sign-in: the account, and the opaque token the caller keeps (shown once). */
export interface SignedIn {
  account: AccountView;
  sessionToken: string;
  expiresAt: Date;
}


const SESSION_TOKEN_PREFIX = 'bks_';
/** lastSeenAt is refreshed at most this often, so authenticated reads are not all writes. */
const TOUCH_INTERVAL_MS = 60_000;

export interface AccountsDeps {
  orm: MikroORM;
  config: Config;
  clock: Clock;
  pubsub: PubSub;
  log: Logger;
  /** Set with REDIS_URL: sign-in throttles count across every gateway process. */
  shared?: SharedState;
  /** Sends the verification code of a new account; claims messenger sign-in tokens. */
  identity?: Pick<IdentityService, 'sendVerification' | 'consumeMessengerLogin'>;
}

export class AccountsService {
  /** Sign-in attempts not (yet) followed by a success, per account; a success clears them. */
  private readonly failuresByAccount: AttemptCounter;
  private readonly attemptsByAddress: AttemptCounter;
  /** Registrations per client address: each costs a password hash and may send an e-mail to any address given. */
  private readonly registrationsByAddress: AttemptCounter;

  constructor(private readonly deps: AccountsDeps) {
    const { maxFailuresPerAccount, maxAttemptsPerAddress, windowMs } = deps.config.loginThrottle;
    const now = () => deps.clock.now().getTime();
    this.failuresByAccount = attemptCounter(deps.shared, 'login-account', maxFailuresPerAccount, windowMs, now);
    this.attemptsByAddress = attemptCounter(deps.shared, 'login-address', maxAttemptsPerAddress, windowMs, now);
    const { maxPerAddress, windowMs: registerWindowMs } = deps.config.registerThrottle;
    this.registrationsByAddress = attemptCounter(deps.shared, 'register-address', maxPerAddress, registerWindowMs, now);
  }

  private em(): EntityManager {
    return this.deps.orm.em.fork();
  }

  async register(caller: Caller, raw: RegisterInput): Promise<SignedIn> {
    const input = parseInput(registerInput, raw);
    const em = this.em();
    await this.assertAvailable(em, input.username, input.email);
    // Counted once the request is valid and its names free, so typos and taken names cost nothing.
    const wait = await this.registrationsByAddress.take(caller.clientAddress ?? 'unknown');
    if (wait > 0) throw new DomainError('rate_limited', 'Too many accounts registered from this address; try again later', { retryAfterSeconds: wait, reason: 'registration_throttled' });
    const user = em.create(User, {
      username: input.username,
      email: input.email,
      passwordHash: await hashPassword(input.password),
    });
    try {
      await em.flush();
    } catch (error) {
      // Two registrations raced past assertAvailable; the unique indexes decide.
      if (error instanceof UniqueConstraintViolationException) await this.assertAvailable(this.em(), input.username, input.email);
      throw error;
    }
    this.deps.log.info({ userId: user.id }, 'account registered');
    await this.deps.identity?.sendVerification(user.id, input.email).catch((error: unknown) => {
      this.deps.log.warn({ userId: user.id, err: (error as Error).message }, 'verification code not sent');
    });
    return this.startSession(em, user, caller);
  }

  private async assertAvailable(em: EntityManager, username: string, email: string): Promise<void> {
    const rows = await em.execute<{ username_taken: boolean; email_taken: boolean }[]>(
      `select exists(select 1 from users where lower(username) = lower(?)) as username_taken,
              exists(select 1 from users where lower(email) = lower(?)) as email_taken`,
      [username, email],
    );
    const { username_taken, email_taken } = rows[0]!;
    if (username_taken) throw new DomainError('conflict', 'This username is already taken', { reason: 'username_taken' });
    if (email_taken) throw new DomainError('conflict', 'An account with this e-mail already exists', { reason: 'email_taken' });
  }

  async login(caller: Caller, raw: LoginInput): Promise<SignedIn> {
    const input = parseInput(loginInput, raw);
    const login = input.login.toLowerCase();
    const throttled = (wait: number) => new DomainError('rate_limited', 'Too many sign-in attempts; try again later', { retryAfterSeconds: wait, reason: 'login_throttled' });
    // The address is counted first (it bounds the work an address can cause, the look-up included).
    const addressWait = await this.attemptsByAddress.take(caller.clientAddress ?? 'unknown');
    if (addressWait > 0) throw throttled(addressWait);

    const em = this.em();
    const user = await this.findUserByLogin(em, login);
    // Keyed on the account once resolved, so its username and its e-mail share one budget; counted before
    // the password is checked, so parallel guesses cannot all pass one check.
    const accountKey = user ? `user:${user.id}` : `login:${login}`;
    const accountWait = await this.failuresByAccount.take(accountKey);
    if (accountWait > 0) throw throttled(accountWait);
    const valid = user?.passwordHash ? await verifyPassword(user.passwordHash, input.password) : await verifyDecoy(input.password);
    if (!user || !valid) {
      this.deps.log.info({ reason: user ? 'wrong_password' : 'unknown_login' }, 'sign-in refused');
      throw new DomainError('invalid_credentials', 'Wrong login or password');
    }
    await this.failuresByAccount.reset(accountKey);
    return this.startSession(em, user, caller);
  }

  /** Signing in with the messenger: a bot-confirmed sign-in token (single use) starts a session like login. */
  async signInWithMessenger(caller: Caller, raw: { token: string }): Promise<SignedIn> {
    if (!this.deps.identity) throw new DomainError('not_found', 'Messenger sign-in is not configured', { reason: 'messenger_not_configured' });
    const { userId } = await this.deps.identity.consumeMessengerLogin(raw);
    const em = this.em();
    return this.startSession(em, await this.loadUser(em, userId), caller);
  }

  /** A login with "@" is an e-mail (stored lower-case), otherwise a username (matched case-insensitively). */
  private async findUserByLogin(em: EntityManager, login: string): Promise<User | null> {
    if (login.includes('@')) return em.findOne(User, { email: login });
    const [row] = await em.execute<{ id: string }[]>('select id from users where lower(username) = ?', [login]);
    return row ? em.findOne(User, { id: row.id }) : null;
  }

  private async startSession(em: EntityManager, user: User, caller: Caller): Promise<SignedIn> {
    const now = this.deps.clock.now();
    const sessionToken = SESSION_TOKEN_PREFIX + randomSecret(32);
    const session = em.create(Session, {
      userId: user.id,
      tokenHash: sha256Hex(sessionToken),
      createdAt: now,
      lastSeenAt: now,
      expiresAt: new Date(now.getTime() + this.deps.config.session.absoluteMs),
      clientAddress: caller.clientAddress,
      userAgent: caller.userAgent?.slice(0, 512) ?? null,
    });
    await em.flush();
    this.deps.pubsub.publish(Topics.SessionEvents, user.id, { kind: 'signed_in', sessionId: session.id, at: now });
    return { account: toAccountView(user), sessionToken, expiresAt: session.expiresAt };
  }

  /** Resolves a session token to its actor, or null when unknown, revoked or expired. */
  async authenticate(sessionToken: string): Promise<Actor | null> {
    if (!sessionToken.startsWith(SESSION_TOKEN_PREFIX) || sessionToken.length > 128) return null;
    return this.liveSession('s.token_hash = ?', sha256Hex(sessionToken));
  }

  /**
   * The session's actor if it is valid now (not revoked, not expired, not idle), else null. For
   * connections that outlive one request (graphql-ws): each operation runs as a session valid now.
   */
  async sessionActor(sessionId: string): Promise<Actor | null> {
    return this.liveSession('s.id = ?', sessionId);
  }

  private async liveSession(where: 's.token_hash = ?' | 's.id = ?', value: string): Promise<Actor | null> {
    const em = this.em();
    const now = this.deps.clock.now();
    const rows = await em.execute<{ id: string; user_id: string; is_admin: boolean; last_seen_at: Date; expires_at: Date }[]>(
      `select s.id, s.user_id, u.is_admin, s.last_seen_at, s.expires_at
         from sessions s join users u on u.id = s.user_id
        where ${where} and s.revoked_at is null`,
      [value],
    );
    const row = rows[0];
    if (!row) return null;
    const lastSeen = new Date(row.last_seen_at).getTime();
    if (new Date(row.expires_at).getTime() <= now.getTime() || lastSeen + this.deps.config.session.idleMs <= now.getTime()) return null;
    if (now.getTime() - lastSeen > TOUCH_INTERVAL_MS) {
      await em.execute('update sessions set last_seen_at = ? where id = ?', [now, row.id]);
    }
    return { userId: row.user_id, isAdmin: row.is_admin, sessionId: row.id };
  }

  async logout(actor: Actor): Promise<void> {
    const em = this.em();
    const now = this.deps.clock.now();
    await em.nativeUpdate(Session, { id: actor.sessionId, revokedAt: null }, { revokedAt: now });
    this.deps.pubsub.publish(Topics.SessionEvents, actor.userId, { kind: 'signed_out', sessionId: actor.sessionId, at: now });
  }

  async me(actor: Actor): Promise<AccountView> {
    return this.accountOf(actor.userId);
  }

  /** The account behind an API key (for /v1/me, where there is no session). */
  async accountOf(userId: string): Promise<AccountView> {
    return toAccountView(await this.loadUser(this.em(), userId));
  }

  async summary(actor: Actor): Promise<AccountSummaryView> {
    const em = this.em();
    const user = await this.loadUser(em, actor.userId);
    const [totals] = await em.execute<{ usage: string | null; topup: string | null; active_keys: string }[]>(
      `select (select -sum(amount_usd) from transactions where user_id = ? and kind in (${USAGE_KINDS.map(() => '?').join(',')})) as usage,
              (select sum(amount_usd) from transactions where user_id = ? and kind in (${TOPUP_KINDS.map(() => '?').join(',')})) as topup,
              (select count(*) from api_keys where user_id = ? and revoked_at is null) as active_keys`,
      [user.id, ...USAGE_KINDS, user.id, ...TOPUP_KINDS, user.id],
    );
    return {
      userId: user.id,
      email: user.email,
      balanceUsd: balanceOf(user),
      activeKeys: Number(totals!.active_keys),
      usageUsd: formatUsd(totals!.usage ?? 0),
      topupUsd: formatUsd(totals!.topup ?? 0),
    };
  }

  /**
   * The account's ledger, newest first, one row per money effect: a usage batch's debit (one row for the
   * billed requests of one account, key and month in a batch, see src/usage/usage-recorder.ts) is shown as
   * the requests it covers, each its usage event's charge, dated when the request started; every other row
   * as it is. Both sides read along an index, newest first: the account's `limit` newest billed events, then
   * its other ledger rows no older than the oldest of those (when there are `limit` of them, no older row
   * can be shown), so the batch debits stepped over are about as many as the events shown.
   */
  async transactions(actor: Actor, raw: TransactionsQuery): Promise<TransactionView[]> {
    const { limit } = parseInput(transactionsQuery, raw);
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
            from transactions
           where user_id = ? and created_at >= (select at from since) and idempotency_key not like '${USAGE_BATCH_KEY_PREFIX}%'
           order by created_at desc, id desc limit ?)
         union all
         select * from usage) ledger
       order by created_at desc, id desc limit ?`,
      [actor.userId, limit, limit, actor.userId, limit, limit],
    );
    return rows.map(toTransactionView);
  }

  private async loadUser(em: EntityManager, userId: string): Promise<User> {
    const user = await em.findOne(User, { id: userId });
    // A session whose account vanished is as good as signed out.
    if (!user) throw new DomainError('unauthenticated', 'Not signed in');
    return user;
  }
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
