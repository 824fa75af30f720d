import { createHmac, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll } from 'vitest';
import { http, registerRest } from './clients.js';
import { operatorConfigFile, removeOperatorConfigFile } from './config.js';
import { startTestGateway, type TestGateway } from './gateway.js';

/**
 * The identity tests' gateway (test/integration/identity-*.test.ts): it delivers mail to an in-process SMTP
 * server (SMTP_URL with credentials), sends a code at most once a second and 3 an hour per account, and has
 * a messenger bot whose webhook is signed with MESSENGER_SECRET.
 */

export interface Delivered {
  to: string[];
  raw: string;
}

export const MESSENGER_SECRET = `msec-${randomUUID()}`;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function otherCode(code: string): string {
  return String((Number(code) + 1) % 1_000_000).padStart(6, '0');
}

export function sign(raw: string, secret = MESSENGER_SECRET, t = Math.floor(Date.now() / 1000)): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex')}`;
}

export const messengerUser = () => ({ id: String(Math.floor(Math.random() * 1e12)), name: `@tg_${randomUUID().slice(0, 6)}` });

/** An SMTP server that takes the gateway's credentials and keeps every message it is given in `delivered`. */
export function smtpServer(delivered: Delivered[]): SMTPServer {
  return new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      if (auth.username === 'mailer' && auth.password === 'smtp-pass') callback(null, { user: 'mailer' });
      else callback(new Error('Invalid credentials'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        delivered.push({ to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
}

/** Starts the SMTP server and the gateway before the file's tests, stops both after them. */
export function useIdentityGateway() {
  const delivered: Delivered[] = [];
  const smtp = smtpServer(delivered);
  const configFile = operatorConfigFile({ messenger: { label: 'Telegram', botUrl: 'https://t.me/baikal_test_bot', webhookSecretEnv: 'TEST_MESSENGER_SECRET', tokenTtlMinutes: 15 } });

  const gw = {} as TestGateway;
  beforeAll(async () => {
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const port = (smtp.server.address() as AddressInfo).port;
    Object.assign(
      gw,
      await startTestGateway({
        SMTP_URL: `smtp://mailer:smtp-pass@127.0.0.1:${port}`,
        EMAIL_CODE_COOLDOWN_SECONDS: '1',
        EMAIL_CODE_MAX_PER_HOUR: '3',
        BAIKAL_CONFIG: configFile,
        TEST_MESSENGER_SECRET: MESSENGER_SECRET,
      }),
    );
  });
  afterAll(async () => {
    await gw.close?.();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    removeOperatorConfigFile(configFile);
  });

  function mailsTo(address: string): Delivered[] {
    return delivered.filter((m) => m.to.includes(address.toLowerCase()));
  }

  /** The code in the n-th (1-based) message delivered to `address`, waiting for it to arrive. */
  async function codeFor(address: string, n = 1): Promise<string> {
    for (let i = 0; i < 100; i += 1) {
      const mail = mailsTo(address)[n - 1];
      if (mail) {
        const match = /: (\d{6})\r?\n/.exec(mail.raw);
        if (!match) throw new Error(`no code in ${mail.raw}`);
        return match[1]!;
      }
      await sleep(30);
    }
    throw new Error(`no message #${n} to ${address}`);
  }

  async function verify(token: string, body: unknown) {
    return http(gw.url, 'POST', '/auth/verify-email', { token, body });
  }

  /** A registered account whose e-mail (and optionally password) is removed, as a messenger-only account has. */
  async function accountWithoutEmail(options: { password?: boolean } = {}) {
    const registered = await registerRest(gw.url);
    await codeFor(registered.input.email);
    await gw.db.query(`update users set email = null, email_verified = false${options.password === false ? ', password_hash = null' : ''} where id = $1`, [registered.account.user_id]);
    return registered;
  }

  async function botEvent(event: Record<string, unknown>, signature: string | null | ((raw: string) => string) = (raw) => sign(raw)) {
    const raw = JSON.stringify(event);
    const header = typeof signature === 'function' ? signature(raw) : signature;
    return http(gw.url, 'POST', '/auth/messenger/webhook', { rawBody: raw, headers: header ? { 'x-messenger-signature': header } : {} });
  }

  return { gw, mailsTo, codeFor, verify, accountWithoutEmail, botEvent };
}
