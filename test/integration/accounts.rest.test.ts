import { describe, expect, it } from 'vitest';
import { useTestGateway } from '../helpers/gateway.js';
import { http, newAccountInput, registerRest } from '../helpers/clients.js';
import { seedLedger } from '../helpers/ledger.js';

const gw = useTestGateway({ LOGIN_MAX_FAILURES_PER_ACCOUNT: '3', LOGIN_MAX_ATTEMPTS_PER_ADDRESS: '1000' });

/** Asserts a body is exactly SPEC.md's Account shape. */
function expectAccountShape(body: Record<string, unknown>) {
  expect(Object.keys(body).sort()).toEqual(['balance_usd', 'email', 'email_verified', 'is_admin', 'user_id', 'username']);
  expect(typeof body.user_id).toBe('string');
  expect(typeof body.email_verified).toBe('boolean');
  expect(typeof body.is_admin).toBe('boolean');
  expect(body.balance_usd).toMatch(/^-?\d+(\.\d+)?$/);
}

function expectValidationError(response: { status: number; body: any }, loc: (string | number)[], type?: string) {
  expect(response.status).toBe(422);
  expect(Array.isArray(response.body.detail)).toBe(true);
  for (const issue of response.body.detail) {
    expect(Object.keys(issue).sort()).toEqual(['loc', 'msg', 'type']);
    expect(typeof issue.msg).toBe('string');
  }
  const match = response.body.detail.find((issue: any) => JSON.stringify(issue.loc) === JSON.stringify(loc));
  expect(match, `no issue at ${JSON.stringify(loc)} in ${JSON.stringify(response.body)}`).toBeTruthy();
  if (type) expect(match.type).toBe(type);
}

