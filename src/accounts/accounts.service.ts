import type { MikroORM } from '@mikro-orm/postgresql';
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
import { loginInput, registerInput, transactionsQuery, type LoginInput, type RegisterInput, type TransactionsQuery } from './accounts.schemas.js';
import { AccountsRepository, isUniqueViolation } from './accounts.repository.js';
import type { LoginThrottleSettings, RegisterThrottleSettings, SessionSettings } from './accounts.settings.js';
import { hashPassword, verifyDecoy, verifyPassword } from './password.js';
import type { IdentityService } from './identity.service.js';
import type { User } from './user.entity.js';
import { balanceOf, toAccountView, type AccountView, type TransactionView } from './account-view.js';

export type { TransactionView } from './account-view.js';

export interface AccountSummaryView {
  userId: string;
  email: string | null;
  balanceUsd: string;
  activeKeys: number;
  usageUsd: string;
  topupUsd: string;
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

/** The settings AccountsService reads. */
export interface AccountsSettings {
  session: SessionSettings;
  loginThrottle: LoginThrottleSettings;
  registerThrottle: RegisterThrottleSettings;
}

export interface AccountsDeps {
  orm: MikroORM;
  settings: AccountsSettings;
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

  private readonly accounts: AccountsRepository;

  constructor(private readonly deps: AccountsDeps) {
    this.accounts = new AccountsRepository(deps.orm);
    const { maxFailuresPerAccount, maxAttemptsPerAddress, windowMs } = deps.settings.loginThrottle;
    const now = () => deps.clock.now().getTime();
    this.failuresByAccount = attemptCounter(deps.shared, 'login-account', maxFailuresPerAccount, windowMs, now);
    this.attemptsByAddress = attemptCounter(deps.shared, 'login-address', maxAttemptsPerAddress, windowMs, now);
    const { maxPerAddress, windowMs: registerWindowMs } = deps.settings.registerThrottle;
    this.registrationsByAddress = attemptCounter(deps.shared, 'register-address', maxPerAddress, registerWindowMs, now);
  }

  async register(caller: Caller, raw: RegisterInput): Promise<SignedIn> {
    const input = parseInput(registerInput, raw);
    await this.assertAvailable(input.username, input.email);
    // Counted once the request is valid and its names free, so typos and taken names cost nothing.
    const wait = await this.registrationsByAddress.take(caller.clientAddress ?? 'unknown');
    if (wait > 0) throw new DomainError('rate_limited', 'Too many accounts registered from this address; try again later', { retryAfterSeconds: wait, reason: 'registration_throttled' });
    const passwordHash = await hashPassword(input.password);
    let user: User;
    try {
      user = await this.accounts.insertUser({ username: input.username, email: input.email, passwordHash });
    } catch (error) {
      // Two registrations raced past assertAvailable; the unique indexes decide.
      if (isUniqueViolation(error)) await this.assertAvailable(input.username, input.email);
      throw error;
    }
    this.deps.log.info({ userId: user.id }, 'account registered');
    await this.deps.identity?.sendVerification(user.id, input.email).catch((error: unknown) => {
      this.deps.log.warn({ userId: user.id, err: (error as Error).message }, 'verification code not sent');
    });
    return this.startSession(user, caller);
  }

  private async assertAvailable(username: string, email: string): Promise<void> {
    const taken = await this.accounts.namesTaken(username, email);
    if (taken.username) throw new DomainError('conflict', 'This username is already taken', { reason: 'username_taken' });
    if (taken.email) throw new DomainError('conflict', 'An account with this e-mail already exists', { reason: 'email_taken' });
  }

  async login(caller: Caller, raw: LoginInput): Promise<SignedIn> {
    const input = parseInput(loginInput, raw);
    const login = input.login.toLowerCase();
    const throttled = (wait: number) => new DomainError('rate_limited', 'Too many sign-in attempts; try again later', { retryAfterSeconds: wait, reason: 'login_throttled' });
    // The address is counted first (it bounds the work an address can cause, the look-up included).
    const addressWait = await this.attemptsByAddress.take(caller.clientAddress ?? 'unknown');
    if (addressWait > 0) throw throttled(addressWait);

    const user = await this.accounts.userByLogin(login);
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
    return this.startSession(user, caller);
  }

