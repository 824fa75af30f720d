import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import { Mailer } from '../mail/mailer.js';
import { templates, type MailLanguage } from '../mail/templates.js';
import type { Actor, Caller } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import { DomainError } from '../shared/errors.js';
import { constantTimeEqual, newId, randomSecret, sha256Hex } from '../shared/ids.js';
import type { Logger } from '../shared/logging.js';
import type { SharedState } from '../shared/redis.js';
import { attemptCounter, WindowCounter, type AttemptCounter } from '../shared/throttle.js';
import { parseInput } from '../shared/validation.js';
import {
  emailLinkConfirmInput,
  emailLinkStartInput,
  messengerStatusQuery,
  messengerTokenInput,
  messengerWebhookEvent,
  resendVerificationInput,
  verifyEmailInput,
  type EmailLinkConfirmInput,
  type EmailLinkStartInput,
  type MessengerStatusQuery,
  type MessengerTokenInput,
  type ResendVerificationInput,
  type VerifyEmailInput,
} from './accounts.schemas.js';
import { toAccountView, type AccountView } from './account-view.js';
import { hashPassword, verifyPassword } from './password.js';
import { User } from './user.entity.js';

/** DESIGN.md E-mail: codes live 10 minutes and allow 5 tries. */
export const CODE_TTL_MS = 10 * 60_000;
export const CODE_MAX_TRIES = 5;
const WEBHOOK_TOLERANCE_S = 300;

type CodePurpose = 'verify' | 'link';

export interface EmailLinkStarted {
  ok: true;
  expiresAt: Date;
}

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

export interface MessengerWebhookResult {
  status: 200 | 400;
  outcome: string;
  /** A bot-initiated link: the token the bot shows its user, to confirm in the cabinet. */
  token?: string;
  expiresAt?: Date;
}

/** A claimed sign-in token's account: the one linked to the messenger identity, or one created for it. */
export interface MessengerSignIn {
  userId: string;
  created: boolean;
}

interface LinkRow {
  id: string;
  initiated_by: 'cabinet' | 'bot' | 'login';
  user_id: string | null;
  messenger_user_id: string | null;
  messenger_name: string | null;
  status: string;
  error_code: string | null;
  expires_at: Date;
}

export interface IdentityDeps {
  orm: MikroORM;
  config: Config;
  clock: Clock;
  log: Logger;
  /** Set with REDIS_URL: the messenger sign-in throttle counts across every gateway process. */
  shared?: SharedState;
}

/** Messenger link rows are kept this long past their expiry (a late status poll still gets `expired`), then purged. */
export const MESSENGER_LINK_RETENTION_MS = 24 * 3_600_000;

/** A 6-digit code from the CSPRNG. */
/** Sign-in tokens reach the bot as `/start login_<token>`. */
const LOGIN_PREFIX = 'login_';

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

function newCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

/** Codes are stored hashed with their row id as salt; the tries limit is what protects the small code space. */
function hashCode(id: string, code: string): string {
  return sha256Hex(`${id}:${code}`);
}

/**
 * E-mail verification, e-mail linking and messenger linking (DESIGN.md: E-mail, Messenger linking).
 * Mail sends never fail a request and never reveal other accounts.
 */
export class IdentityService {
  readonly mailer: Mailer;
  private readonly cooldown: WindowCounter;
  private readonly hourly: WindowCounter;
  /** Unauthenticated messenger sign-in starts per client address (each writes a row). */
  private readonly loginStartsByAddress: AttemptCounter;

  constructor(private readonly deps: IdentityDeps) {
    this.mailer = new Mailer(deps);
    const now = () => deps.clock.now().getTime();
    const { maxAttemptsPerAddress, windowMs } = deps.config.loginThrottle;
    this.loginStartsByAddress = attemptCounter(deps.shared, 'messenger-start', maxAttemptsPerAddress, windowMs, now);
    this.cooldown = new WindowCounter(1, Math.max(1, deps.config.mail.cooldownMs), now);
    this.hourly = new WindowCounter(deps.config.mail.maxPerHour, 3_600_000, now);
  }

