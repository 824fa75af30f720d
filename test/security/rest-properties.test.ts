import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { newFundedAccount } from '../helpers/accounts.js';
import { http, type JsonResponse } from '../helpers/clients.js';
import { operatorConfigFile, removeOperatorConfigFile } from '../helpers/config.js';
import { useTestGateway } from '../helpers/gateway.js';

/**
 * Property: for every REST body and query of SPEC.md, random and boundary inputs answer 2xx or a 4xx
 * in the spec's shapes (422 `detail: [{loc, msg, type}]`; other cabinet errors `{detail, code}`; /v1
 * errors in the OpenAI or Anthropic shape), never a 5xx, and a refused request writes nothing.
 */
const configFile = operatorConfigFile({
  payments: {
    enabled: true,
    rubPerUsd: '90',
    methods: [
      { id: 'usd_manual', label: 'Wire', currency: 'USD', minUsd: '5', maxUsd: '1000', enabled: true, provider: 'manual' },
      { id: 'rub_card', label: 'Card', currency: 'RUB', minUsd: '1', maxUsd: '5000', enabled: true, provider: 'checkout' },
    ],
    checkout: { baseUrl: 'https://pay.example.test/checkout', webhookSecretEnv: 'PROPERTY_CHECKOUT_SECRET', toleranceSeconds: 300 },
  },
});
const gw = useTestGateway({ BAIKAL_CONFIG: configFile, PROPERTY_CHECKOUT_SECRET: 'whsec-property', LOGIN_MAX_ATTEMPTS_PER_ADDRESS: '100000', LOGIN_MAX_FAILURES_PER_ACCOUNT: '100000' });
afterAll(() => removeOperatorConfigFile(configFile));

const RUNS = Number(process.env.PROPERTY_RUNS ?? 30);

/** Values that break naive parsers and validators: boundaries, wrong types, odd text. */
const nasty: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(0, -1, 1, 2 ** 31, 2 ** 53 + 1, -(2 ** 63), 1e308, -1e-308, 0.1, 1.5, Number.MAX_SAFE_INTEGER),
  fc.constantFrom('', ' ', '0', '-1', '1e400', 'NaN', 'Infinity', '0x10', '1.0000000000000000000001', '99999999999999999999.99', 'null', 'true', '[]', '{}'),
  fc.constantFrom("' OR '1'='1", "'; drop table users; --", '\u0000', 'a\u0000b', '%00', '../../etc/passwd', '<script>alert(1)</script>', '\ud800', '𝕭𝖆𝖎𝖐𝖆𝖑', 'x'.repeat(10_000)),
  fc.constantFrom('2026-02-30T00:00:00Z', '1970-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '2026-11-23', 'yesterday', '00000000-0000-4000-8000-000000000000', 'not-a-uuid'),
  fc.constantFrom('ru', 'en', 'zz', 'RU', 'usd_manual', 'rub_card', 'openai', 'anthropic', 'cheap', 'day', 'hour', 'success', 'gen-5.6-luna'),
  fc.boolean(),
  fc.constant(null),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 300 }),
  fc.array(fc.anything({ maxDepth: 2 }), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 10 }), fc.anything({ maxDepth: 1 }), { maxKeys: 4 }),
);

/** A body: mostly the route's own fields with nasty values (so validation goes deep), sometimes anything at all. */
function bodyFor(fields: string[]): fc.Arbitrary<{ raw?: string; json?: unknown }> {
  const known = fc.dictionary(fc.constantFrom(...fields, 'unexpected_field'), nasty, { maxKeys: fields.length + 1 }).map((json) => ({ json }));
  return fc.oneof(
    { weight: 6, arbitrary: known },
    { weight: 1, arbitrary: fc.anything({ maxDepth: 3 }).map((json) => ({ json })) },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }).map((raw) => ({ raw })) },
  );
}

/** Percent-encoding, with lone surrogates (which no URL can carry) replaced. */
const encode = (value: string) => encodeURIComponent(value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'));
/** Any generated value as query or path text. */
const asText = (value: unknown) => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));

/** A query string over the route's own parameters (plus repeats and unknown ones). */
function queryFor(params: string[]): fc.Arbitrary<string> {
  const pair = fc.tuple(fc.constantFrom(...params, 'unknown'), nasty.map(asText));
  return fc.array(pair, { maxLength: params.length + 2 }).map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${encode(v)}`).join('&')}` : ''));
}

const pathSegment = fc.oneof(nasty.map(asText), fc.uuid()).map((s) => encode(s.slice(0, 200)) || 'x');

