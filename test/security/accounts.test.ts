import { performance } from 'node:perf_hooks';
import { createClient } from 'graphql-ws';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { http, newAccountInput, registerRest } from '../helpers/clients.js';
import { useTestGateway } from '../helpers/gateway.js';

/**
 * Accounts under attack: guessing and stuffing are throttled, nothing tells which accounts exist,
 * sessions cannot be planted, cookies cannot be read by scripts or ridden by other sites, and every
 * answer carries the browser-facing security headers.
 */
// Behind a proxy (loopback) so each test can speak from its own addresses.
const gw = useTestGateway({ TRUST_PROXY: 'loopback', LOGIN_MAX_FAILURES_PER_ACCOUNT: '5', LOGIN_MAX_ATTEMPTS_PER_ADDRESS: '20' });
const https = useTestGateway({ PUBLIC_HTTPS: 'true' });

let address = 0;
/** A fresh client address (TEST-NET-3), so the per-address limit of one test does not reach another. */
const nextAddress = () => `203.0.113.${(address += 1)}`;

const login = (body: Record<string, unknown>, from: string, headers: Record<string, string> = {}) =>
  http(gw.url, 'POST', '/auth/login', { body, headers: { 'x-forwarded-for': from, ...headers } });

describe('guessing and stuffing', () => {
  it('throttles guesses at one account even when each comes from another address; the right password waits too', async () => {
    const victim = await registerRest(gw.url);
    for (let i = 0; i < 5; i++) expect((await login({ login: victim.input.username, password: `guess-${i}-wrong` }, nextAddress())).status).toBe(401);
    const next = await login({ login: victim.input.username, password: victim.input.password }, nextAddress());
    expect(next.status).toBe(429);
    expect(next.body.code).toBe('login_throttled');
    expect(Number(next.headers.get('retry-after'))).toBeGreaterThan(0);
    // The limit is the account's: another account from the same kind of address signs in.
    const bystander = await registerRest(gw.url);
    expect((await login({ login: bystander.input.email.toUpperCase(), password: bystander.input.password }, nextAddress())).status).toBe(200);
  });

  it('throttles stuffing from one address across many accounts, real and unknown, and not other addresses', async () => {
    const from = nextAddress();
    const real = await registerRest(gw.url);
    for (let i = 0; i < 20; i++) expect((await login({ login: `stuffed-${i}@example.test`, password: 'leaked-password-1' }, from)).status).toBe(401);
    expect((await login({ login: real.input.username, password: real.input.password }, from)).status).toBe(429);
    expect((await login({ login: real.input.username, password: real.input.password }, nextAddress())).status).toBe(200);
  });
});