  private em(): EntityManager {
    return this.deps.orm.em.fork();
  }

  private get brand(): string {
    return this.deps.config.operator.brand.name;
  }

  /** True (and counted) when the account may be sent another code of the purpose now. */
  private mayMail(account: string, purpose: CodePurpose): boolean {
    const key = `${purpose}:${account}`;
    if (this.deps.config.mail.cooldownMs > 0 && this.cooldown.retryAfterSeconds(key) > 0) return false;
    if (this.hourly.retryAfterSeconds(key) > 0) return false;
    if (this.deps.config.mail.cooldownMs > 0) this.cooldown.hit(key);
    this.hourly.hit(key);
    return true;
  }

  /** Voids earlier codes of the purpose and stores a new one; returns the plain code and its expiry. */
  private async issueCode(em: EntityManager, userId: string, purpose: CodePurpose, email: string): Promise<{ code: string; expiresAt: Date }> {
    const now = this.deps.clock.now();
    const id = newId();
    const code = newCode();
    const expiresAt = new Date(now.getTime() + CODE_TTL_MS);
    await em.execute('update email_codes set consumed_at = ? where user_id = ? and purpose = ? and consumed_at is null', [now, userId, purpose]);
    await em.execute(
      'insert into email_codes (id, user_id, purpose, email, code_hash, expires_at, created_at) values (?, ?, ?, ?, ?, ?, ?)',
      [id, userId, purpose, email, hashCode(id, code), expiresAt, now],
    );
    return { code, expiresAt };
  }

  /**
   * Checks a code against the account's live code of the purpose. Every try is counted before the
   * comparison (atomically), so parallel guesses cannot exceed the limit. Consumes the code on success.
   */
  private async checkCode(em: EntityManager, userId: string, purpose: CodePurpose, email: string | null, code: string): Promise<{ email: string }> {
    const now = this.deps.clock.now();
    const [row] = await em.execute<{ id: string; email: string; attempts: number; code_hash: string }[]>(
      `update email_codes set attempts = attempts + 1
        where id = (select id from email_codes where user_id = ? and purpose = ? and consumed_at is null order by created_at desc limit 1)
          and consumed_at is null and attempts < ? and expires_at > ?
        returning id, email, attempts, code_hash`,
      [userId, purpose, CODE_MAX_TRIES, now],
    );
    if (!row) throw new DomainError('bad_request', 'The code has expired or was used up; request a new one', { reason: 'code_expired' });
    const matches = constantTimeEqual(hashCode(row.id, code), row.code_hash) && (email === null || email === row.email);
    if (!matches) {
      if (row.attempts >= CODE_MAX_TRIES) await em.execute('update email_codes set consumed_at = ? where id = ? and consumed_at is null', [now, row.id]);
      throw new DomainError('bad_request', 'Wrong code', { reason: 'invalid_code' });
    }
    const [consumed] = await em.execute<{ id: string }[]>('update email_codes set consumed_at = ? where id = ? and consumed_at is null returning id', [now, row.id]);
    if (!consumed) throw new DomainError('bad_request', 'The code has expired or was used up; request a new one', { reason: 'code_expired' });
    return { email: row.email };
  }

  private async loadUser(em: EntityManager, userId: string): Promise<User> {
    const user = await em.findOne(User, { id: userId });
    if (!user) throw new DomainError('unauthenticated', 'Not signed in');
    return user;
  }

  // ---- e-mail verification ----

  /** Sends a verification code to a new account (called by registration; counted by the throttle). */
  async sendVerification(userId: string, email: string, language?: MailLanguage): Promise<void> {
    if (!this.mayMail(userId, 'verify')) return;
    const { code } = await this.issueCode(this.em(), userId, 'verify', email);
    await this.mailer.send({ to: email, ...templates.verifyEmail(language ?? this.deps.config.mail.language, { brand: this.brand, code, minutes: CODE_TTL_MS / 60_000 }) });
  }

