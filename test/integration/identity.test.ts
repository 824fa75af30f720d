import { createHmac, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, registerRest, trpcClient } from '../helpers/clients.js';
import { operatorConfigFile, removeOperatorConfigFile } from '../helpers/config.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

// ---- an in-process SMTP server the gateway delivers to (SMTP_URL with credentials) ----

interface Delivered {
  to: string[];
  raw: string;
}
const delivered: Delivered[] = [];
const smtp = new SMTPServer({
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

const MESSENGER_SECRET = `msec-${randomUUID()}`;
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

function otherCode(code: string): string {
  return String((Number(code) + 1) % 1_000_000).padStart(6, '0');
}

async function verify(token: string, body: unknown) {
  return http(gw.url, 'POST', '/auth/verify-email', { token, body });
}

describe('e-mail verification over real SMTP', () => {
  it('registration sends a 6-digit code; verify-email (signed in) verifies and answers the Account', async () => {
    const { token, input } = await registerRest(gw.url);
    const code = await codeFor(input.email);
    const mail = mailsTo(input.email)[0]!;
    expect(mail.raw).toMatch(/Subject: Baikal: your e-mail verification code/);
    const [stored] = await gw.db.query('select code_hash, attempts, expires_at, created_at from email_codes where email = $1', [input.email]);
    expect(stored!.code_hash).not.toContain(code);
    expect(new Date(stored!.expires_at).getTime() - new Date(stored!.created_at).getTime()).toBe(10 * 60_000);

    expect((await http(gw.url, 'POST', '/auth/verify-email', { body: { code } })).status).toBe(401);
    const response = await verify(token, { code, email: input.email });
    expect(response.status, response.text).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['balance_usd', 'email', 'email_verified', 'is_admin', 'user_id', 'username']);
    expect(response.body).toMatchObject({ email: input.email, email_verified: true });
    expect((await http(gw.url, 'GET', '/auth/me', { token })).body.email_verified).toBe(true);
    // The development outbox is not used when SMTP is configured.
    expect(await gw.db.query('select 1 from email_outbox where to_address = $1', [input.email])).toHaveLength(0);
  });

  it('a code works once', async () => {
    const { token, input } = await registerRest(gw.url);
    const code = await codeFor(input.email);
    await gw.db.query('update users set email_verified = false where lower(email) = $1', [input.email]);
    expect((await verify(token, { code })).status).toBe(200);
    await gw.db.query('update users set email_verified = false where lower(email) = $1', [input.email]);
    const again = await verify(token, { code });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('code_expired');
  });

  it('an expired code is refused', async () => {
    const { token, input } = await registerRest(gw.url);
    const code = await codeFor(input.email);
    await gw.db.query("update email_codes set expires_at = now() - interval '1 second' where email = $1", [input.email]);
    const response = await verify(token, { code });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ detail: expect.any(String), code: 'code_expired' });
    expect((await http(gw.url, 'GET', '/auth/me', { token })).body.email_verified).toBe(false);
  });

  it('5 wrong tries void the code, even the right one fails afterwards', async () => {
    const { token, input } = await registerRest(gw.url);
    const code = await codeFor(input.email);
    for (let i = 0; i < 5; i += 1) {
      const wrong = await verify(token, { code: otherCode(code) });
      expect(wrong.status).toBe(400);
      expect(wrong.body.code).toBe('invalid_code');
    }
    const right = await verify(token, { code });
    expect(right.status).toBe(400);
    expect(right.body.code).toBe('code_expired');
    expect((await http(gw.url, 'GET', '/auth/me', { token })).body.email_verified).toBe(false);
  });

  it('parallel guesses cannot exceed 5 tries', async () => {
    const { token, input } = await registerRest(gw.url);
    const code = await codeFor(input.email);
    const guesses = await Promise.all(Array.from({ length: 12 }, () => verify(token, { code: otherCode(code) })));
    expect(guesses.filter((g) => g.body.code === 'invalid_code')).toHaveLength(5);
    expect((await verify(token, { code })).body.code).toBe('code_expired');
  });

  it('a code for another address or a malformed code is refused', async () => {
    const { token, input } = await registerRest(gw.url);
    const code = await codeFor(input.email);
    expect((await verify(token, { code, email: 'someone-else@example.test' })).body.code).toBe('invalid_code');
    const bad = await verify(token, { code: '12ab56' });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'code']);
    expect((await verify(token, { code, extra: 1 })).status).toBe(422);
    expect((await verify(token, { code })).status).toBe(200);
  });

  it('resend: always 202 {ok: true}; throttled per account (cooldown and hourly cap); a new code voids the old one', async () => {
    const { token, input } = await registerRest(gw.url);
    const first = await codeFor(input.email);
    // Within the cooldown: accepted, nothing sent.
    const throttled = await http(gw.url, 'POST', '/auth/resend-verification', { token, body: {} });
    expect(throttled.status).toBe(202);
    expect(throttled.body).toEqual({ ok: true });
    await sleep(1100);
    expect((await http(gw.url, 'POST', '/auth/resend-verification', { token, body: { email: input.email } })).status).toBe(202);
    const second = await codeFor(input.email, 2);
    await sleep(1100);
    expect((await http(gw.url, 'POST', '/auth/resend-verification', { token })).status).toBe(202);
    await codeFor(input.email, 3);
    await sleep(1100);
    // The hourly cap (3 in this gateway) is reached: still 202, nothing sent.
    expect((await http(gw.url, 'POST', '/auth/resend-verification', { token, body: {} })).body).toEqual({ ok: true });
    await sleep(200);
    expect(mailsTo(input.email)).toHaveLength(3);
    const third = await codeFor(input.email, 3);
    if (first !== third) expect((await verify(token, { code: first })).body.code).toBe('invalid_code');
    if (second !== third) expect((await verify(token, { code: second })).body.code).toBe('invalid_code');
    expect((await verify(token, { code: third })).status).toBe(200);
  });

  it('resend for a verified account or another address sends nothing and answers the same', async () => {
    const { token, input } = await registerRest(gw.url);
    await verify(token, { code: await codeFor(input.email) });
    await sleep(1100);
    expect((await http(gw.url, 'POST', '/auth/resend-verification', { token, body: {} })).body).toEqual({ ok: true });
    expect((await http(gw.url, 'POST', '/auth/resend-verification', { token, body: { email: 'victim@example.test' } })).body).toEqual({ ok: true });
    await sleep(200);
    expect(mailsTo(input.email)).toHaveLength(1);
    expect(mailsTo('victim@example.test')).toHaveLength(0);
  });
});