describe('registration floods', () => {
  const limited = useTestGateway({ TRUST_PROXY: 'loopback', REGISTER_MAX_PER_ADDRESS: '3' });
  const register = (body: Record<string, unknown>, from: string) => http(limited.url, 'POST', '/auth/register', { body, headers: { 'x-forwarded-for': from } });

  it('one address registers at most REGISTER_MAX_PER_ADDRESS accounts a window, on REST and GraphQL alike; others are not held up', async () => {
    const from = nextAddress();
    for (let i = 0; i < 3; i++) expect((await register(newAccountInput('flood'), from)).status).toBe(201);
    // Invalid or taken names are answered as such and cost nothing.
    expect((await register({ ...newAccountInput('flood'), email: 'not-an-email' }, from)).status).toBe(422);
    const refused = newAccountInput('flood');
    const throttled = await register(refused, from);
    expect(throttled.status).toBe(429);
    expect(throttled.body).toEqual({ detail: 'Too many accounts registered from this address; try again later', code: 'registration_throttled' });
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(3_000);
    const overGraphql = await fetch(`${limited.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
      body: JSON.stringify({ query: 'mutation R($input: RegisterInput!) { register(input: $input) { sessionToken } }', variables: { input: newAccountInput('flood') } }),
    });
    const answer = (await overGraphql.json()) as { data: unknown; errors: { extensions: { code: string } }[] };
    expect(answer.data).toBeNull();
    expect(answer.errors[0]!.extensions.code).toBe('RATE_LIMITED');
    // Nothing of the refused registrations was written; another address registers at once.
    expect(await limited.db.query('select 1 from users where email = $1', [refused.email])).toHaveLength(0);
    expect(await limited.db.query(`select count(*)::int as n from users where username like 'flood%'`)).toEqual([{ n: 3 }]);
    expect((await register(newAccountInput('flood'), nextAddress())).status).toBe(201);
  });
});

describe('no account enumeration', () => {
  it('a wrong password and an unknown account give the same status, body and headers, in about the same time', async () => {
    const known = await registerRest(gw.url);
    const attempts = 12;
    const timed = async (body: Record<string, unknown>) => {
      const started = performance.now();
      const response = await login(body, nextAddress());
      return { ms: performance.now() - started, response };
    };
    const wrong: number[] = [];
    const unknown: number[] = [];
    let wrongShape = '';
    let unknownShape = '';
    for (let i = 0; i < attempts; i++) {
      // Alternating, so load on the machine falls on both alike; fresh accounts keep under the per-account limit.
      const account = i % 4 === 0 ? known : await registerRest(gw.url);
      const a = await timed({ login: account.input.username, password: 'not-the-password-1' });
      const b = await timed({ login: `nobody-${i}-${Date.now()}`, password: 'not-the-password-1' });
      wrong.push(a.ms);
      unknown.push(b.ms);
      const shape = (r: typeof a.response) => JSON.stringify([r.status, r.body, r.headers.get('content-type'), r.headers.get('content-length')]);
      wrongShape = shape(a.response);
      unknownShape = shape(b.response);
      expect(unknownShape).toBe(wrongShape);
    }
    expect(JSON.parse(wrongShape)[0]).toBe(401);
    const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
    // Without the decoy hash an unknown login answers in about a millisecond against tens for a real check.
    const ratio = median(unknown) / median(wrong);
    expect(ratio, `unknown ${median(unknown).toFixed(1)} ms, wrong password ${median(wrong).toFixed(1)} ms`).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThan(2);
  });
});

describe('sessions and cookies', () => {
  it('a planted session cookie is never adopted: signing in issues a new token and the planted one stays worthless', async () => {
    const account = await registerRest(gw.url);
    const planted = `sess_${'a'.repeat(43)}`;
    const signedIn = await login({ login: account.input.username, password: account.input.password }, nextAddress(), { cookie: `baikal_session=${planted}` });
    expect(signedIn.status).toBe(200);
    const issued = signedIn.headers.get('x-session-token')!;
    expect(issued).not.toBe(planted);
    expect(signedIn.headers.get('set-cookie')).toContain(`baikal_session=${issued}`);
    expect((await http(gw.url, 'GET', '/auth/me', { headers: { cookie: `baikal_session=${planted}` } })).status).toBe(401);
    expect((await http(gw.url, 'GET', '/auth/me', { token: issued })).status).toBe(200);
    // Each sign-in is a new session: the earlier token of the same account is another, still its own.
    expect(issued).not.toBe(account.token);
  });

  it('cookies are HttpOnly and SameSite=Lax; over HTTPS they are __Host-, Secure and Path=/, with HSTS', async () => {
    const plain = await registerRest(gw.url);
    const cookie = plain.response.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^baikal_session=/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(plain.response.headers.get('strict-transport-security')).toBeNull();

    const secure = await registerRest(https.url);
    const secureCookie = secure.response.headers.get('set-cookie')!;
    expect(secureCookie).toMatch(/^__Host-baikal_session=/);
    for (const attribute of [/;\s*Secure/i, /;\s*HttpOnly/i, /;\s*Path=\/(;|$)/i, /SameSite=Lax/i]) expect(secureCookie).toMatch(attribute);
    expect(secureCookie).not.toMatch(/Domain=/i);
    expect(secure.response.headers.get('strict-transport-security')).toMatch(/max-age=\d{7,}/);
    // The plain name is not read over HTTPS (a sibling subdomain could have set it).
    expect((await http(https.url, 'GET', '/auth/me', { headers: { cookie: `baikal_session=${secure.token}` } })).status).toBe(401);
    expect((await http(https.url, 'GET', '/auth/me', { headers: { cookie: `__Host-baikal_session=${secure.token}` } })).status).toBe(200);
  });
});

describe('cross-site state changes', () => {
  it('cookie-authenticated writes from another site are refused on REST, GraphQL and tRPC; nothing changes', async () => {
    const account = await registerRest(gw.url);
    const cookie = `baikal_session=${account.token}`;
    const foreign: Record<string, string>[] = [{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }];
    for (const headers of foreign) {
      const rest = await http(gw.url, 'POST', '/keys', { body: { label: 'csrf' }, headers: { cookie, ...headers } });
      expect(rest.status, JSON.stringify(headers)).toBe(403);
      const graphql = await http(gw.url, 'POST', '/graphql', { body: { query: 'mutation { createKey(input: { label: "csrf" }) { id } }' }, headers: { cookie, ...headers } });
      expect(graphql.body.errors?.[0]?.extensions?.code ?? graphql.status, JSON.stringify(headers)).toBe('FORBIDDEN');
      const trpc = await http(gw.url, 'POST', '/trpc/keys.create', { body: { label: 'csrf' }, headers: { cookie, ...headers } });
      expect(trpc.status, JSON.stringify(headers)).toBeGreaterThanOrEqual(400);
      expect(trpc.status).toBeLessThan(500);
    }
    const keys = await http(gw.url, 'GET', '/keys', { token: account.token });
    expect(keys.body).toEqual([]);
    // The same write from our own origin, or with the session token instead of the cookie, works.
    expect((await http(gw.url, 'POST', '/keys', { body: { label: 'own' }, headers: { cookie, 'sec-fetch-site': 'same-origin' } })).status).toBe(201);
    expect((await http(gw.url, 'POST', '/keys', { body: { label: 'token' }, token: account.token, headers: { origin: 'https://evil.example' } })).status).toBe(201);
  });

  it('a websocket opened from another site cannot ride the cookie', async () => {
    const account = await registerRest(gw.url);
    const client = createClient({
      url: `${gw.url.replace('http', 'ws')}/graphql`,
      webSocketImpl: class extends WebSocket {
        constructor(url: string, protocols?: string | string[]) {
          super(url, protocols, { headers: { cookie: `baikal_session=${account.token}`, origin: 'https://evil.example' } });
        }
      },
      retryAttempts: 0,
      lazy: true,
    });
    try {
      const outcome = await new Promise<string>((resolve) => {
        client.subscribe({ query: '{ me { userId } }' }, { next: () => resolve('answered'), error: () => resolve('refused'), complete: () => resolve('completed') });
      });
      expect(outcome).toBe('refused');
    } finally {
      await client.dispose();
    }
  });
});

describe('security headers', () => {
  it('every cabinet answer (2xx, 401, 404, 422, GraphQL) carries them; /v1 answers are nosniff', async () => {
    const account = await registerRest(gw.url);
    const responses = [
      account.response,
      await http(gw.url, 'GET', '/auth/me'),
      await http(gw.url, 'GET', '/nowhere'),
      await http(gw.url, 'POST', '/auth/register', { body: { username: '' } }),
      await http(gw.url, 'POST', '/graphql', { body: { query: '{ serviceStatus { __typename } }' } }),
      await http(gw.url, 'GET', '/keys', { token: account.token }),
    ];
    expect(responses.map((r) => r.status)).toEqual([201, 401, 404, 422, 200, 200]);
    for (const response of responses) {
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('cache-control')).toContain('no-store');
      expect(response.headers.get('x-powered-by')).toBeNull();
    }
    const inference = await http(gw.url, 'POST', '/v1/chat/completions', { body: { model: 'x', messages: [] } });
    expect(inference.status).toBe(401);
    expect(inference.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