  async verifyEmail(actor: Actor, raw: VerifyEmailInput): Promise<AccountView> {
    const input = parseInput(verifyEmailInput, raw ?? {});
    const em = this.em();
    const user = await this.loadUser(em, actor.userId);
    if (user.emailVerified) return toAccountView(user);
    if (!user.email) throw new DomainError('bad_request', 'The account has no e-mail; link one first', { reason: 'no_email' });
    const { email } = await this.checkCode(em, user.id, 'verify', input.email ?? null, input.code);
    // The code proves the address it was sent to; it verifies only while that is still the account's address.
    await em.execute('update users set email_verified = true, updated_at = now() where id = ? and lower(email) = lower(?)', [user.id, email]);
    return toAccountView(await this.loadUser(this.em(), actor.userId));
  }

  /** Always "accepted": throttled, already verified or mismatched requests send nothing and say so to no one. */
  async resendVerification(actor: Actor, raw: ResendVerificationInput): Promise<{ ok: true }> {
    const input = parseInput(resendVerificationInput, raw ?? {});
    const user = await this.loadUser(this.em(), actor.userId);
    if (user.email && !user.emailVerified && (!input.email || input.email === user.email.toLowerCase())) {
      await this.sendVerification(user.id, user.email, input.language);
    }
    return { ok: true };
  }

  /** Invoices and other money paths require a verified e-mail (403 email_not_verified). */
  async requireVerifiedEmail(userId: string): Promise<void> {
    const [row] = await this.em().execute<{ email_verified: boolean }[]>('select email_verified from users where id = ?', [userId]);
    if (!row?.email_verified) throw new DomainError('forbidden', 'Verify your e-mail first', { reason: 'email_not_verified' });
  }

  // ---- e-mail link (accounts without an e-mail) ----

  /** The same answer whether or not the address is taken; a taken address gets no code. */
  async startEmailLink(actor: Actor, raw: EmailLinkStartInput): Promise<EmailLinkStarted> {
    const input = parseInput(emailLinkStartInput, raw ?? {});
    const em = this.em();
    const user = await this.loadUser(em, actor.userId);
    if (user.email) throw new DomainError('conflict', 'The account already has an e-mail', { reason: 'email_already_set' });
    const expiresAt = new Date(this.deps.clock.now().getTime() + CODE_TTL_MS);
    if (!this.mayMail(user.id, 'link')) return { ok: true, expiresAt };
    const [taken] = await em.execute<{ id: string }[]>('select id from users where lower(email) = lower(?)', [input.email]);
    if (taken) {
      // Void any earlier link code, so the confirm fails the same way as a wrong code.
      await em.execute("update email_codes set consumed_at = ? where user_id = ? and purpose = 'link' and consumed_at is null", [this.deps.clock.now(), user.id]);
      this.deps.log.info({ userId: user.id }, 'e-mail link refused: address taken');
      return { ok: true, expiresAt };
    }
    const issued = await this.issueCode(em, user.id, 'link', input.email);
    await this.mailer.send({ to: input.email, ...templates.linkEmail(input.language ?? this.deps.config.mail.language, { brand: this.brand, code: issued.code, minutes: CODE_TTL_MS / 60_000 }) });
    return { ok: true, expiresAt: issued.expiresAt };
  }

