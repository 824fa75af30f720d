import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { http, registerRest } from '../helpers/clients.js';
import { MESSENGER_SECRET, messengerUser, sign, useIdentityGateway } from '../helpers/identity.js';

// Messenger linking (src/accounts/messenger-link.ts) and signing in with the messenger (messenger-login.ts), through the bot's signed webhook.
const { gw, accountWithoutEmail, botEvent } = useIdentityGateway();

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
