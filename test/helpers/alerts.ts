import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import defaultCatalog from '../../src/catalog/default-catalog.json' with { type: 'json' };
import { signatureProblem } from '../../src/accounts/messenger-webhook.js';
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { newFundedAccount } from './accounts.js';
import { http } from './clients.js';
import { startTestGateway, type TestGateway } from './gateway.js';
import { MESSENGER_SECRET, messengerUser, sign, smtpServer, type Delivered } from './identity.js';
import { PAYMENTS } from './payments.js';

/** A message the gateway asked the bot adapter to send, and whether it was signed with the bot's secret. */
export interface BotMessage {
  userId: string;
  text: string;
  signed: boolean;
}

/**
 * The messenger fake: the bot adapter's send endpoint (`messenger.sendUrl`), which keeps what it is given and
 * checks the gateway's signature as the real adapter would.
 */
function messengerFake(messages: BotMessage[]): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = JSON.parse(raw.toString('utf8')) as { user_id: string; text: string };
      const signed = signatureProblem(MESSENGER_SECRET, raw, req.headers['x-messenger-signature'] as string | undefined, Date.now()) === null;
      messages.push({ userId: body.user_id, text: body.text, signed });
      res.writeHead(signed ? 200 : 401).end();
    });
  });
}

const listen = (server: { listen(port: number, host: string, done: () => void): unknown }) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

/**
 * The alert tests' gateway: real SMTP (an in-process server), the messenger bot adapter fake, payments (a manual
 * method) and a video-jobs simulator upstream, with alerts coalesced over 50 ms.
 */
export function useAlertsGateway() {
  const mails: Delivered[] = [];
  const bot: BotMessage[] = [];
  const smtp = smtpServer(mails);
  const fake = messengerFake(bot);
  const gw = {} as TestGateway;
  const env: Record<string, string> = {};
  let sim: Simulator;
  let dir: string;

  beforeAll(async () => {
    await Promise.all([listen(smtp.server), listen(fake)]);
    sim = await startSimulator({ apiKey: 'video-upstream-secret' });
    dir = await mkdtemp(path.join(tmpdir(), 'baikal-alerts-'));
    const videoModels = defaultCatalog.models.filter((m) => m.kind === 'video').map((m) => m.id);
    const operator = {
      messenger: { label: 'Telegram', botUrl: 'https://t.me/baikal_test_bot', webhookSecretEnv: 'TEST_MESSENGER_SECRET', sendUrl: `http://127.0.0.1:${(fake.address() as AddressInfo).port}/send` },
      payments: PAYMENTS,
      upstreams: [{ id: 'video-sim', kind: 'video-jobs', baseUrl: `${sim.url}/v1`, credentialEnv: 'VIDEO_UPSTREAM_KEY', routes: [{ group: 'cheap', models: videoModels }] }],
    };
    await writeFile(path.join(dir, 'baikal.json'), JSON.stringify(operator));
    Object.assign(env, {
      SMTP_URL: `smtp://mailer:smtp-pass@127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
      BAIKAL_CONFIG: path.join(dir, 'baikal.json'),
      TEST_MESSENGER_SECRET: MESSENGER_SECRET,
      TEST_CHECKOUT_SECRET: `whsec-${randomUUID()}`,
      VIDEO_UPSTREAM_KEY: 'video-upstream-secret',
      VIDEO_POLL_MS: '40',
      DATA_DIR: dir,
      ALERTS_COALESCE_MS: '50',
      // A fired alert is also an `alert.triggered` webhook: the test's receiver listens on 127.0.0.1.
      WEBHOOKS_ALLOW_INSECURE_URLS: 'true',
      WEBHOOKS_POLL_MS: '50',
    });
    Object.assign(gw, await startTestGateway(env));
  });
  afterAll(async () => {
    await gw.close?.();
    await sim?.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    await new Promise<void>((resolve) => fake.close(() => resolve()));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function gql(token: string, query: string, variables: Record<string, unknown> = {}) {
    const response = await http(gw.url, 'POST', '/graphql', { token, body: { query, variables } });
    return response.body as { data: any; errors?: { message: string; extensions?: Record<string, any> }[] };
  }

  /** An account with a verified e-mail, a linked messenger (through the bot's signed webhook) and `paidUsd`. */
  async function alertAccount(paidUsd = '0') {
    const account = await newFundedAccount(gw, paidUsd === '0' ? undefined : paidUsd);
    await gw.db.query('update users set email_verified = true where id = $1', [account.userId]);
    const started = await http(gw.url, 'POST', '/auth/messenger/link/start', { token: account.token });
    expect(started.status, started.text).toBe(200);
    const user = messengerUser();
    const raw = JSON.stringify({ user, text: `/start ${started.body.token}` });
    const linked = await http(gw.url, 'POST', '/auth/messenger/webhook', { rawBody: raw, headers: { 'x-messenger-signature': sign(raw) } });
    expect(linked.status, linked.text).toBe(200);
    return { ...account, email: account.input.email.toLowerCase(), messengerId: user.id };
  }

  /** What reached the account so far: e-mails (subject and text, decoded) and bot messages. */
  function received(account: { email: string; messengerId: string }) {
    return {
      // The registration's verification code is not an alert.
      mails: mails.filter((m) => m.to.includes(account.email)).map((m) => decodeMail(m.raw)).filter((m) => !m.subject.endsWith('verification code')),
      bot: bot.filter((m) => m.userId === account.messengerId),
    };
  }

  return { gw, env, gql, alertAccount, received };
}

/** A nodemailer message's subject and plain text (quoted-printable or base64, UTF-8). */
function decodeMail(raw: string): { subject: string; text: string } {
  const [head = '', ...rest] = raw.split(/\r?\n\r?\n/);
  const headers = head.replace(/\r?\n[ \t]+/g, ' ');
  const subjectLine = /^Subject: (.*)$/im.exec(headers)?.[1] ?? '';
  const subject = subjectLine.replace(/=\?utf-8\?([BQ])\?([^?]*)\?=\s*/gi, (_m, enc: string, data: string) =>
    enc.toUpperCase() === 'B' ? Buffer.from(data, 'base64').toString('utf8') : decodeQp(data.replace(/_/g, ' ')),
  );
  const body = rest.join('\n\n');
  const encoding = /^Content-Transfer-Encoding: (.*)$/im.exec(headers)?.[1]?.trim().toLowerCase();
  const text = encoding === 'base64' ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8') : encoding === 'quoted-printable' ? decodeQp(body) : body;
  return { subject, text: text.replace(/\r\n/g, '\n').trim() };
}

function decodeQp(text: string): string {
  const bytes: number[] = [];
  const soft = text.replace(/=\r?\n/g, '');
  for (let i = 0; i < soft.length; i++) {
    if (soft[i] === '=' && /^[0-9A-F]{2}$/i.test(soft.slice(i + 1, i + 3))) {
      bytes.push(parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...Buffer.from(soft[i]!, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}