  async confirmEmailLink(actor: Actor, raw: EmailLinkConfirmInput): Promise<{ ok: true; email: string }> {
    const input = parseInput(emailLinkConfirmInput, raw ?? {});
    const em = this.em();
    const user = await this.loadUser(em, actor.userId);
    if (user.email) throw new DomainError('conflict', 'The account already has an e-mail', { reason: 'email_already_set' });
    if (user.passwordHash && !(await verifyPassword(user.passwordHash, input.password))) {
      throw new DomainError('invalid_credentials', 'Wrong password');
    }
    const { email } = await this.checkCode(em, user.id, 'link', input.email, input.code);
    const passwordHash = user.passwordHash ?? (await hashPassword(input.password));
    try {
      const rows = await em.execute<{ id: string }[]>(
        `update users set email = ?, email_verified = true, password_hash = ?, updated_at = now()
          where id = ? and email is null and not exists (select 1 from users o where lower(o.email) = lower(?))
          returning id`,
        [email, passwordHash, user.id, email],
      );
      if (!rows.length) throw new Error('raced');
    } catch {
      // Taken meanwhile (or a unique-index race): the same answer as a wrong code.
      throw new DomainError('bad_request', 'Wrong code', { reason: 'invalid_code' });
    }
    this.deps.log.info({ userId: user.id }, 'e-mail linked');
    return { ok: true, email };
  }

  // ---- messenger linking ----

  private messengerConfig() {
    const m = this.deps.config.messenger;
    if (!m) throw new DomainError('not_found', 'Messenger linking is not configured', { reason: 'messenger_not_configured' });
    return m;
  }

  private botUrlFor(token: string | null): string {
    const m = this.messengerConfig();
    if (!token) return m.botUrl;
    const url = new URL(m.botUrl);
    url.searchParams.set('start', token);
    return url.toString();
  }

  async links(actor: Actor): Promise<MessengerLinksView> {
    return linksView(await this.loadUser(this.em(), actor.userId));
  }

  /** Cabinet-initiated: the bot finishes it when its signed webhook reports `/start <token>`. */
  async startMessengerLink(actor: Actor): Promise<MessengerLinkStartView> {
    const m = this.messengerConfig();
    const em = this.em();
    const user = await this.loadUser(em, actor.userId);
    if (user.messengerUserId) throw new DomainError('conflict', 'A messenger is already linked', { reason: 'messenger_already_linked' });
    const token = randomSecret(32);
    const expiresAt = new Date(this.deps.clock.now().getTime() + m.tokenTtlMs);
    await em.execute("insert into messenger_links (id, token_hash, initiated_by, user_id, expires_at) values (?, ?, 'cabinet', ?, ?)", [newId(), sha256Hex(token), user.id, expiresAt]);
    return { token, botUrl: this.botUrlFor(token), expiresAt };
  }

  private async findLink(em: EntityManager, token: string): Promise<LinkRow | null> {
    const [row] = await em.execute<LinkRow[]>('select * from messenger_links where token_hash = ?', [sha256Hex(token)]);
    if (!row) return null;
    if (row.status === 'pending' && new Date(row.expires_at).getTime() <= this.deps.clock.now().getTime()) {
      await em.execute("update messenger_links set status = 'expired' where id = ? and status = 'pending'", [row.id]);
      row.status = 'expired';
    }
    return row;
  }

  /** A link the caller may see: one they started, or a bot-initiated one still open to anyone holding the token. */
  async messengerLinkStatus(actor: Actor, raw: MessengerStatusQuery): Promise<MessengerLinkStatusView> {
    const input = parseInput(messengerStatusQuery, raw ?? {});
    this.messengerConfig();
    const em = this.em();
    const link = await this.findLink(em, input.token);
    if (!link || (link.user_id !== null && link.user_id !== actor.userId)) throw new DomainError('not_found', 'Unknown link token', { reason: 'link_not_found' });
    const user = await this.loadUser(em, actor.userId);
    return {
      ...linksView(user),
      status: link.status,
      expiresAt: new Date(link.expires_at),
      initiatedBy: link.initiated_by,
      errorCode: link.error_code,
      botUrl: this.botUrlFor(link.initiated_by === 'cabinet' && link.status === 'pending' ? input.token : null),
    };
  }

  // ---- signing in with the messenger ----