function expectSpecShape(route: string, response: JsonResponse): void {
  const where = `${route} -> ${response.status} ${response.text.slice(0, 300)}`;
  expect(response.status, where).toBeLessThan(500);
  if (response.status < 400) return;
  if (response.status === 422) {
    expect(Array.isArray(response.body?.detail), where).toBe(true);
    for (const issue of response.body.detail) {
      expect(Object.keys(issue).sort(), where).toEqual(['loc', 'msg', 'type']);
      expect(Array.isArray(issue.loc) && typeof issue.msg === 'string' && typeof issue.type === 'string', where).toBe(true);
    }
  } else if (route.startsWith('POST /v1/messages')) {
    expect(response.body, where).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.any(String) } });
  } else if (route.includes(' /v1/')) {
    expect(response.body, where).toMatchObject({ error: { message: expect.any(String), type: expect.any(String) } });
  } else {
    expect(response.body, where).toMatchObject({ detail: expect.any(String), code: expect.any(String) });
  }
}

type Caller = 'session' | 'key' | 'none';
const BODY_ROUTES: { route: string; caller: Caller; fields: string[] }[] = [
  { route: 'POST /auth/register', caller: 'none', fields: ['username', 'email', 'password'] },
  { route: 'POST /auth/login', caller: 'none', fields: ['login', 'password'] },
  { route: 'POST /auth/verify-email', caller: 'session', fields: ['code', 'email'] },
  { route: 'POST /auth/resend-verification', caller: 'session', fields: ['email', 'language'] },
  { route: 'POST /auth/email/link/start', caller: 'session', fields: ['email', 'language'] },
  { route: 'POST /auth/email/link/confirm', caller: 'session', fields: ['email', 'code', 'password'] },
  { route: 'POST /auth/messenger/link/confirm', caller: 'session', fields: ['token'] },
  { route: 'POST /keys', caller: 'session', fields: ['label', 'provider_family', 'route_group', 'pricing_plan', 'monthly_spend_cap'] },
  { route: 'POST /payments/agreements/accept', caller: 'session', fields: ['language', 'surface', 'terms_version', 'privacy_version'] },
  { route: 'POST /payments/invoices', caller: 'session', fields: ['amount_usd', 'method', 'currency'] },
  { route: 'POST /v1/chat/completions', caller: 'key', fields: ['model', 'messages', 'stream', 'max_tokens', 'max_completion_tokens', 'temperature', 'tools', 'stream_options', 'n', 'user'] },
  { route: 'POST /v1/responses', caller: 'key', fields: ['model', 'input', 'instructions', 'stream', 'max_output_tokens', 'tools', 'temperature'] },
  { route: 'POST /v1/messages', caller: 'key', fields: ['model', 'messages', 'max_tokens', 'system', 'stream', 'tools', 'temperature'] },
  { route: 'POST /v1/images/generations', caller: 'key', fields: ['model', 'prompt', 'n', 'size', 'quality', 'response_format'] },
  { route: 'POST /v1/videos', caller: 'key', fields: ['model', 'prompt', 'seconds', 'size', 'resolution', 'aspect_ratio', 'references', 'settings'] },
];
const QUERY_ROUTES: { route: string; caller: Caller; params: string[] }[] = [
  { route: 'GET /usage', caller: 'session', params: ['from', 'to', 'limit', 'model', 'group', 'provider_family', 'status'] },
  { route: 'GET /usage/summary', caller: 'session', params: ['from', 'to'] },
  { route: 'GET /usage/timeseries', caller: 'session', params: ['from', 'to', 'bucket', 'model', 'group', 'provider_family'] },
  { route: 'GET /auth/transactions', caller: 'session', params: ['limit', 'kind'] },
  { route: 'GET /auth/messenger/link/status', caller: 'session', params: ['token'] },
  { route: 'GET /payments/config', caller: 'session', params: ['language'] },
  { route: 'GET /payments/invoices', caller: 'session', params: ['limit'] },
  { route: 'GET /leaderboard/daily', caller: 'none', params: ['limit', 'date'] },
  { route: 'GET /announcements', caller: 'session', params: ['language', 'limit'] },
  { route: 'GET /catalog/models', caller: 'none', params: ['language'] },
  { route: 'GET /v1/models', caller: 'key', params: ['limit'] },
];
const PATH_ROUTES: { route: string; caller: Caller; method: string; template: string }[] = [
  { route: 'GET /usage/:request_id', caller: 'session', method: 'GET', template: '/usage/' },
  { route: 'GET /payments/invoices/:invoice_id', caller: 'session', method: 'GET', template: '/payments/invoices/' },
  { route: 'DELETE /keys/:key_id', caller: 'session', method: 'DELETE', template: '/keys/' },
  { route: 'POST /announcements/:id/read', caller: 'session', method: 'POST', template: '/announcements/' },
  { route: 'GET /v1/models/:model_id', caller: 'key', method: 'GET', template: '/v1/models/' },
  { route: 'GET /v1/videos/:task_id', caller: 'key', method: 'GET', template: '/v1/videos/' },
  { route: 'GET /v1/videos/:task_id/content', caller: 'key', method: 'GET', template: '/v1/videos/' },
];

