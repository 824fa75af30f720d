import { randomInt } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Mailer, MailSettings } from '../mail/mailer.js';
import { templates, type MailLanguage } from '../mail/templates.js';
import type { Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import { DomainError } from '../shared/errors.js';
import { constantTimeEqual, newId, sha256Hex } from '../shared/ids.js';
import type { Logger } from '../shared/logging.js';
import { WindowCounter } from '../shared/throttle.js';
import { parseInput } from '../shared/validation.js';
import {
  emailLinkConfirmInput,
  emailLinkStartInput,
  resendVerificationInput,
  verifyEmailInput,
  type EmailLinkConfirmInput,
  type EmailLinkStartInput,
  type ResendVerificationInput,
  type VerifyEmailInput,
} from './accounts.schemas.js';
import { AccountsRepository } from './accounts.repository.js';
import { toAccountView, type AccountView } from './account-view.js';
import { EmailVerificationRepository, type CodePurpose } from './email-verification.repository.js';
import { hashPassword, verifyPassword } from './password.js';
import type { User } from './user.entity.js';

/** DESIGN.md E-mail: codes live 10 minutes and allow 5 tries. */
export const CODE_TTL_MS = 10 * 60_000;
export const CODE_MAX_TRIES = 5;

export interface EmailLinkStarted {
  ok: true;
  expiresAt: Date;
}

export interface EmailVerificationDeps {
  orm: MikroORM;
  clock: Clock;
  log: Logger;
  mailer: Mailer;
  mail: Pick<MailSettings, 'language' | 'cooldownMs' | 'maxPerHour'>;
  /** The operator's brand, named in every message. */
  brandName: string;
}

/** A 6-digit code from the CSPRNG. */
function newCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

/** Codes are stored hashed with their row id as salt; the tries limit is what protects the small code space. */
function hashCode(id: string, code: string): string {
  return sha256Hex(`${id}:${code}`);
}

/**
 * E-mail verification, and linking an e-mail to an account that has none (DESIGN.md: E-mail), by codes
 * sent by mail. Mail sends never fail a request and never reveal other accounts.
 */
export class EmailVerification {
  private readonly codes: EmailVerificationRepository;
  private readonly accounts: AccountsRepository;
  private readonly cooldown: WindowCounter;
  private readonly hourly: WindowCounter;

  constructor(private readonly deps: EmailVerificationDeps) {
    this.codes = new EmailVerificationRepository(deps.orm);
    this.accounts = new AccountsRepository(deps.orm);
    const now = () => deps.clock.now().getTime();
    this.cooldown = new WindowCounter(1, Math.max(1, deps.mail.cooldownMs), now);
    this.hourly = new WindowCounter(deps.mail.maxPerHour, 3_600_000, now);
  }

  /** True (and counted) when the account may be sent another code of the purpose now. */
  private mayMail(account: string, purpose: CodePurpose): boolean {
    const key = `${purpose}:${account}`;
    if (this.deps.mail.cooldownMs > 0 && this.cooldown.retryAfterSeconds(key) > 0) return false;
    if (this.hourly.retryAfterSeconds(key) > 0) return false;
    if (this.deps.mail.cooldownMs > 0) this.cooldown.hit(key);
    this.hourly.hit(key);
    return true;
  }

  /** Voids earlier codes of the purpose and stores a new one; returns the plain code and its expiry. */
  private async issueCode(userId: string, purpose: CodePurpose, email: string): Promise<{ code: string; expiresAt: Date }> {
    const now = this.deps.clock.now();
    const id = newId();
    const code = newCode();
    const expiresAt = new Date(now.getTime() + CODE_TTL_MS);
    await this.codes.replaceCode({ id, userId, purpose, email, codeHash: hashCode(id, code), expiresAt }, now);
    return { code, expiresAt };
  }

  /**
   * Checks a code against the account's live code of the purpose. Every try is counted before the
   * comparison (atomically), so parallel guesses cannot exceed the limit. Consumes the code on success.
   */
  private async checkCode(userId: string, purpose: CodePurpose, email: string | null, code: string): Promise<{ email: string }> {
    const now = this.deps.clock.now();
    const counted = await this.codes.countTry(userId, purpose, CODE_MAX_TRIES, now);
    if (!counted) throw new DomainError('bad_request', 'The code has expired or was used up; request a new one', { reason: 'code_expired' });
    const matches = constantTimeEqual(hashCode(counted.id, code), counted.codeHash) && (email === null || email === counted.email);
    if (!matches) {
      if (counted.attempts >= CODE_MAX_TRIES) await this.codes.consume(counted.id, now);
      throw new DomainError('bad_request', 'Wrong code', { reason: 'invalid_code' });
    }
    if (!(await this.codes.consume(counted.id, now))) throw new DomainError('bad_request', 'The code has expired or was used up; request a new one', { reason: 'code_expired' });
    return { email: counted.email };
  }

  private async loadUser(userId: string): Promise<User> {
    const user = await this.accounts.user(userId);
    if (!user) throw new DomainError('unauthenticated', 'Not signed in');
    return user;
  }

  private mailContext(code: string) {
    return { brand: this.deps.brandName, code, minutes: CODE_TTL_MS / 60_000 };
  }

  /** Sends a verification code to a new account (called by registration; counted by the throttle). */
  async sendVerification(userId: string, email: string, language?: MailLanguage): Promise<void> {
    if (!this.mayMail(userId, 'verify')) return;
    const { code } = await this.issueCode(userId, 'verify', email);
    await this.deps.mailer.send({ to: email, ...templates.verifyEmail(language ?? this.deps.mail.language, this.mailContext(code)) });
  }

  async verifyEmail(actor: Actor, raw: VerifyEmailInput): Promise<AccountView> {
    const input = parseInput(verifyEmailInput, raw ?? {});
    const user = await this.loadUser(actor.userId);
    if (user.emailVerified) return toAccountView(user);
    if (!user.email) throw new DomainError('bad_request', 'The account has no e-mail; link one first', { reason: 'no_email' });
    const { email } = await this.checkCode(user.id, 'verify', input.email ?? null, input.code);
    // The code proves the address it was sent to; it verifies only while that is still the account's address.
    await this.codes.markVerified(user.id, email);
    return toAccountView(await this.loadUser(actor.userId));
  }

  /** Always "accepted": throttled, already verified or mismatched requests send nothing and say so to no one. */
  async resendVerification(actor: Actor, raw: ResendVerificationInput): Promise<{ ok: true }> {
    const input = parseInput(resendVerificationInput, raw ?? {});
    const user = await this.loadUser(actor.userId);
    if (user.email && !user.emailVerified && (!input.email || input.email === user.email.toLowerCase())) {
      await this.sendVerification(user.id, user.email, input.language);
    }
    return { ok: true };
  }

  /** Invoices and other money paths require a verified e-mail (403 email_not_verified). */
  async requireVerifiedEmail(userId: string): Promise<void> {
    if (!(await this.codes.isVerified(userId))) throw new DomainError('forbidden', 'Verify your e-mail first', { reason: 'email_not_verified' });
  }

  /** The same answer whether or not the address is taken; a taken address gets no code. */
  async startEmailLink(actor: Actor, raw: EmailLinkStartInput): Promise<EmailLinkStarted> {
    const input = parseInput(emailLinkStartInput, raw ?? {});
    const user = await this.loadUser(actor.userId);
    if (user.email) throw new DomainError('conflict', 'The account already has an e-mail', { reason: 'email_already_set' });
    const expiresAt = new Date(this.deps.clock.now().getTime() + CODE_TTL_MS);
    if (!this.mayMail(user.id, 'link')) return { ok: true, expiresAt };
    if (await this.codes.emailTaken(input.email)) {
      // Void any earlier link code, so the confirm fails the same way as a wrong code.
      await this.codes.voidCodes(user.id, 'link', this.deps.clock.now());
      this.deps.log.info({ userId: user.id }, 'e-mail link refused: address taken');
      return { ok: true, expiresAt };
    }
    const issued = await this.issueCode(user.id, 'link', input.email);
    await this.deps.mailer.send({ to: input.email, ...templates.linkEmail(input.language ?? this.deps.mail.language, this.mailContext(issued.code)) });
    return { ok: true, expiresAt: issued.expiresAt };
  }

  async confirmEmailLink(actor: Actor, raw: EmailLinkConfirmInput): Promise<{ ok: true; email: string }> {
    const input = parseInput(emailLinkConfirmInput, raw ?? {});
    const user = await this.loadUser(actor.userId);
    if (user.email) throw new DomainError('conflict', 'The account already has an e-mail', { reason: 'email_already_set' });
    if (user.passwordHash && !(await verifyPassword(user.passwordHash, input.password))) {
      throw new DomainError('invalid_credentials', 'Wrong password');
    }
    const { email } = await this.checkCode(user.id, 'link', input.email, input.code);
    const passwordHash = user.passwordHash ?? (await hashPassword(input.password));
    // Taken meanwhile (or a unique-index race): the same answer as a wrong code.
    const linked = await this.codes.linkEmail(user.id, email, passwordHash).catch(() => false);
    if (!linked) throw new DomainError('bad_request', 'Wrong code', { reason: 'invalid_code' });
    this.deps.log.info({ userId: user.id }, 'e-mail linked');
    return { ok: true, email };
  }
}
