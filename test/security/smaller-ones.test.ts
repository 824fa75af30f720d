import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MESSENGER_LINK_RETENTION_MS } from '../../src/accounts/identity.service.js';
import { http, registerRest } from '../helpers/clients.js';
import { useTestGateway } from '../helpers/gateway.js';

/**
 * Issue 22, item 8 (the smaller ones): the messenger sign-in start is throttled per address and its rows
 * expire and are purged; its callback completes only in the browser that started it (login CSRF); 150
 * parallel key creations stop at exactly 100 active keys; the per-account sign-in throttle is one budget
 * for the account, whether it is named by username or e-mail.
 */
const SECRET = `msec-${randomUUID()}`;
const dir = mkdtempSync(path.join(tmpdir(), 'baikal-smaller-'));
const configFile = path.join(dir, 'baikal.json');
writeFileSync(configFile, JSON.stringify({ messenger: { label: 'Telegram', botUrl: 'https://t.me/baikal_test_bot', webhookSecretEnv: 'SMALLER_MESSENGER_SECRET', tokenTtlMinutes: 15 } }));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const gw = useTestGateway({ BAIKAL_CONFIG: configFile, SMALLER_MESSENGER_SECRET: SECRET, LOGIN_MAX_FAILURES_PER_ACCOUNT: '5', LOGIN_MAX_ATTEMPTS_PER_ADDRESS: '20', TRUST_PROXY: 'loopback' });

/** Requests from distinct client addresses (the gateway trusts the loopback proxy's x-forwarded-for). */
let nextAddress = 1;
const fromNewAddress = () => ({ 'x-forwarded-for': `198.51.100.${nextAddress++}` });

function botConfirms(token: string) {
  const raw = JSON.stringify({ user: { id: String(Math.floor(Math.random() * 1e12)), name: `@tg_${randomUUID().slice(0, 6)}` }, text: `/start login_${token}` });
  const t = Math.floor(Date.now() / 1000);
  const signature = `t=${t},v1=${createHmac('sha256', SECRET).update(`${t}.${raw}`).digest('hex')}`;
  return http(gw.url, 'POST', '/auth/messenger/webhook', { rawBody: raw, headers: { 'x-messenger-signature': signature } });
}

describe('messenger sign-in', () => {
  it('GET /auth/messenger/start is throttled per address (429 with Retry-After); other addresses are not affected', async () => {
    const address = fromNewAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 23; i++) {
      const started = await http(gw.url, 'GET', '/auth/messenger/start', { headers: address });
      statuses.push(started.status);
      if (started.status === 429) {
        expect(Number(started.headers.get('retry-after'))).toBeGreaterThan(0);
        break;
      }
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.at(-1)).toBe(429);
    expect((await http(gw.url, 'GET', '/auth/messenger/start', { headers: fromNewAddress() })).status).toBe(200);
  });

  it('expired sign-in rows are purged once past their retention; live ones stay', async () => {
    const live = (await http(gw.url, 'GET', '/auth/messenger/start', { headers: fromNewAddress() })).body.token as string;
    const old = (await http(gw.url, 'GET', '/auth/messenger/start', { headers: fromNewAddress() })).body.token as string;
    const hashOf = "encode(sha256($1::bytea), 'hex')";
    await gw.db.query(`update messenger_links set expires_at = now() - make_interval(secs => $2) where token_hash = ${hashOf}`, [old, MESSENGER_LINK_RETENTION_MS / 1000 + 60]);
    expect(await gw.services.identity.purgeExpiredLinks()).toBeGreaterThanOrEqual(1);
    expect(await gw.db.query(`select 1 from messenger_links where token_hash = ${hashOf}`, [old])).toHaveLength(0);
    expect(await gw.db.query(`select 1 from messenger_links where token_hash = ${hashOf}`, [live])).toHaveLength(1);
  });

  it('the callback completes only in the browser that started it: a forwarded link signs nobody in, the starter still can', async () => {
    const started = await http(gw.url, 'GET', '/auth/messenger/start', { headers: fromNewAddress() });
    const token = started.body.token as string;
    const cookie = started.headers.get('set-cookie')!;
    expect(cookie).toMatch(/baikal_messenger_login=/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    expect((await botConfirms(token)).body.outcome).toBe('confirmed');

    // The attacker's confirmed token, opened in a victim's browser (no cookie, or the victim's own sign-in cookie).
    for (const headers of [{}, { cookie: `baikal_messenger_login=${'v'.repeat(43)}` }] as Record<string, string>[]) {
      const victim = await http(gw.url, 'GET', `/auth/messenger/callback?token=${token}`, { headers });
      expect(victim.status, victim.text).toBe(403);
      expect(victim.body.code).toBe('login_not_bound');
      expect(victim.headers.get('x-session-token')).toBeNull();
    }
    const starter = await http(gw.url, 'GET', `/auth/messenger/callback?token=${token}`, { headers: { cookie: `baikal_messenger_login=${token}` } });
    expect(starter.status, starter.text).toBe(200);
    expect(starter.headers.get('x-session-token')).toMatch(/^bks_/);
  });
});

describe('API keys', () => {
  it('150 parallel POST /keys make exactly 100 active keys; the rest are 409 too_many_keys', async () => {
    const { token, account } = await registerRest(gw.url);
    const results = await Promise.all(Array.from({ length: 150 }, (_, i) => http(gw.url, 'POST', '/keys', { token, body: { label: `k${i}` } })));
    const counts = results.reduce<Record<number, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});
    expect(counts).toEqual({ 201: 100, 409: 50 });
    expect(results.find((r) => r.status === 409)!.body.code).toBe('too_many_keys');
    const [{ n }] = (await gw.db.query<{ n: number }>('select count(*)::int as n from api_keys where user_id = $1 and revoked_at is null', [account.user_id])) as [{ n: number }];
    expect(n).toBe(100);
  }, 60_000);
});

describe('sign-in throttle', () => {
  it('counts failures per account, whether the login names its username or its e-mail', async () => {
    const { input } = await registerRest(gw.url);
    const attempt = (login: string, password: string) => http(gw.url, 'POST', '/auth/login', { body: { login, password }, headers: fromNewAddress() });
    for (let i = 0; i < 3; i++) expect((await attempt(input.username, 'wrong password')).status).toBe(401);
    for (let i = 0; i < 2; i++) expect((await attempt(input.email.toUpperCase(), 'wrong password')).status).toBe(401);
    // Five failures in all: the account is throttled under either name, even with the right password.
    const byEmail = await attempt(input.email, input.password);
    expect(byEmail.status).toBe(429);
    expect(byEmail.body.code).toBe('login_throttled');
    expect((await attempt(input.username, input.password)).status).toBe(429);
  });
});