  /** No session needed: a short-lived sign-in token the bot confirms (`/start login_<token>`), hashed at rest. */
  async startMessengerLogin(caller: Caller): Promise<MessengerLinkStartView> {
    const m = this.messengerConfig();
    const wait = await this.loginStartsByAddress.take(caller.clientAddress ?? 'unknown');
    if (wait > 0) throw new DomainError('rate_limited', 'Too many sign-in attempts; try again later', { retryAfterSeconds: wait, reason: 'login_throttled' });
    const token = randomSecret(32);
    const expiresAt = new Date(this.deps.clock.now().getTime() + m.tokenTtlMs);
    await this.em().execute("insert into messenger_links (id, token_hash, initiated_by, expires_at) values (?, ?, 'login', ?)", [newId(), sha256Hex(token), expiresAt]);
    return { token, botUrl: this.botUrlFor(`${LOGIN_PREFIX}${token}`), expiresAt };
  }

  /**
   * Claims a bot-confirmed sign-in token (single use) and answers its account: the one linked to that messenger
   * identity, or a new one created for it (no e-mail, no password). 404 unknown, 400 `link_expired`,
   * 409 `login_pending` (not confirmed yet: poll) or `link_used`.
   */
  async consumeMessengerLogin(raw: MessengerTokenInput): Promise<MessengerSignIn> {
    const input = parseInput(messengerTokenInput, raw ?? {});
    this.messengerConfig();
    const em = this.em();
    const now = this.deps.clock.now();
    const signedIn = await em.transactional(async (tx) => {
      const [claimed] = await tx.execute<{ messenger_user_id: string; messenger_name: string | null }[]>(
        `update messenger_links set status = 'used'
          where token_hash = ? and initiated_by = 'login' and status = 'confirmed' and expires_at > ?
          returning messenger_user_id, messenger_name`,
        [sha256Hex(input.token), now],
      );
      return claimed ? this.accountForMessenger(tx, claimed.messenger_user_id, claimed.messenger_name) : null;
    });
    if (signedIn) return signedIn;
    const link = await this.findLink(em, input.token);
    if (!link || link.initiated_by !== 'login') throw new DomainError('not_found', 'Unknown sign-in token', { reason: 'link_not_found' });
    if (link.status === 'expired' || (link.status === 'confirmed' && new Date(link.expires_at).getTime() <= now.getTime())) {
      throw new DomainError('bad_request', 'The sign-in token has expired; start again', { reason: 'link_expired' });
    }
    if (link.status === 'pending') throw new DomainError('conflict', 'Not confirmed in the messenger yet', { reason: 'login_pending' });
    throw new DomainError('conflict', 'The sign-in token was already used', { reason: 'link_used' });
  }