describe('invoices require a verified e-mail', () => {
  it('403 email_not_verified before verification, 201 after', async () => {
    const { token, input } = await registerRest(gw.url);
    expect((await http(gw.url, 'POST', '/payments/agreements/accept', { token, body: {} })).status).toBe(200);
    const refused = await http(gw.url, 'POST', '/payments/invoices', { token, body: { amount_usd: 10, method: 'card_rub' } });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ detail: expect.any(String), code: 'email_not_verified' });
    await verify(token, { code: await codeFor(input.email) });
    const created = await http(gw.url, 'POST', '/payments/invoices', { token, body: { amount_usd: 10, method: 'card_rub' } });
    expect(created.status, created.text).toBe(201);
  });
});

/** A registered account whose e-mail (and optionally password) is removed, as a messenger-only account has. */
async function accountWithoutEmail(options: { password?: boolean } = {}) {
  const registered = await registerRest(gw.url);
  await codeFor(registered.input.email);
  await gw.db.query(`update users set email = null, email_verified = false${options.password === false ? ', password_hash = null' : ''} where id = $1`, [registered.account.user_id]);
  return registered;
}

describe('e-mail link', () => {
  it('start sends a code; confirm links and verifies the address and sets the password', async () => {
    const { token, account } = await accountWithoutEmail({ password: false });
    const email = `linked-${randomUUID().slice(0, 8)}@example.test`;
    const started = await http(gw.url, 'POST', '/auth/email/link/start', { token, body: { email } });
    expect(started.status).toBe(202);
    expect(Object.keys(started.body).sort()).toEqual(['expires_at', 'ok']);
    expect(started.body.ok).toBe(true);
    const code = await codeFor(email);
    expect(mailsTo(email)[0]!.raw).toMatch(/Subject: Baikal: code to link your e-mail/);
    const wrong = await http(gw.url, 'POST', '/auth/email/link/confirm', { token, body: { email, code: otherCode(code), password: 'new-password-1' } });
    expect(wrong.body.code).toBe('invalid_code');
    const confirmed = await http(gw.url, 'POST', '/auth/email/link/confirm', { token, body: { email: email.toUpperCase(), code, password: 'new-password-1' } });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body).toEqual({ ok: true, email });
    expect((await http(gw.url, 'GET', '/auth/me', { token })).body).toMatchObject({ user_id: account.user_id, email, email_verified: true });
    expect((await http(gw.url, 'POST', '/auth/login', { body: { login: email, password: 'new-password-1' } })).status).toBe(200);
    // Once an e-mail is set, linking another is refused.
    expect((await http(gw.url, 'POST', '/auth/email/link/start', { token, body: { email: 'x@example.test' } })).status).toBe(409);
  });

  it('a taken address: the start answers the same and sends nothing; the confirm fails generically', async () => {
    const other = await registerRest(gw.url);
    const { token, input } = await accountWithoutEmail();
    const started = await http(gw.url, 'POST', '/auth/email/link/start', { token, body: { email: other.input.email } });
    expect(started.status).toBe(202);
    expect(Object.keys(started.body).sort()).toEqual(['expires_at', 'ok']);
    await sleep(200);
    expect(mailsTo(other.input.email)).toHaveLength(1); // only its own verification code
    const confirm = await http(gw.url, 'POST', '/auth/email/link/confirm', { token, body: { email: other.input.email, code: '123456', password: input.password } });
    expect(confirm.status).toBe(400);
    expect(confirm.body.code).toBe('code_expired');
    expect(confirm.text).not.toContain(other.account.user_id);
  });

  it('an account with a password must give that password; the code is for the address it was sent to', async () => {
    const { token, input } = await accountWithoutEmail();
    const email = `pw-${randomUUID().slice(0, 8)}@example.test`;
    await http(gw.url, 'POST', '/auth/email/link/start', { token, body: { email } });
    const code = await codeFor(email);
    expect((await http(gw.url, 'POST', '/auth/email/link/confirm', { token, body: { email, code, password: 'not-the-password' } })).status).toBe(401);
    expect((await http(gw.url, 'POST', '/auth/email/link/confirm', { token, body: { email: 'other@example.test', code, password: input.password } })).body.code).toBe('invalid_code');
    const ok = await http(gw.url, 'POST', '/auth/email/link/confirm', { token, body: { email, code, password: input.password } });
    expect(ok.body).toEqual({ ok: true, email });
  });
});

