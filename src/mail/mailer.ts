import type { MikroORM } from '@mikro-orm/postgresql';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from '../shared/logging.js';
import { OutboxRepository } from './outbox.repository.js';
import type { MailContent, MailLanguage } from './templates.js';

/** SMTP_URL, MAIL_* and EMAIL_CODE_*: how mail leaves, its default language, and how often an account may be sent a code. */
export interface MailSettings {
  /** Unset: the development transport (log + email_outbox table). */
  smtpUrl?: string;
  from: string;
  language: MailLanguage;
  cooldownMs: number;
  maxPerHour: number;
}

export interface OutgoingMail extends MailContent {
  to: string;
}

/**
 * Outgoing e-mail over nodemailer. With SMTP_URL set, real SMTP; otherwise the development transport:
 * the message is rendered by nodemailer's JSON transport, its envelope (never its body, which carries
 * codes) is logged, and the whole message is stored in the `email_outbox` table for the developer.
 */
export class Mailer {
  private readonly transport: Transporter;
  readonly kind: 'smtp' | 'outbox';
  private readonly outbox: OutboxRepository;

  constructor(private readonly deps: { orm: MikroORM; mail: Pick<MailSettings, 'smtpUrl' | 'from'>; log: Logger }) {
    const { smtpUrl } = deps.mail;
    this.kind = smtpUrl ? 'smtp' : 'outbox';
    this.outbox = new OutboxRepository(deps.orm);
    this.transport = smtpUrl ? nodemailer.createTransport(smtpUrl) : nodemailer.createTransport({ jsonTransport: true });
  }

  /** Sends one message. Delivery problems are logged, never thrown to the caller (no enumeration through errors). */
  async send(mail: OutgoingMail): Promise<boolean> {
    try {
      const info = await this.transport.sendMail({ from: this.deps.mail.from, to: mail.to, subject: mail.subject, text: mail.text });
      if (this.kind === 'outbox') {
        await this.outbox.insert(mail);
      }
      this.deps.log.info({ transport: this.kind, to: mail.to, subject: mail.subject, messageId: info.messageId }, 'e-mail sent');
      return true;
    } catch (error) {
      this.deps.log.warn({ transport: this.kind, to: mail.to, subject: mail.subject, err: (error as Error).message }, 'e-mail not sent');
      return false;
    }
  }

  close(): void {
    this.transport.close();
  }
}
