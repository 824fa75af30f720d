import type { MikroORM } from '@mikro-orm/postgresql';
import type { Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import { DomainError } from '../shared/errors.js';
import { randomSecret, sha256Hex } from '../shared/ids.js';
import type { Logger } from '../shared/logging.js';
import { parseInput } from '../shared/validation.js';
import { messengerStatusQuery, messengerTokenInput, type MessengerStatusQuery, type MessengerTokenInput } from './accounts.schemas.js';
import { AccountsRepository } from './accounts.repository.js';
import type { MessengerSettings } from './accounts.settings.js';
import { MessengerLinksRepository, type MessengerLink } from './messenger-link.repository.js';
import type { User } from './user.entity.js';

export interface MessengerLinksView {
  linked: boolean;
  messengerLabel: string | null;
  hasPassword: boolean;
  email: string | null;
  emailVerified: boolean;
}

export interface MessengerLinkStatusView extends MessengerLinksView {
  status: string | null;
  expiresAt: Date | null;
  initiatedBy: string | null;
  errorCode: string | null;
  botUrl: string | null;
}

export interface MessengerLinkStartView {
  token: string;
  botUrl: string;
  expiresAt: Date;
}

export interface MessengerDeps {
  orm: MikroORM;
  clock: Clock;
  log: Logger;
  /** Null: the operator configured no messenger, and every messenger request answers 404 `messenger_not_configured`. */
  messenger: MessengerSettings | null;
}

/** Messenger link rows are kept this long past their expiry (a late status poll still gets `expired`), then purged. */
export const MESSENGER_LINK_RETENTION_MS = 24 * 3_600_000;

/** Link and sign-in tokens the bot may carry: shorter or longer ones are not looked up. */
export function plausibleToken(token: string): boolean {
  return token.length >= 32 && token.length <= 256;
}

export function requireMessenger(settings: MessengerSettings | null): MessengerSettings {
  if (!settings) throw new DomainError('not_found', 'Messenger linking is not configured', { reason: 'messenger_not_configured' });
  return settings;
}

/** The bot's address, opening it with `start=<token>` when there is a token to carry. */
export function botUrlFor(settings: MessengerSettings | null, token: string | null): string {
  const m = requireMessenger(settings);
  if (!token) return m.botUrl;
  const url = new URL(m.botUrl);
  url.searchParams.set('start', token);
  return url.toString();
}

function linksView(user: User): MessengerLinksView {
  return {
    linked: user.messengerUserId !== null,
    messengerLabel: user.messengerUserId ? (user.messengerName ?? user.messengerUserId) : null,
    hasPassword: user.passwordHash !== null,
    email: user.email,
    emailVerified: user.emailVerified,
  };
}

/**
 * Linking a messenger identity to an account (DESIGN.md: Messenger linking): started in the cabinet and
 * finished by the bot's signed webhook, or started in the bot and confirmed in the cabinet.
 */
export class MessengerLinking {
  private readonly links: MessengerLinksRepository;
  private readonly accounts: AccountsRepository;

  constructor(private readonly deps: MessengerDeps) {
    this.links = new MessengerLinksRepository(deps.orm);
    this.accounts = new AccountsRepository(deps.orm);
  }

  private async loadUser(userId: string): Promise<User> {
    const user = await this.accounts.user(userId);
    if (!user) throw new DomainError('unauthenticated', 'Not signed in');
    return user;
  }

  private findLink(token: string): Promise<MessengerLink | null> {
    return this.links.byTokenHash(sha256Hex(token), this.deps.clock.now());
  }

  async linksOf(actor: Actor): Promise<MessengerLinksView> {
    return linksView(await this.loadUser(actor.userId));
  }

  /** Cabinet-initiated: the bot finishes it when its signed webhook reports `/start <token>`. */
  async start(actor: Actor): Promise<MessengerLinkStartView> {
    const m = requireMessenger(this.deps.messenger);
    const user = await this.loadUser(actor.userId);
    if (user.messengerUserId) throw new DomainError('conflict', 'A messenger is already linked', { reason: 'messenger_already_linked' });
    const token = randomSecret(32);
    const expiresAt = new Date(this.deps.clock.now().getTime() + m.tokenTtlMs);
    await this.links.insert({ tokenHash: sha256Hex(token), initiatedBy: 'cabinet', userId: user.id, expiresAt });
    return { token, botUrl: botUrlFor(m, token), expiresAt };
  }

  /** A link the caller may see: one they started, or a bot-initiated one still open to anyone holding the token. */
  async status(actor: Actor, raw: MessengerStatusQuery): Promise<MessengerLinkStatusView> {
    const input = parseInput(messengerStatusQuery, raw ?? {});
    requireMessenger(this.deps.messenger);
    const link = await this.findLink(input.token);
    if (!link || (link.userId !== null && link.userId !== actor.userId)) throw new DomainError('not_found', 'Unknown link token', { reason: 'link_not_found' });
    const user = await this.loadUser(actor.userId);
    return {
      ...linksView(user),
      status: link.status,
      expiresAt: link.expiresAt,
      initiatedBy: link.initiatedBy,
      errorCode: link.errorCode,
      botUrl: botUrlFor(this.deps.messenger, link.initiatedBy === 'cabinet' && link.status === 'pending' ? input.token : null),
    };
  }

  /** Bot-initiated: the signed-in user confirms the token the bot gave them. */
  async confirm(actor: Actor, raw: MessengerTokenInput): Promise<{ status: string; userId: string }> {
    const input = parseInput(messengerTokenInput, raw ?? {});
    requireMessenger(this.deps.messenger);
    const link = await this.findLink(input.token);
    if (!link || link.initiatedBy !== 'bot') throw new DomainError('not_found', 'Unknown link token', { reason: 'link_not_found' });
    if (link.status === 'expired') throw new DomainError('bad_request', 'The link token has expired; start again in the messenger', { reason: 'link_expired' });
    if (link.status !== 'pending') throw new DomainError('conflict', 'The link token was already used', { reason: 'link_used' });
    await this.attach(link, actor.userId, link.messengerUserId!, link.messengerName, true);
    return { status: 'confirmed', userId: actor.userId };
  }

  /** Refused with 409 when the messenger is the account's only way to sign in (no password, or nothing to log in with). */
  async unlink(actor: Actor): Promise<void> {
    const user = await this.loadUser(actor.userId);
    if (!user.messengerUserId) throw new DomainError('not_found', 'No messenger is linked', { reason: 'messenger_not_linked' });
    if (!user.passwordHash || (!user.email && !user.username)) {
      throw new DomainError('conflict', 'Set an e-mail and password first: the messenger is this account’s only way to sign in', { reason: 'last_sign_in_method' });
    }
    await this.links.unlink(user.id);
  }

  /** The webhook's bare `/start`: a bot-initiated link for this messenger identity, and the token the bot shows. */
  async issueBotToken(messengerUserId: string, name: string | null): Promise<{ token: string; expiresAt: Date }> {
    const m = requireMessenger(this.deps.messenger);
    const token = randomSecret(32);
    const expiresAt = new Date(this.deps.clock.now().getTime() + m.tokenTtlMs);
    await this.links.insert({ tokenHash: sha256Hex(token), initiatedBy: 'bot', messengerUserId, messengerName: name, expiresAt });
    return { token, expiresAt };
  }

  /** The webhook's `/start <token>`: finishes a pending cabinet-initiated link; answers the outcome. */
  async finishCabinetLink(token: string, messengerUserId: string, name: string | null): Promise<string> {
    if (!plausibleToken(token)) return 'unknown_token';
    const link = await this.findLink(token);
    if (!link || link.initiatedBy !== 'cabinet' || !link.userId) return 'unknown_token';
    if (link.status !== 'pending') return link.status;
    return this.attach(link, link.userId, messengerUserId, name, false);
  }

  /** Links the identity to the account, or fails the link with a reason. Throws when `raise` (a user's request). */
  private async attach(link: MessengerLink, userId: string, messengerUserId: string, name: string | null, raise: boolean): Promise<string> {
    const fail = async (code: string, message: string) => {
      await this.links.fail(link.id, code);
      if (raise) throw new DomainError('conflict', message, { reason: code });
      return code;
    };
    const owner = await this.links.ownerOf(messengerUserId);
    if (owner && owner !== userId) return fail('messenger_taken', 'This messenger account is linked to another account');
    const linked = await this.links.linkedTo(userId);
    if (linked && linked !== messengerUserId) return fail('messenger_already_linked', 'A messenger is already linked');
    let outcome: 'confirmed' | 'link_used';
    try {
      outcome = await this.links.confirm(link.id, userId, messengerUserId, name, this.deps.clock.now());
    } catch {
      // A unique index refused it: the identity was linked to another account meanwhile.
      return fail('messenger_taken', 'This messenger account is linked to another account');
    }
    if (outcome === 'link_used') {
      if (raise) throw new DomainError('conflict', 'The link token was already used', { reason: 'link_used' });
      return outcome;
    }
    this.deps.log.info({ userId, initiatedBy: link.initiatedBy }, 'messenger linked');
    return 'confirmed';
  }

  /** Deletes messenger link rows expired for longer than MESSENGER_LINK_RETENTION_MS; answers how many. */
  async purgeExpired(): Promise<number> {
    const purged = await this.links.purgeExpired(new Date(this.deps.clock.now().getTime() - MESSENGER_LINK_RETENTION_MS));
    if (purged) this.deps.log.info({ purged }, 'expired messenger links purged');
    return purged;
  }
}