// ---- messenger linking ----

function sign(raw: string, secret = MESSENGER_SECRET, t = Math.floor(Date.now() / 1000)): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex')}`;
}

async function botEvent(event: Record<string, unknown>, signature: string | null | ((raw: string) => string) = (raw) => sign(raw)) {
  const raw = JSON.stringify(event);
  const header = typeof signature === 'function' ? signature(raw) : signature;
  return http(gw.url, 'POST', '/auth/messenger/webhook', { rawBody: raw, headers: header ? { 'x-messenger-signature': header } : {} });
}

const messengerUser = () => ({ id: String(Math.floor(Math.random() * 1e12)), name: `@tg_${randomUUID().slice(0, 6)}` });

describe('messenger linking', () => {
  it('cabinet-initiated: start, the signed webhook reports /start <token>, status and links show it', async () => {
    const { token } = await registerRest(gw.url);
    expect((await http(gw.url, 'GET', '/auth/links', { token })).body).toEqual({ linked: false, messenger_label: null, has_password: true, email: expect.any(String), email_verified: false });
    const started = await http(gw.url, 'POST', '/auth/messenger/link/start', { token });
    expect(started.status).toBe(200);
    expect(Object.keys(started.body).sort()).toEqual(['bot_url', 'expires_at', 'token']);
    expect(started.body.token).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    expect(started.body.bot_url).toBe(`https://t.me/baikal_test_bot?start=${started.body.token}`);
    const pending = await http(gw.url, 'GET', `/auth/messenger/link/status?token=${started.body.token}`, { token });
    expect(pending.body).toMatchObject({ linked: false, status: 'pending', initiated_by: 'cabinet', error_code: null });

    const user = messengerUser();
    // Forged, unsigned and stale reports change nothing.
    expect((await botEvent({ user, text: `/start ${started.body.token}` }, (raw) => sign(raw, 'wrong-secret-123456'))).status).toBe(400);
    expect((await botEvent({ user, text: `/start ${started.body.token}` }, null)).status).toBe(400);
    expect((await botEvent({ user, text: `/start ${started.body.token}` }, (raw) => sign(raw, MESSENGER_SECRET, Math.floor(Date.now() / 1000) - 3600))).status).toBe(400);
    expect((await http(gw.url, 'GET', `/auth/messenger/link/status?token=${started.body.token}`, { token })).body.status).toBe('pending');

    const reported = await botEvent({ user, text: `/start ${started.body.token}` });
    expect(reported.status).toBe(200);
    expect(reported.body).toEqual({ ok: true, outcome: 'confirmed' });
    const done = await http(gw.url, 'GET', `/auth/messenger/link/status?token=${started.body.token}`, { token });
    expect(done.body).toMatchObject({ linked: true, messenger_label: user.name, status: 'confirmed' });
    expect((await http(gw.url, 'GET', '/auth/links', { token })).body).toMatchObject({ linked: true, messenger_label: user.name, has_password: true });
    // A replay changes nothing.
    expect((await botEvent({ user: messengerUser(), text: `/start ${started.body.token}` })).body.outcome).toBe('confirmed');
    expect((await http(gw.url, 'GET', '/auth/links', { token })).body.messenger_label).toBe(user.name);
  });

  it('status: 422 outside 32..256 characters; 404 for an unknown or someone else’s token', async () => {
    const { token } = await registerRest(gw.url);
    for (const bad of ['short', 'x'.repeat(257)]) {
      const response = await http(gw.url, 'GET', `/auth/messenger/link/status?token=${bad}`, { token });
      expect(response.status).toBe(422);
      expect(response.body.detail[0].loc).toEqual(['query', 'token']);
    }
    expect((await http(gw.url, 'GET', '/auth/messenger/link/status', { token })).status).toBe(422);
    expect((await http(gw.url, 'GET', `/auth/messenger/link/status?token=${'a'.repeat(40)}`, { token })).status).toBe(404);
    const other = await registerRest(gw.url);
    const started = await http(gw.url, 'POST', '/auth/messenger/link/start', { token: other.token });
    expect((await http(gw.url, 'GET', `/auth/messenger/link/status?token=${started.body.token}`, { token })).status).toBe(404);
  });

  it('an expired cabinet token is not finished by the bot', async () => {
    const { token, account } = await registerRest(gw.url);
    const started = await http(gw.url, 'POST', '/auth/messenger/link/start', { token });
    await gw.db.query("update messenger_links set expires_at = now() - interval '1 second' where user_id = $1", [account.user_id]);
    expect((await botEvent({ user: messengerUser(), text: `/start ${started.body.token}` })).body.outcome).toBe('expired');
    expect((await http(gw.url, 'GET', `/auth/messenger/link/status?token=${started.body.token}`, { token })).body).toMatchObject({ status: 'expired', linked: false });
  });

  it('bot-initiated: a bare /start issues a token; the signed-in user confirms it; expired and reused tokens are refused', async () => {
    const { token, account } = await registerRest(gw.url);
    const user = messengerUser();
    const issued = await botEvent({ user, text: '/start' });
    expect(issued.body).toMatchObject({ ok: true, outcome: 'token_issued', token: expect.stringMatching(/^[A-Za-z0-9_-]{32,}$/) });
    const status = await http(gw.url, 'GET', `/auth/messenger/link/status?token=${issued.body.token}`, { token });
    expect(status.body).toMatchObject({ status: 'pending', initiated_by: 'bot', linked: false });
    const confirmed = await http(gw.url, 'POST', '/auth/messenger/link/confirm', { token, body: { token: issued.body.token } });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body).toEqual({ status: 'confirmed', user_id: account.user_id });
    expect((await http(gw.url, 'GET', '/auth/links', { token })).body).toMatchObject({ linked: true, messenger_label: user.name });

    // The same messenger identity cannot be linked to a second account.
    const other = await registerRest(gw.url);
    const again = await botEvent({ user, text: '/start' });
    const taken = await http(gw.url, 'POST', '/auth/messenger/link/confirm', { token: other.token, body: { token: again.body.token } });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('messenger_taken');
    // Reuse.
    expect((await http(gw.url, 'POST', '/auth/messenger/link/confirm', { token: other.token, body: { token: issued.body.token } })).status).toBe(409);
    // Expired.
    const late = await botEvent({ user: messengerUser(), text: '/start' });
    await gw.db.query("update messenger_links set expires_at = now() - interval '1 second' where initiated_by = 'bot' and status = 'pending'");
    const expired = await http(gw.url, 'POST', '/auth/messenger/link/confirm', { token: other.token, body: { token: late.body.token } });
    expect(expired.status).toBe(400);
    expect(expired.body.code).toBe('link_expired');
    expect((await http(gw.url, 'GET', '/auth/links', { token: other.token })).body.linked).toBe(false);
    // Unknown.
    expect((await http(gw.url, 'POST', '/auth/messenger/link/confirm', { token: other.token, body: { token: 'b'.repeat(43) } })).status).toBe(404);
  });

  it('a forged bare /start issues nothing', async () => {
    const before = await gw.db.query('select count(*)::int as n from messenger_links');
    expect((await botEvent({ user: messengerUser(), text: '/start' }, (raw) => sign(raw, 'forged-secret-000000'))).status).toBe(400);
    expect((await botEvent({ user: messengerUser(), text: '/start' }, 't=1,v1=zz')).status).toBe(400);
    expect(await gw.db.query('select count(*)::int as n from messenger_links')).toEqual(before);
  });

  it('unlink: 204 with another way to sign in; 409 last_sign_in_method when the messenger is the only one; 404 when none is linked', async () => {
    const { token } = await registerRest(gw.url);
    expect((await http(gw.url, 'DELETE', '/auth/messenger/link', { token })).status).toBe(404);
    const issued = await botEvent({ user: messengerUser(), text: '/start' });
    await http(gw.url, 'POST', '/auth/messenger/link/confirm', { token, body: { token: issued.body.token } });
    expect((await http(gw.url, 'DELETE', '/auth/messenger/link', { token })).status).toBe(204);
    expect((await http(gw.url, 'GET', '/auth/links', { token })).body.linked).toBe(false);

    const messengerOnly = await accountWithoutEmail({ password: false });
    const issued2 = await botEvent({ user: messengerUser(), text: '/start' });
    await http(gw.url, 'POST', '/auth/messenger/link/confirm', { token: messengerOnly.token, body: { token: issued2.body.token } });
    const refused = await http(gw.url, 'DELETE', '/auth/messenger/link', { token: messengerOnly.token });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('last_sign_in_method');
    expect((await http(gw.url, 'GET', '/auth/links', { token: messengerOnly.token })).body).toMatchObject({ linked: true, has_password: false, email: null });
  });
});