describe('random and boundary input on every REST route', () => {
  it(`${BODY_ROUTES.length + QUERY_ROUTES.length + PATH_ROUTES.length} routes x ${RUNS} runs: never a 5xx, errors in the spec's shapes, refused requests write nothing`, async () => {
    // The caller has no balance, so nothing valid on /v1 is forwarded or billed (402 before any upstream).
    const account = await newFundedAccount(gw);
    await gw.db.query('update users set email_verified = true where id = $1', [account.userId]);
    const key = await http(gw.url, 'POST', '/keys', { token: account.token, body: { label: 'property' } });
    expect(key.status).toBe(201);
    const credential = (caller: Caller) => (caller === 'session' ? account.token : caller === 'key' ? key.body.key : undefined);
    const count = async (table: string) => (await gw.db.query<{ n: number }>(`select count(*)::int as n from ${table}`))[0]!.n;
    const before = { users: await count('users'), api_keys: await count('api_keys'), invoices: await count('invoices'), transactions: await count('transactions') };
    const created = { users: 0, api_keys: 0, invoices: 0 };
    const revokedKeys: string[] = [];
    let requests = 0;

    for (const { route, caller, fields } of BODY_ROUTES) {
      const [method, url] = route.split(' ') as [string, string];
      await fc.assert(
        fc.asyncProperty(bodyFor(fields), async (input) => {
          requests += 1;
          const response = await http(gw.url, method, url, { token: credential(caller), ...(input.raw !== undefined ? { rawBody: input.raw } : { body: input.json }) });
          expectSpecShape(route, response);
          if (response.status === 201 && route === 'POST /auth/register') created.users += 1;
          if (response.status === 201 && route === 'POST /keys') created.api_keys += 1;
          if (response.status === 201 && route === 'POST /payments/invoices') created.invoices += 1;
        }),
        { numRuns: RUNS },
      );
    }
    for (const { route, caller, params } of QUERY_ROUTES) {
      const [method, url] = route.split(' ') as [string, string];
      await fc.assert(
        fc.asyncProperty(queryFor(params), async (query) => {
          requests += 1;
          expectSpecShape(route, await http(gw.url, method, url + query, { token: credential(caller) }));
        }),
        { numRuns: RUNS },
      );
    }
    for (const { route, caller, method, template } of PATH_ROUTES) {
      await fc.assert(
        fc.asyncProperty(pathSegment, async (segment) => {
          requests += 1;
          const suffix = route.endsWith('/content') ? '/content' : route.endsWith('/read') ? '/read' : '';
          const response = await http(gw.url, method, `${template}${segment}${suffix}`, { token: credential(caller) });
          expectSpecShape(route, response);
          if (route === 'DELETE /keys/:key_id' && response.status < 300) revokedKeys.push(segment);
        }),
        { numRuns: RUNS },
      );
    }

    expect(requests).toBeGreaterThanOrEqual(RUNS * (BODY_ROUTES.length + QUERY_ROUTES.length + PATH_ROUTES.length));
    // Nothing was written but what answered 201; no money moved (the account has no balance).
    expect(await count('users')).toBe(before.users + created.users);
    expect(await count('api_keys')).toBe(before.api_keys + created.api_keys);
    expect(await count('invoices')).toBe(before.invoices + created.invoices);
    expect(await count('transactions')).toBe(before.transactions);
    expect(revokedKeys).toEqual([]);
    // The key still works: no random input revoked or damaged it.
    expect((await http(gw.url, 'GET', '/v1/me', { token: key.body.key })).status).toBe(200);
  });
});

describe('NUL characters', () => {
  it('are refused where they arrive (422 with their location), on REST, GraphQL and tRPC, and nothing is written', async () => {
    const account = await newFundedAccount(gw);
    const rest = await http(gw.url, 'POST', '/keys', { token: account.token, body: { label: 'a\u0000b' } });
    expect(rest.status).toBe(422);
    expect(rest.body.detail).toEqual([{ loc: ['body', 'label'], msg: expect.any(String), type: 'string_nul' }]);
    const graphql = await http(gw.url, 'POST', '/graphql', { token: account.token, body: { query: 'mutation($label: String) { createKey(input: { label: $label }) { id } }', variables: { label: 'x\u0000' } } });
    expect(graphql.status).toBe(422);
    expect(graphql.body.detail[0].loc).toEqual(['body', 'variables', 'label']);
    const trpc = await http(gw.url, 'POST', '/trpc/keys.create', { token: account.token, body: { label: '\u0000' } });
    expect(trpc.status).toBe(422);
    const query = await http(gw.url, 'GET', '/usage?model=%00', { token: account.token });
    expect(query.status).toBe(422);
    const [row] = await gw.db.query<{ n: number }>('select count(*)::int as n from api_keys where user_id = $1', [account.userId]);
    expect(row!.n).toBe(0);
  });
});