  /** Signing in with the messenger: a bot-confirmed sign-in token (single use) starts a session like login. */
  async signInWithMessenger(caller: Caller, raw: { token: string }): Promise<SignedIn> {
    if (!this.deps.identity) throw new DomainError('not_found', 'Messenger sign-in is not configured', { reason: 'messenger_not_configured' });
    const { userId } = await this.deps.identity.consumeMessengerLogin(raw);
    return this.startSession(await this.loadUser(userId), caller);
  }

  private async startSession(user: User, caller: Caller): Promise<SignedIn> {
    const now = this.deps.clock.now();
    const sessionToken = SESSION_TOKEN_PREFIX + randomSecret(32);
    const session = await this.accounts.insertSession({
      userId: user.id,
      tokenHash: sha256Hex(sessionToken),
      createdAt: now,
      lastSeenAt: now,
      expiresAt: new Date(now.getTime() + this.deps.settings.session.absoluteMs),
      clientAddress: caller.clientAddress,
      userAgent: caller.userAgent?.slice(0, 512) ?? null,
    });
    this.deps.pubsub.publish(Topics.SessionEvents, user.id, { kind: 'signed_in', sessionId: session.id, at: now });
    return { account: toAccountView(user), sessionToken, expiresAt: session.expiresAt };
  }

  /** Resolves a session token to its actor, or null when unknown, revoked or expired. */
  async authenticate(sessionToken: string): Promise<Actor | null> {
    if (!sessionToken.startsWith(SESSION_TOKEN_PREFIX) || sessionToken.length > 128) return null;
    return this.liveSession({ tokenHash: sha256Hex(sessionToken) });
  }

  /**
   * The session's actor if it is valid now (not revoked, not expired, not idle), else null. For
   * connections that outlive one request (graphql-ws): each operation runs as a session valid now.
   */
  async sessionActor(sessionId: string): Promise<Actor | null> {
    return this.liveSession({ id: sessionId });
  }

  private async liveSession(by: { tokenHash: string } | { id: string }): Promise<Actor | null> {
    const now = this.deps.clock.now();
    const session = await this.accounts.openSession(by);
    if (!session) return null;
    const lastSeen = session.lastSeenAt.getTime();
    if (session.expiresAt.getTime() <= now.getTime() || lastSeen + this.deps.settings.session.idleMs <= now.getTime()) return null;
    if (now.getTime() - lastSeen > TOUCH_INTERVAL_MS) await this.accounts.touchSession(session.id, now);
    return { userId: session.userId, isAdmin: session.isAdmin, sessionId: session.id };
  }

  async logout(actor: Actor): Promise<void> {
    const now = this.deps.clock.now();
    await this.accounts.revokeSession(actor.sessionId, now);
    this.deps.pubsub.publish(Topics.SessionEvents, actor.userId, { kind: 'signed_out', sessionId: actor.sessionId, at: now });
  }

  async me(actor: Actor): Promise<AccountView> {
    return this.accountOf(actor.userId);
  }

  /** The account behind an API key (for /v1/me, where there is no session). */
  async accountOf(userId: string): Promise<AccountView> {
    return toAccountView(await this.loadUser(userId));
  }

  async summary(actor: Actor): Promise<AccountSummaryView> {
    const user = await this.loadUser(actor.userId);
    const totals = await this.accounts.totals(user.id);
    return {
      userId: user.id,
      email: user.email,
      balanceUsd: balanceOf(user),
      activeKeys: totals.activeKeys,
      usageUsd: formatUsd(totals.usageUsd ?? 0),
      topupUsd: formatUsd(totals.topupUsd ?? 0),
    };
  }

  /** The account's ledger, newest first, one row per money effect (see AccountsRepository.ledger). */
  async transactions(actor: Actor, raw: TransactionsQuery): Promise<TransactionView[]> {
    const { limit } = parseInput(transactionsQuery, raw);
    return this.accounts.ledger(actor.userId, limit);
  }

  private async loadUser(userId: string): Promise<User> {
    const user = await this.accounts.user(userId);
    // A session whose account vanished is as good as signed out.
    if (!user) throw new DomainError('unauthenticated', 'Not signed in');
    return user;
  }
}