describe('signing in with the messenger', () => {
  async function startLogin() {
    const started = await http(gw.url, 'GET', '/auth/messenger/start');
    expect(started.status, started.text).toBe(200);
    return started.body as { token: string; bot_url: string; expires_at: string };
  }
  // The browser that started the sign-in carries its binding cookie (see test/security/smaller-ones.test.ts for one that does not).
  const callback = (token: string) => http(gw.url, 'GET', `/auth/messenger/callback?token=${token}`, { headers: { cookie: `baikal_messenger_login=${token}` } });

  it('a new messenger identity: start, the signed webhook confirms, the callback creates the account and signs in; again: the same account', async () => {
    const started = await startLogin();
    expect(Object.keys(started).sort()).toEqual(['bot_url', 'expires_at', 'token']);
    expect(started.token).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    expect(started.bot_url).toBe(`https://t.me/baikal_test_bot?start=login_${started.token}`);
    const [stored] = await gw.db.query('select token_hash, initiated_by, status, expires_at, created_at from messenger_links where token_hash = encode(sha256($1::bytea), \'hex\')', [started.token]);
    expect(stored).toMatchObject({ initiated_by: 'login', status: 'pending' });
    expect(stored!.token_hash).not.toContain(started.token);

    const pending = await callback(started.token);
    expect(pending.status).toBe(409);
    expect(pending.body.code).toBe('login_pending');

    const user = { id: String(Math.floor(Math.random() * 1e12)), name: `Ivan Petrov ${randomUUID().slice(0, 4)}` };
    const reported = await botEvent({ user, text: `/start login_${started.token}` });
    expect(reported.status).toBe(200);
    expect(reported.body).toEqual({ ok: true, outcome: 'confirmed' });

    const signedIn = await callback(started.token);
    expect(signedIn.status, signedIn.text).toBe(200);
    expect(Object.keys(signedIn.body).sort()).toEqual(['balance_usd', 'email', 'email_verified', 'is_admin', 'user_id', 'username']);
    expect(signedIn.body).toMatchObject({ email: null, email_verified: false, is_admin: false });
    expect(signedIn.body.username).toMatch(/^IvanPetrov[A-Za-z0-9]{4}(_\d{6})?$/);
    const session = signedIn.headers.get('x-session-token')!;
    expect(session).toMatch(/^bks_/);
    expect(signedIn.headers.get('set-cookie')).toContain(session);
    expect((await http(gw.url, 'GET', '/auth/me', { token: session })).body).toEqual(signedIn.body);
    expect((await http(gw.url, 'GET', '/auth/links', { token: session })).body).toEqual({ linked: true, messenger_label: user.name, has_password: false, email: null, email_verified: false });

    // Single use.
    const reused = await callback(started.token);
    expect(reused.status).toBe(409);
    expect(reused.body.code).toBe('link_used');
    expect((await botEvent({ user: messengerUser(), text: `/start login_${started.token}` })).body.outcome).toBe('link_used');

    // The same identity signs in to the same account; the same display name elsewhere gets a unique username.
    const second = await startLogin();
    await botEvent({ user, text: `/start login_${second.token}` });
    const again = await callback(second.token);
    expect(again.status, again.text).toBe(200);
    expect(again.body.user_id).toBe(signedIn.body.user_id);
    expect(again.headers.get('x-session-token')).not.toBe(session);
    const third = await startLogin();
    await botEvent({ user: { id: `${user.id}9`, name: user.name }, text: `/start login_${third.token}` });
    const namesake = await callback(third.token);
    expect(namesake.status, namesake.text).toBe(200);
    expect(namesake.body.user_id).not.toBe(signedIn.body.user_id);
    expect(namesake.body.username.toLowerCase()).not.toBe(signedIn.body.username.toLowerCase());
  });

  it('an account that linked the messenger in the cabinet is the one signed in', async () => {
    const { token, account } = await registerRest(gw.url);
    const user = messengerUser();
    const link = await http(gw.url, 'POST', '/auth/messenger/link/start', { token });
    await botEvent({ user, text: `/start ${link.body.token}` });
    const started = await startLogin();
    await botEvent({ user, text: `/start login_${started.token}` });
    const signedIn = await callback(started.token);
    expect(signedIn.status, signedIn.text).toBe(200);
    expect(signedIn.body.user_id).toBe(account.user_id);
  });

  it('forged, unsigned and stale reports confirm nothing; expired, unknown and malformed tokens are refused', async () => {
    const started = await startLogin();
    const user = messengerUser();
    const text = `/start login_${started.token}`;
    expect((await botEvent({ user, text }, (raw) => sign(raw, 'wrong-secret-123456'))).status).toBe(400);
    expect((await botEvent({ user, text }, null)).status).toBe(400);
    expect((await botEvent({ user, text }, (raw) => sign(raw, MESSENGER_SECRET, Math.floor(Date.now() / 1000) - 3600))).status).toBe(400);
    expect((await callback(started.token)).body.code).toBe('login_pending');

    // Expired before the bot confirmed it.
    await gw.db.query("update messenger_links set expires_at = now() - interval '1 second' where token_hash = encode(sha256($1::bytea), 'hex')", [started.token]);
    expect((await botEvent({ user, text })).body.outcome).toBe('expired');
    const expired = await callback(started.token);
    expect(expired.status).toBe(400);
    expect(expired.body).toEqual({ detail: expect.any(String), code: 'link_expired' });

    // Confirmed, but the browser came back too late.
    const late = await startLogin();
    await botEvent({ user, text: `/start login_${late.token}` });
    await gw.db.query("update messenger_links set expires_at = now() - interval '1 second' where token_hash = encode(sha256($1::bytea), 'hex')", [late.token]);
    expect((await callback(late.token)).body.code).toBe('link_expired');
    expect(await gw.db.query('select 1 from users where messenger_user_id = $1', [user.id])).toHaveLength(0);

    // Unknown, malformed; a cabinet link token is not a sign-in token.
    expect((await botEvent({ user, text: `/start login_${'c'.repeat(43)}` })).body.outcome).toBe('unknown_token');
    expect((await callback('d'.repeat(43))).status).toBe(404);
    const { token } = await registerRest(gw.url);
    const cabinet = await http(gw.url, 'POST', '/auth/messenger/link/start', { token });
    expect((await callback(cabinet.body.token)).status).toBe(404);
    for (const bad of ['short', 'x'.repeat(257)]) {
      const response = await callback(bad);
      expect(response.status).toBe(422);
      expect(response.body.detail[0].loc).toEqual(['query', 'token']);
    }
    expect((await http(gw.url, 'GET', '/auth/messenger/callback')).status).toBe(422);
  });
});