describe('POST /auth/register', () => {
  it('creates an account (201 Account), signs it in by cookie and session token', async () => {
    const input = newAccountInput();
    const response = await http(gw.url, 'POST', '/auth/register', { body: input });
    expect(response.status).toBe(201);
    expectAccountShape(response.body);
    expect(response.body).toMatchObject({ username: input.username, email: input.email, email_verified: false, balance_usd: '0', is_admin: false });
    const cookie = response.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^baikal_session=bks_[A-Za-z0-9_-]{43};/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    const token = response.headers.get('x-session-token')!;
    expect(cookie).toContain(token);
    const stored = await gw.db.query('select password_hash from users where id = $1', [response.body.user_id]);
    expect(stored[0]!.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(stored[0]!.password_hash).not.toContain(input.password);
  });

  it('stores e-mail in lower case and refuses a taken username or e-mail with 409, case-insensitively', async () => {
    const input = newAccountInput();
    await registerRest(gw.url, { ...input, email: input.email.toUpperCase() });
    const sameName = await http(gw.url, 'POST', '/auth/register', { body: { ...newAccountInput(), username: input.username.toUpperCase() } });
    expect(sameName.status).toBe(409);
    expect(sameName.body).toEqual({ detail: 'This username is already taken', code: 'username_taken' });
    const sameEmail = await http(gw.url, 'POST', '/auth/register', { body: { ...newAccountInput(), email: input.email } });
    expect(sameEmail.status).toBe(409);
    expect(sameEmail.body.code).toBe('email_taken');
  });

  it('admits exactly one of many concurrent registrations of the same username', async () => {
    const base = newAccountInput();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => http(gw.url, 'POST', '/auth/register', { body: { ...newAccountInput(), username: base.username, email: `race${i}-${base.email}` } })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(7);
    const rows = await gw.db.query('select count(*)::int as n from users where lower(username) = lower($1)', [base.username]);
    expect(rows[0]!.n).toBe(1);
  });

  it.each([
    ['a missing field', { username: 'someone', email: 'someone@example.test' }, ['body', 'password'], 'missing'],
    ['a wrong type', { username: 12345, email: 'x@example.test', password: 'password1' }, ['body', 'username'], 'string_type'],
    ['an unknown field', { ...newAccountInput(), admin: true }, ['body', 'admin'], 'extra_forbidden'],
    ['a short password', { ...newAccountInput(), password: 'short' }, ['body', 'password'], 'string_too_short'],
    ['a long password', { ...newAccountInput(), password: 'x'.repeat(129) }, ['body', 'password'], 'string_too_long'],
    ['a bad e-mail', { ...newAccountInput(), email: 'not-an-email' }, ['body', 'email'], 'email_format'],
    ['a bad username', { ...newAccountInput(), username: 'bad name!' }, ['body', 'username'], 'string_pattern_mismatch'],
    ['an array body', [1, 2], ['body'], 'dict_type'],
  ])('422 for %s, and writes nothing', async (_name, body, loc, type) => {
    const before = await gw.db.query('select count(*)::int as n from users');
    const response = await http(gw.url, 'POST', '/auth/register', { body });
    expectValidationError(response, loc, type);
    const after = await gw.db.query('select count(*)::int as n from users');
    expect(after[0]!.n).toBe(before[0]!.n);
  });

  it('422 json_invalid for malformed JSON, and 422 missing for no body', async () => {
    const malformed = await http(gw.url, 'POST', '/auth/register', { rawBody: '{"username": "x",' });
    expectValidationError(malformed, ['body'], 'json_invalid');
    const empty = await http(gw.url, 'POST', '/auth/register');
    expectValidationError(empty, ['body'], 'missing');
  });

  it('accepts exactly 8 and 128 character passwords', async () => {
    for (const password of ['x'.repeat(8), 'y'.repeat(128)]) {
      const response = await http(gw.url, 'POST', '/auth/register', { body: { ...newAccountInput(), password } });
      expect(response.status).toBe(201);
    }
  });
});

describe('POST /auth/login', () => {
  it('signs in by username or by e-mail (any case) with a fresh session', async () => {
    const { input, account, token } = await registerRest(gw.url);
    for (const login of [input.username, input.email.toUpperCase()]) {
      const response = await http(gw.url, 'POST', '/auth/login', { body: { login, password: input.password } });
      expect(response.status).toBe(200);
      expectAccountShape(response.body);
      expect(response.body.user_id).toBe(account.user_id);
      const newToken = response.headers.get('x-session-token');
      expect(newToken).toMatch(/^bks_/);
      expect(newToken).not.toBe(token);
    }
  });

  it('gives the same 401 for a wrong password and an unknown account', async () => {
    const { input } = await registerRest(gw.url);
    const wrong = await http(gw.url, 'POST', '/auth/login', { body: { login: input.username, password: 'wrong-password' } });
    const unknown = await http(gw.url, 'POST', '/auth/login', { body: { login: 'nobody-here', password: 'wrong-password' } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body).toEqual({ detail: 'Wrong login or password', code: 'invalid_credentials' });
  });

  it('throttles an account after repeated failures (429 with Retry-After), even for the right password', async () => {
    const { input } = await registerRest(gw.url);
    for (let i = 0; i < 3; i++) {
      const response = await http(gw.url, 'POST', '/auth/login', { body: { login: input.username, password: 'nope-nope' } });
      expect(response.status).toBe(401);
    }
    const throttled = await http(gw.url, 'POST', '/auth/login', { body: { login: input.username, password: input.password } });
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(throttled.body.code).toBe('login_throttled');
  });

  it('422 for a missing password and for unknown fields', async () => {
    expectValidationError(await http(gw.url, 'POST', '/auth/login', { body: { login: 'someone' } }), ['body', 'password'], 'missing');
    expectValidationError(await http(gw.url, 'POST', '/auth/login', { body: { login: 'a', password: 'b', remember: true } }), ['body', 'remember'], 'extra_forbidden');
    expectValidationError(await http(gw.url, 'POST', '/auth/login', { body: { login: ['a'], password: 'b' } }), ['body', 'login'], 'string_type');
  });
});

describe('sessions: me, logout', () => {
  it('GET /auth/me works with the Bearer session token and with the cookie', async () => {
    const { account, token } = await registerRest(gw.url);
    const bearer = await http(gw.url, 'GET', '/auth/me', { token });
    expect(bearer.status).toBe(200);
    expect(bearer.body).toEqual(account);
    const cookie = await http(gw.url, 'GET', '/auth/me', { headers: { cookie: `other=1; baikal_session=${token}` } });
    expect(cookie.status).toBe(200);
    expect(cookie.body).toEqual(account);
  });

  it.each([
    ['no credential', {}],
    ['a garbage bearer token', { authorization: 'Bearer nonsense' }],
    ['an unknown session token', { authorization: 'Bearer bks_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }],
    ["a SQL fragment", { authorization: "Bearer bks_' or 1=1 --" }],
    ['an unknown cookie', { cookie: 'baikal_session=bks_nope' }],
  ])('401 for %s', async (_name, headers) => {
    for (const path of ['/auth/me', '/auth/summary', '/auth/transactions']) {
      const response = await http(gw.url, 'GET', path, { headers });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ detail: 'Not signed in', code: 'unauthenticated' });
    }
    expect((await http(gw.url, 'POST', '/auth/logout', { headers })).status).toBe(401);
  });

  it('POST /auth/logout answers 204 with no body, revokes only that session, and clears the cookie', async () => {
    const { input, token } = await registerRest(gw.url);
    const other = await http(gw.url, 'POST', '/auth/login', { body: { login: input.username, password: input.password } });
    const otherToken = other.headers.get('x-session-token')!;
    const response = await fetch(`${gw.url}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    expect(response.headers.get('set-cookie')).toMatch(/baikal_session=;.*Expires=Thu, 01 Jan 1970/);
    expect((await http(gw.url, 'GET', '/auth/me', { token })).status).toBe(401);
    expect((await http(gw.url, 'GET', '/auth/me', { token: otherToken })).status).toBe(200);
  });

  it('refuses a cookie-authenticated write from another site (403), but not the same request by token', async () => {
    const { token } = await registerRest(gw.url);
    const crossSite = await http(gw.url, 'POST', '/auth/logout', { headers: { cookie: `baikal_session=${token}`, 'sec-fetch-site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    expect(crossSite.body.code).toBe('cross_site_request');
    const foreignOrigin = await http(gw.url, 'POST', '/auth/logout', { headers: { cookie: `baikal_session=${token}`, origin: 'https://evil.example' } });
    expect(foreignOrigin.status).toBe(403);
    expect((await http(gw.url, 'GET', '/auth/me', { token })).status).toBe(200);
    const sameOrigin = await http(gw.url, 'POST', '/auth/logout', { headers: { cookie: `baikal_session=${token}`, 'sec-fetch-site': 'same-origin' } });
    expect(sameOrigin.status).toBe(204);
  });

  it('expires a session past its absolute lifetime', async () => {
    const { token, account } = await registerRest(gw.url);
    await gw.db.query(`update sessions set expires_at = now() - interval '1 second' where user_id = $1`, [account.user_id]);
    expect((await http(gw.url, 'GET', '/auth/me', { token })).status).toBe(401);
  });

  it('expires an idle session', async () => {
    const { token, account } = await registerRest(gw.url);
    await gw.db.query(`update sessions set last_seen_at = now() - interval '8 days' where user_id = $1`, [account.user_id]);
    expect((await http(gw.url, 'GET', '/auth/me', { token })).status).toBe(401);
  });
});

describe('GET /auth/summary and /auth/transactions', () => {
  it('summarises balance, usage and top-ups from the ledger', async () => {
    const { account, token } = await registerRest(gw.url);
    const empty = await http(gw.url, 'GET', '/auth/summary', { token });
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ user_id: account.user_id, email: account.email, balance_usd: '0', active_keys: 0, usage_usd: '0', topup_usd: '0' });

    await seedLedger(gw.db, account.user_id, [
      { amountUsd: '10.00', kind: 'topup' },
      { amountUsd: '-0.0000123456', kind: 'usage', model: 'gen-5.6-luna', provider: 'family_a', promptTokens: 100, completionTokens: 20 },
      { amountUsd: '-1.5', kind: 'video', model: 'alpha-3.0' },
      { amountUsd: '2', kind: 'adjustment' },
    ]);
    const summary = await http(gw.url, 'GET', '/auth/summary', { token });
    expect(summary.body).toEqual({
      user_id: account.user_id,
      email: account.email,
      balance_usd: '10.4999876544',
      active_keys: 0,
      usage_usd: '1.5000123456',
      topup_usd: '10',
    });
    const ledgerSum = await gw.db.query('select sum(amount_usd)::text as s from transactions where user_id = $1', [account.user_id]);
    expect(summary.body.balance_usd).toBe(ledgerSum[0]!.s.replace(/0+$/, ''));
  });

  it('lists own transactions newest first with SPEC.md fields, limited (default 25)', async () => {
    const { account, token } = await registerRest(gw.url);
    const other = await registerRest(gw.url);
    const start = Date.now() - 60 * 60_000;
    await seedLedger(gw.db, account.user_id, Array.from({ length: 30 }, (_, i) => ({ amountUsd: `${i + 1}`, kind: 'topup', createdAt: new Date(start + i * 1000) })));
    await seedLedger(gw.db, other.account.user_id, [{ amountUsd: '99', kind: 'topup' }]);

    const page = await http(gw.url, 'GET', '/auth/transactions', { token });
    expect(page.status).toBe(200);
    expect(page.body).toHaveLength(25);
    expect(page.body.map((t: any) => t.amount_usd).slice(0, 3)).toEqual(['30', '29', '28']);
    const first = page.body[0];
    expect(Object.keys(first).sort()).toEqual(
      ['amount_usd', 'api_key_id', 'completion_tokens', 'created_at', 'id', 'kind', 'model', 'prompt_tokens', 'provider', 'user_id'].sort(),
    );
    expect(first).toMatchObject({ user_id: account.user_id, kind: 'topup', api_key_id: null, provider: null, model: null, prompt_tokens: null, completion_tokens: null });
    expect(new Date(first.created_at).toISOString()).toBe(first.created_at);
    expect(page.body.every((t: any) => t.user_id === account.user_id)).toBe(true);

    expect((await http(gw.url, 'GET', '/auth/transactions?limit=100', { token })).body).toHaveLength(30);
    expect((await http(gw.url, 'GET', '/auth/transactions?limit=1', { token })).body).toHaveLength(1);
  });

  it.each([
    ['0', 'greater_than_equal'],
    ['101', 'less_than_equal'],
    ['-5', 'greater_than_equal'],
    ['abc', 'int_parsing'],
    ['1.5', 'int_parsing'],
  ])('422 for limit=%s', async (limit, type) => {
    const { token } = await registerRest(gw.url);
    expectValidationError(await http(gw.url, 'GET', `/auth/transactions?limit=${limit}`, { token }), ['query', 'limit'], type);
  });
});

describe('sign-in throttle per client address', () => {
  // Behind a trusted proxy the client address comes from X-Forwarded-For, which lets one test act as several clients.
  const throttled = useTestGateway({ TRUST_PROXY: 'loopback', LOGIN_MAX_ATTEMPTS_PER_ADDRESS: '3', LOGIN_MAX_FAILURES_PER_ACCOUNT: '100' });

  it('limits attempts from one address across different logins, and not other addresses', async () => {
    const attempt = (address: string, login: string) =>
      http(throttled.url, 'POST', '/auth/login', { body: { login, password: 'whatever-it-is' }, headers: { 'x-forwarded-for': address } });
    for (const login of ['first', 'second', 'third']) expect((await attempt('203.0.113.7', login)).status).toBe(401);
    const limited = await attempt('203.0.113.7', 'fourth');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(800);
    expect((await attempt('203.0.113.8', 'fourth')).status).toBe(401);
  });
});

describe('development mail transport (no SMTP_URL)', () => {
  it('stores the verification message in email_outbox; its code verifies the account', async () => {
    const { token, input } = await registerRest(gw.url);
    const rows = await gw.db.query<{ subject: string; text_body: string }>('select subject, text_body from email_outbox where to_address = $1', [input.email]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.subject).toBe('Baikal: your e-mail verification code');
    const code = /: (\d{6})\n/.exec(rows[0]!.text_body)![1]!;
    const response = await http(gw.url, 'POST', '/auth/verify-email', { token, body: { code } });
    expect(response.status).toBe(200);
    expect(response.body.email_verified).toBe(true);
  });
});
