import type { MikroORM } from '@mikro-orm/postgresql';
import { Mailer, type MailSettings } from '../mail/mailer.js';
import type { MailLanguage } from '../mail/templates.js';
import type { Actor, Caller } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logging.js';
import type { SharedState } from '../shared/redis.js';
import type { EmailLinkConfirmInput, EmailLinkStartInput, MessengerStatusQuery, MessengerTokenInput, ResendVerificationInput, VerifyEmailInput } from './accounts.schemas.js';
import type { LoginThrottleSettings, MessengerSettings } from './accounts.settings.js';
import type { AccountView } from './account-view.js';
import { EmailVerification, type EmailLinkStarted } from './email-verification.js';
import { MessengerLinking, type MessengerLinkStartView, type MessengerLinkStatusView, type MessengerLinksView } from './messenger-link.js';
import { MessengerLogin, type MessengerSignIn } from './messenger-login.js';
import { MessengerSender } from './messenger-sender.js';
import { MessengerWebhook, type MessengerWebhookResult } from './messenger-webhook.js';

export { CODE_MAX_TRIES, CODE_TTL_MS, type EmailLinkStarted } from './email-verification.js';
export { MESSENGER_LINK_RETENTION_MS, type MessengerLinkStartView, type MessengerLinkStatusView, type MessengerLinksView } from './messenger-link.js';
export { usernameFromMessengerName, type MessengerSignIn } from './messenger-login.js';
export type { MessengerWebhookResult } from './messenger-webhook.js';

/** The settings the identity parts read. */
export interface IdentitySettings {
  mail: MailSettings;
  /** Null: messenger linking and sign-in are off. */
  messenger: MessengerSettings | null;
  /** Messenger sign-in starts count against the password sign-in's budget per client address. */
  loginThrottle: Pick<LoginThrottleSettings, 'maxAttemptsPerAddress' | 'windowMs'>;
  /** The operator's brand, named in every message. */
  brandName: string;
}

export interface IdentityDeps {
  orm: MikroORM;
  settings: IdentitySettings;
  clock: Clock;
  log: Logger;
  /** Set with REDIS_URL: the messenger sign-in throttle counts across every gateway process. */
  shared?: SharedState;
}

/**
 * E-mail verification and linking (email-verification.ts), messenger linking (messenger-link.ts), signing in
 * with the messenger (messenger-login.ts) and the bot's webhook (messenger-webhook.ts), behind the one service
 * every transport calls (DESIGN.md: E-mail, Messenger linking).
 */
export class IdentityService {
  readonly mailer: Mailer;
  /** Messages to linked users through the bot (alerts). */
  readonly messengerSender: MessengerSender;
  private readonly email: EmailVerification;
  private readonly linking: MessengerLinking;
  private readonly login: MessengerLogin;
  private readonly webhook: MessengerWebhook;

  constructor(deps: IdentityDeps) {
    const { mail, messenger, loginThrottle, brandName } = deps.settings;
    this.mailer = new Mailer({ orm: deps.orm, mail, log: deps.log });
    this.messengerSender = new MessengerSender({ messenger, clock: deps.clock, log: deps.log });
    this.email = new EmailVerification({ ...deps, mailer: this.mailer, mail, brandName });
    this.linking = new MessengerLinking({ ...deps, messenger });
    this.login = new MessengerLogin({ ...deps, messenger, loginThrottle });
    this.webhook = new MessengerWebhook({ clock: deps.clock, messenger, linking: this.linking, login: this.login });
  }

  // ---- e-mail verification and linking ----

  sendVerification(userId: string, email: string, language?: MailLanguage): Promise<void> {
    return this.email.sendVerification(userId, email, language);
  }

  verifyEmail(actor: Actor, raw: VerifyEmailInput): Promise<AccountView> {
    return this.email.verifyEmail(actor, raw);
  }

  resendVerification(actor: Actor, raw: ResendVerificationInput): Promise<{ ok: true }> {
    return this.email.resendVerification(actor, raw);
  }

  requireVerifiedEmail(userId: string): Promise<void> {
    return this.email.requireVerifiedEmail(userId);
  }

  startEmailLink(actor: Actor, raw: EmailLinkStartInput): Promise<EmailLinkStarted> {
    return this.email.startEmailLink(actor, raw);
  }

  confirmEmailLink(actor: Actor, raw: EmailLinkConfirmInput): Promise<{ ok: true; email: string }> {
    return this.email.confirmEmailLink(actor, raw);
  }

  // ---- messenger linking ----

  links(actor: Actor): Promise<MessengerLinksView> {
    return this.linking.linksOf(actor);
  }

  startMessengerLink(actor: Actor): Promise<MessengerLinkStartView> {
    return this.linking.start(actor);
  }

  messengerLinkStatus(actor: Actor, raw: MessengerStatusQuery): Promise<MessengerLinkStatusView> {
    return this.linking.status(actor, raw);
  }

  confirmMessengerLink(actor: Actor, raw: MessengerTokenInput): Promise<{ status: string; userId: string }> {
    return this.linking.confirm(actor, raw);
  }

  unlinkMessenger(actor: Actor): Promise<void> {
    return this.linking.unlink(actor);
  }

  purgeExpiredLinks(): Promise<number> {
    return this.linking.purgeExpired();
  }

  // ---- signing in with the messenger ----

  startMessengerLogin(caller: Caller): Promise<MessengerLinkStartView> {
    return this.login.start(caller);
  }

  consumeMessengerLogin(raw: MessengerTokenInput): Promise<MessengerSignIn> {
    return this.login.consume(raw);
  }

  handleWebhook(rawBody: Buffer, signatureHeader: string | undefined): Promise<MessengerWebhookResult> {
    return this.webhook.handle(rawBody, signatureHeader);
  }

  close(): void {
    this.mailer.close();
  }
}
