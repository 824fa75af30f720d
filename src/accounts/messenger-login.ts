import { randomInt } from 'node:crypto';
import type { Caller } from '../shared/actor.js';
import { DomainError } from '../shared/errors.js';
import { newId, randomSecret, sha256Hex } from '../shared/ids.js';
import type { SharedState } from '../shared/redis.js';
import { attemptCounter, type AttemptCounter } from '../shared/throttle.js';
import { parseInput } from '../shared/validation.js';
import { messengerTokenInput, type MessengerTokenInput } from './accounts.schemas.js';
import type { LoginThrottleSettings } from './accounts.settings.js';
import { botUrlFor, plausibleToken, requireMessenger, type MessengerDeps, type MessengerLinkStartView } from './messenger-link.js';
import { MessengerLinksRepository, type MessengerAccounts } from './messenger-link.repository.js';

/** A claimed sign-in token's account: the one linked to the messenger identity, or one created for it. */
export interface MessengerSignIn {
  userId: string;
  created: boolean;
}

export interface MessengerLoginDeps extends MessengerDeps {
  /** Sign-in starts per client address share the password sign-in's budget per address. */
  loginThrottle: Pick<LoginThrottleSettings, 'maxAttemptsPerAddress' | 'windowMs'>;
  /** Set with REDIS_URL: the messenger sign-in throttle counts across every gateway process. */
  shared?: SharedState;
}

/** Sign-in tokens reach the bot as `/start login_<token>`. */
export const LOGIN_PREFIX = 'login_';

/**
 * A valid username from the messenger display name (letters, digits, "_", "." and "-"; starting with a letter or
 * digit; 3..24 characters, leaving room for a uniqueness suffix), or `user` when nothing usable is left.
 */
export function usernameFromMessengerName(name: string | null): string {
  const cleaned = (name ?? '')
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9_.-]/g, '')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 24);
  return cleaned.length >= 3 ? cleaned : 'user';
}

/**
 * Signing in with the messenger: the browser starts a short-lived sign-in token (no session needed), the bot's
 * signed webhook confirms it for a messenger identity, and the browser claims it once for that identity's account.
 */
export class MessengerLogin {
  private readonly links: MessengerLinksRepository;
  /** Unauthenticated messenger sign-in starts per client address (each writes a row). */
  private readonly startsByAddress: AttemptCounter;

  constructor(private readonly deps: MessengerLoginDeps) {
    this.links = new MessengerLinksRepository(deps.orm);
    const { maxAttemptsPerAddress, windowMs } = deps.loginThrottle;
    this.startsByAddress = attemptCounter(deps.shared, 'messenger-start', maxAttemptsPerAddress, windowMs, () => deps.clock.now().getTime());
  }

  /** No session needed: a short-lived sign-in token the bot confirms (`/start login_<token>`), hashed at rest. */
  async start(caller: Caller): Promise<MessengerLinkStartView> {
    const m = requireMessenger(this.deps.messenger);
    const wait = await this.startsByAddress.take(caller.clientAddress ?? 'unknown');
    if (wait > 0) throw new DomainError('rate_limited', 'Too many sign-in attempts; try again later', { retryAfterSeconds: wait, reason: 'login_throttled' });
    const token = randomSecret(32);
    const expiresAt = new Date(this.deps.clock.now().getTime() + m.tokenTtlMs);
    await this.links.insert({ tokenHash: sha256Hex(token), initiatedBy: 'login', expiresAt });
    return { token, botUrl: botUrlFor(m, `${LOGIN_PREFIX}${token}`), expiresAt };
  }

  /**
   * Claims a bot-confirmed sign-in token (single use) and answers its account: the one linked to that messenger
   * identity, or a new one created for it (no e-mail, no password). 404 unknown, 400 `link_expired`,
   * 409 `login_pending` (not confirmed yet: poll) or `link_used`.
   */
  async consume(raw: MessengerTokenInput): Promise<MessengerSignIn> {
    const input = parseInput(messengerTokenInput, raw ?? {});
    requireMessenger(this.deps.messenger);
    const now = this.deps.clock.now();
    const tokenHash = sha256Hex(input.token);
    const signedIn = await this.links.claimLogin(tokenHash, now, (accounts, messengerUserId, name) => this.accountFor(accounts, messengerUserId, name));
    if (signedIn) return signedIn;
    const link = await this.links.byTokenHash(tokenHash, this.deps.clock.now());
    if (!link || link.initiatedBy !== 'login') throw new DomainError('not_found', 'Unknown sign-in token', { reason: 'link_not_found' });
    if (link.status === 'expired' || (link.status === 'confirmed' && link.expiresAt.getTime() <= now.getTime())) {
      throw new DomainError('bad_request', 'The sign-in token has expired; start again', { reason: 'link_expired' });
    }
    if (link.status === 'pending') throw new DomainError('conflict', 'Not confirmed in the messenger yet', { reason: 'login_pending' });
    throw new DomainError('conflict', 'The sign-in token was already used', { reason: 'link_used' });
  }

  /** The account linked to the messenger identity, or a new one (username from the messenger name, made unique). */
  private async accountFor(accounts: MessengerAccounts, messengerUserId: string, name: string | null): Promise<MessengerSignIn> {
    const existing = await accounts.ownerOf(messengerUserId);
    if (existing) return { userId: existing, created: false };
    const base = usernameFromMessengerName(name);
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const username = attempt === 0 && base !== 'user' ? base : `${base}_${String(randomInt(0, 1_000_000)).padStart(6, '0')}`;
      const id = newId();
      // A taken username, or the same identity signing in concurrently, is not an error.
      if (await accounts.insert(id, username, messengerUserId, name)) {
        this.deps.log.info({ userId: id }, 'account created by messenger sign-in');
        return { userId: id, created: true };
      }
      const raced = await accounts.ownerOf(messengerUserId);
      if (raced) return { userId: raced, created: false };
    }
    throw new Error('no unique username could be derived for a messenger sign-in');
  }

  /** `/start login_<token>` on the signed webhook: the messenger identity confirms a pending sign-in token. */
  async confirm(token: string, messengerUserId: string, name: string | null): Promise<string> {
    if (!plausibleToken(token)) return 'unknown_token';
    const tokenHash = sha256Hex(token);
    if (await this.links.confirmLogin(tokenHash, messengerUserId, name, this.deps.clock.now())) return 'confirmed';
    const link = await this.links.byTokenHash(tokenHash, this.deps.clock.now());
    if (!link || link.initiatedBy !== 'login') return 'unknown_token';
    return link.status === 'confirmed' || link.status === 'used' ? 'link_used' : link.status;
  }
}