  /** The account linked to the messenger identity, or a new one (username from the messenger name, made unique). */
  private async accountForMessenger(tx: EntityManager, messengerUserId: string, name: string | null): Promise<MessengerSignIn> {
    const owner = async () => (await tx.execute<{ id: string }[]>('select id from users where messenger_user_id = ?', [messengerUserId]))[0];
    const existing = await owner();
    if (existing) return { userId: existing.id, created: false };
    const base = usernameFromMessengerName(name);
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const username = attempt === 0 && base !== 'user' ? base : `${base}_${String(randomInt(0, 1_000_000)).padStart(6, '0')}`;
      const id = newId();
      // `on conflict do nothing`: a taken username, or the same identity signing in concurrently, is not an error.
      const inserted = await tx.execute<{ id: string }[]>(
        'insert into users (id, username, messenger_user_id, messenger_name) values (?, ?, ?, ?) on conflict do nothing returning id',
        [id, username, messengerUserId, name],
      );
      if (inserted.length) {
        this.deps.log.info({ userId: id }, 'account created by messenger sign-in');
        return { userId: id, created: true };
      }
      const raced = await owner();
      if (raced) return { userId: raced.id, created: false };
    }
    throw new Error('no unique username could be derived for a messenger sign-in');
  }

  /** Deletes messenger link rows expired for longer than MESSENGER_LINK_RETENTION_MS; answers how many. */
  async purgeExpiredLinks(): Promise<number> {
    const before = new Date(this.deps.clock.now().getTime() - MESSENGER_LINK_RETENTION_MS);
    const rows = await this.em().execute<{ id: string }[]>('delete from messenger_links where expires_at < ? returning id', [before]);
    if (rows.length) this.deps.log.info({ purged: rows.length }, 'expired messenger links purged');
    return rows.length;
  }

  /** Bot-initiated: the signed-in user confirms the token the bot gave them. */
  async confirmMessengerLink(actor: Actor, raw: MessengerTokenInput): Promise<{ status: string; userId: string }> {
    const input = parseInput(messengerTokenInput, raw ?? {});
    this.messengerConfig();
    const em = this.em();
    const link = await this.findLink(em, input.token);
    if (!link || link.initiated_by !== 'bot') throw new DomainError('not_found', 'Unknown link token', { reason: 'link_not_found' });
    if (link.status === 'expired') throw new DomainError('bad_request', 'The link token has expired; start again in the messenger', { reason: 'link_expired' });
    if (link.status !== 'pending') throw new DomainError('conflict', 'The link token was already used', { reason: 'link_used' });
    await this.attach(em, link, actor.userId, link.messenger_user_id!, link.messenger_name, true);
    return { status: 'confirmed', userId: actor.userId };
  }

  /** Links the identity to the account, or fails the link with a reason. Throws when `raise` (a user's request). */
  private async attach(em: EntityManager, link: LinkRow, userId: string, messengerUserId: string, name: string | null, raise: boolean): Promise<string> {
    const fail = async (code: string, message: string) => {
      await em.execute("update messenger_links set status = 'failed', error_code = ? where id = ? and status = 'pending'", [code, link.id]);
      if (raise) throw new DomainError('conflict', message, { reason: code });
      return code;
    };
    const [owner] = await em.execute<{ id: string }[]>('select id from users where messenger_user_id = ?', [messengerUserId]);
    if (owner && owner.id !== userId) return fail('messenger_taken', 'This messenger account is linked to another account');
    const [self] = await em.execute<{ messenger_user_id: string | null }[]>('select messenger_user_id from users where id = ?', [userId]);
    if (self?.messenger_user_id && self.messenger_user_id !== messengerUserId) return fail('messenger_already_linked', 'A messenger is already linked');
    const now = this.deps.clock.now();
    try {
      await em.transactional(async (tx) => {
        const claimed = await tx.execute<{ id: string }[]>(
          "update messenger_links set status = 'confirmed', confirmed_at = ?, user_id = ?, messenger_user_id = ?, messenger_name = ? where id = ? and status = 'pending' and expires_at > ? returning id",
          [now, userId, messengerUserId, name, link.id, now],
        );
        if (!claimed.length) throw new DomainError('conflict', 'The link token was already used', { reason: 'link_used' });
        await tx.execute('update users set messenger_user_id = ?, messenger_name = ?, updated_at = now() where id = ?', [messengerUserId, name, userId]);
      });
    } catch (error) {
      if (error instanceof DomainError) {
        if (raise) throw error;
        return error.reason;
      }
      return fail('messenger_taken', 'This messenger account is linked to another account');
    }
    this.deps.log.info({ userId, initiatedBy: link.initiated_by }, 'messenger linked');
    return 'confirmed';
  }

  /** Refused with 409 when the messenger is the account's only way to sign in (no password, or nothing to log in with). */
  async unlinkMessenger(actor: Actor): Promise<void> {
    const em = this.em();
    const user = await this.loadUser(em, actor.userId);
    if (!user.messengerUserId) throw new DomainError('not_found', 'No messenger is linked', { reason: 'messenger_not_linked' });
    if (!user.passwordHash || (!user.email && !user.username)) {
      throw new DomainError('conflict', 'Set an e-mail and password first: the messenger is this account’s only way to sign in', { reason: 'last_sign_in_method' });
    }
    await em.execute('update users set messenger_user_id = null, messenger_name = null, updated_at = now() where id = ?', [user.id]);
  }

  /**
   * The bot's webhook. Header `x-messenger-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`;
   * body `{event_id?, user: {id, name?}, text}`. `/start <token>` finishes a cabinet-initiated link;
   * a bare `/start` opens a bot-initiated one and answers its token. Unsigned, forged or stale events change nothing.
   */
  async handleWebhook(rawBody: Buffer, signatureHeader: string | undefined): Promise<MessengerWebhookResult> {
    const m = this.deps.config.messenger;
    if (!m) return { status: 400, outcome: 'not_configured' };
    const parts = Object.fromEntries((signatureHeader ?? '').split(',').map((p) => p.trim().split('=', 2) as [string, string]));
    const t = Number(parts.t);
    if (!Number.isInteger(t) || !/^[0-9a-f]{64}$/.test(parts.v1 ?? '')) return { status: 400, outcome: 'bad_signature' };
    if (Math.abs(this.deps.clock.now().getTime() / 1000 - t) > WEBHOOK_TOLERANCE_S) return { status: 400, outcome: 'stale' };
    const expected = createHmac('sha256', m.webhookSecret).update(`${t}.`).update(rawBody).digest();
    const given = Buffer.from(parts.v1!, 'hex');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { status: 400, outcome: 'bad_signature' };

    let event;
    try {
      event = messengerWebhookEvent.parse(JSON.parse(rawBody.toString('utf8')));
    } catch {
      return { status: 400, outcome: 'bad_payload' };
    }
    const match = /^\/start(?:\s+(\S+))?\s*$/.exec(event.text.trim());
    if (!match) return { status: 200, outcome: 'ignored' };
    const name = event.user.name ?? null;
    const em = this.em();
    const token = match[1];
    if (!token) {
      const fresh = randomSecret(32);
      const expiresAt = new Date(this.deps.clock.now().getTime() + m.tokenTtlMs);
      await em.execute(
        "insert into messenger_links (id, token_hash, initiated_by, messenger_user_id, messenger_name, expires_at) values (?, ?, 'bot', ?, ?, ?)",
        [newId(), sha256Hex(fresh), event.user.id, name, expiresAt],
      );
      return { status: 200, outcome: 'token_issued', token: fresh, expiresAt };
    }
    if (token.startsWith(LOGIN_PREFIX)) return { status: 200, outcome: await this.confirmLogin(em, token.slice(LOGIN_PREFIX.length), event.user.id, name) };
    if (token.length < 32 || token.length > 256) return { status: 200, outcome: 'unknown_token' };
    const link = await this.findLink(em, token);
    if (!link || link.initiated_by !== 'cabinet' || !link.user_id) return { status: 200, outcome: 'unknown_token' };
    if (link.status !== 'pending') return { status: 200, outcome: link.status };
    return { status: 200, outcome: await this.attach(em, link, link.user_id, event.user.id, name, false) };
  }

  /** `/start login_<token>` on the signed webhook: the messenger identity confirms a pending sign-in token. */
  private async confirmLogin(em: EntityManager, token: string, messengerUserId: string, name: string | null): Promise<string> {
    if (token.length < 32 || token.length > 256) return 'unknown_token';
    const now = this.deps.clock.now();
    const confirmed = await em.execute<{ id: string }[]>(
      `update messenger_links set status = 'confirmed', confirmed_at = ?, messenger_user_id = ?, messenger_name = ?
        where token_hash = ? and initiated_by = 'login' and status = 'pending' and expires_at > ? returning id`,
      [now, messengerUserId, name, sha256Hex(token), now],
    );
    if (confirmed.length) return 'confirmed';
    const link = await this.findLink(em, token);
    if (!link || link.initiated_by !== 'login') return 'unknown_token';
    return link.status === 'confirmed' || link.status === 'used' ? 'link_used' : link.status;
  }

  close(): void {
    this.mailer.close();
  }
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
