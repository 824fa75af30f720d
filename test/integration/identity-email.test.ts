import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { http, registerRest, trpcClient } from '../helpers/clients.js';
import { otherCode, sleep, useIdentityGateway } from '../helpers/identity.js';

// E-mail verification and linking (src/accounts/email-verification.ts); messenger linking and sign-in are in identity-messenger.test.ts.
const { gw, mailsTo, codeFor, verify, accountWithoutEmail } = useIdentityGateway();

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