describe('GraphQL and tRPC', () => {
  it('verifyEmail and resendVerification over GraphQL; identity over tRPC', async () => {
    const { token, input } = await registerRest(gw.url);
    const code = await codeFor(input.email);
    const gql = async (query: string, variables: Record<string, unknown> = {}) => (await http(gw.url, 'POST', '/graphql', { token, body: { query, variables } })).body;
    expect((await gql('mutation { resendVerification { ok } }')).data.resendVerification).toEqual({ ok: true });
    const wrong = await gql('mutation($code: String!) { verifyEmail(code: $code) { emailVerified } }', { code: otherCode(code) });
    expect(wrong.errors[0].extensions).toMatchObject({ reason: 'invalid_code' });
    const ok = await gql('mutation($code: String!) { verifyEmail(code: $code) { email emailVerified } }', { code });
    expect(ok.data.verifyEmail).toEqual({ email: input.email, emailVerified: true });
    expect((await gql('query { identityLinks { linked hasPassword emailVerified } }')).data.identityLinks).toEqual({ linked: false, hasPassword: true, emailVerified: true });
    const started = await gql('mutation { startMessengerLink { token botUrl expiresAt } }');
    expect(started.data.startMessengerLink.botUrl).toContain(started.data.startMessengerLink.token);

    const client = trpcClient(gw.url, token);
    expect(await client.accounts.resendVerification.mutate()).toEqual({ ok: true });
    expect(await client.accounts.links.query()).toMatchObject({ linked: false, emailVerified: true });
    const status = await client.accounts.messengerLinkStatus.query({ token: started.data.startMessengerLink.token });
    expect(status).toMatchObject({ status: 'pending', initiatedBy: 'cabinet' });
  });

  it('startEmailLink and confirmEmailLink over GraphQL', async () => {
    const { token, input } = await accountWithoutEmail();
    const email = `gql-${randomUUID().slice(0, 8)}@example.test`;
    const gql = async (query: string, variables: Record<string, unknown> = {}) => (await http(gw.url, 'POST', '/graphql', { token, body: { query, variables } })).body;
    const started = await gql('mutation($email: String!) { startEmailLink(email: $email) { ok expiresAt } }', { email });
    expect(started.data.startEmailLink.ok).toBe(true);
    const code = await codeFor(email);
    const confirmed = await gql('mutation($email: String!, $code: String!, $password: String!) { confirmEmailLink(email: $email, code: $code, password: $password) { ok email } }', { email, code, password: input.password });
    expect(confirmed.data.confirmEmailLink).toEqual({ ok: true, email });
  });
});
