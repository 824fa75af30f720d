import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { estimateInputTokens } from '../../src/inference/count-tokens.js';
import { newFundedAccount } from '../helpers/accounts.js';
import { http } from '../helpers/clients.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Issue 21: POST /v1/messages/count_tokens. Forwarded to an `anthropic` route (upstream model name and
 * credential, the client's anthropic-beta), estimated otherwise, scoped like /v1/messages, never billed,
 * and Anthropic-shaped errors with nothing of the upstream in them.
 */

const UPSTREAM_SECRET = 'sk-count-upstream-secret';
const UPSTREAM_MODEL = 'canary-upstream-opus-name';
const CANARY = 'CANARY-count-tokens-upstream-internal.example';

interface Recorded {
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

/** A real Anthropic-style upstream on an ephemeral port; `answer` decides what the next count returns. */
let upstream: Server;
let upstreamUrl: string;
/** Token count calls only: the status monitor's probes reach this upstream too and are left out. */
const recorded: Recorded[] = [];
const OK = { status: 200, body: JSON.stringify({ input_tokens: 42 }) };
let answer: { status: number; body: string; headers?: Record<string, string> } = OK;

let gw: TestGateway;
let dir: string;
let keyB: string;
let keyA: string;
let userB: string;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url?.includes('count_tokens')) recorded.push({ path: req.url, headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') });
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  dir = await mkdtemp(path.join(tmpdir(), 'baikal-count-'));
  await writeFile(
    path.join(dir, 'baikal.json'),
    JSON.stringify({
      upstreams: [
        { id: 'count-anthropic', kind: 'anthropic', baseUrl: `${upstreamUrl}/v1`, credentialEnv: 'COUNT_UPSTREAM_KEY', routes: [{ group: 'cheap', models: ['lm-opus-5'], modelMap: { 'lm-opus-5': UPSTREAM_MODEL } }] },
        // lm-sonnet-5 is served by an OpenAI-compatible route: no token counting there, so the estimate.
        { id: 'count-openai', kind: 'openai-compatible', baseUrl: `${upstreamUrl}/v1`, credentialEnv: 'COUNT_UPSTREAM_KEY', routes: [{ group: 'cheap', models: ['lm-sonnet-5'] }] },
      ],
    }),
  );
  gw = await startTestGateway({ BAIKAL_CONFIG: path.join(dir, 'baikal.json'), COUNT_UPSTREAM_KEY: UPSTREAM_SECRET, DATA_DIR: dir });
  const b = await newFundedAccount(gw, '1');
  userB = b.userId;
  keyB = (await gw.services.keys.create(b.actor, { providerFamily: 'family_b' })).key;
  keyA = (await gw.services.keys.create(b.actor, { providerFamily: 'family_a' })).key;
});

afterAll(async () => {
  await gw?.close();
  await new Promise((resolve) => upstream?.close(resolve));
  if (dir) await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  recorded.length = 0;
  answer = OK;
});

function client(key: string): Anthropic {
  return new Anthropic({ apiKey: null, baseURL: gw.url, defaultHeaders: { 'x-api-key': key, 'anthropic-version': '2023-06-01' }, maxRetries: 0 });
}

const count = (body: unknown, headers: Record<string, string> = { 'x-api-key': keyB, 'anthropic-version': '2023-06-01' }) =>
  http(gw.url, 'POST', '/v1/messages/count_tokens', { body, headers });

/** Nothing of the upstream (credential, host, model name, error text) in what the client got. */
function expectNoLeak(text: string): void {
  for (const secret of [UPSTREAM_SECRET, UPSTREAM_MODEL, CANARY, new URL(upstreamUrl).host, 'count-anthropic']) expect(text).not.toContain(secret);
}

const FULL_REQUEST = {
  model: 'lm-opus-5',
  system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
  messages: [
    { role: 'user', content: 'What is the weather in Irkutsk?' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Irkutsk' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '-20C' }] },
  ],
  tools: [{ name: 'weather', description: 'Weather by city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }],
  tool_choice: { type: 'auto' },
  thinking: { type: 'enabled', budget_tokens: 1024 },
};

describe('POST /v1/messages/count_tokens', () => {
  it('is forwarded to the anthropic route with its model name, credential and the client anthropic-beta; not billed', async () => {
    const sdk = client(keyB);
    const counted = await sdk.beta.messages.countTokens({ ...(FULL_REQUEST as any), betas: ['context-management-2025-06-27'] });
    expect(counted.input_tokens).toBe(42);
    expect(recorded).toHaveLength(1);
    const [call] = recorded;
    expect(call!.path).toBe('/v1/messages/count_tokens');
    expect(call!.headers['x-api-key']).toBe(UPSTREAM_SECRET);
    expect(call!.headers['anthropic-version']).toBe('2023-06-01');
    // The SDK adds its own token-counting beta to ours; the header goes upstream exactly as the client sent it.
    expect(call!.headers['anthropic-beta']).toBe('context-management-2025-06-27,token-counting-2024-11-01');
    // Every field arrives as the client sent it, only the model renamed; max_tokens was never required.
    expect(call!.body).toEqual({ ...FULL_REQUEST, model: UPSTREAM_MODEL });

    const plain = await sdk.messages.countTokens({ model: 'lm-opus-5', messages: [{ role: 'user', content: 'hi' }] });
    expect(plain.input_tokens).toBe(42);
    expect(recorded[1]!.headers['anthropic-beta']).toBeUndefined();

    // Nothing is billed, held or recorded for a count.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [{ n }] = (await gw.db.query<{ n: number }>('select count(*)::int as n from usage_events where user_id = $1', [userB])) as [{ n: number }];
    expect(n).toBe(0);
    const holds = await gw.db.query('select 1 from holds where user_id = $1', [userB]);
    expect(holds).toHaveLength(0);
    const [{ balance }] = (await gw.db.query<{ balance: string }>('select (balance_paid_usd + balance_bonus_usd)::text as balance from users where id = $1', [userB])) as [{ balance: string }];
    expect(Number(balance)).toBe(1);
  });

  it('answers the documented estimate (ceil(UTF-8 bytes of JSON {system, messages, tools} / 4)) without an anthropic route', async () => {
    const body = { ...FULL_REQUEST, model: 'lm-sonnet-5', messages: [{ role: 'user', content: 'Привет, Байкал' }] };
    const response = await count(body);
    expect(response.status).toBe(200);
    const expected = Math.ceil(Buffer.byteLength(JSON.stringify({ system: body.system, messages: body.messages, tools: body.tools }), 'utf8') / 4);
    expect(response.body).toEqual({ input_tokens: expected });
    expect(estimateInputTokens(body)).toBe(expected);
    expect(recorded).toHaveLength(0);
    // A model with no route at all is estimated the same way.
    expect((await count({ model: 'lm-fable-5', messages: [{ role: 'user', content: 'x' }] })).body).toEqual({ input_tokens: Math.ceil(JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }).length / 4) });
  });

  it('authenticates exactly like /v1/messages, in the Anthropic error shape', async () => {
    const missing = await count({ model: 'lm-opus-5', messages: [] }, { 'anthropic-version': '2023-06-01' });
    expect(missing.status).toBe(401);
    expect(missing.body).toMatchObject({ type: 'error', error: { type: 'authentication_error', code: 'missing_api_key' } });
    const bearer = await http(gw.url, 'POST', '/v1/messages/count_tokens', { token: keyB, body: { model: 'lm-opus-5', messages: [] }, headers: { 'anthropic-version': '2023-06-01' } });
    expect(bearer.status).toBe(401);
    expect(bearer.body.error.code).toBe('wrong_auth_header');
    const noVersion = await count({ model: 'lm-opus-5', messages: [] }, { 'x-api-key': keyB });
    expect(noVersion.status).toBe(400);
    expect(noVersion.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_version_header' } });
    const invalid = await count({ model: 'lm-opus-5', messages: [] }, { 'x-api-key': 'baikal-sk-' + 'C'.repeat(43), 'anthropic-version': '2023-06-01' });
    expect(invalid.status).toBe(401);
    expect(recorded).toHaveLength(0);
  });

  it("checks the key's scope like a Messages request and validates model and messages only", async () => {
    const scope = await count({ model: 'lm-opus-5', messages: [{ role: 'user', content: 'x' }] }, { 'x-api-key': keyA, 'anthropic-version': '2023-06-01' });
    expect(scope.status).toBe(403);
    expect(scope.body).toMatchObject({ type: 'error', error: { type: 'permission_error', code: 'key_scope_denied' } });
    const unknown = await count({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ type: 'error', error: { type: 'not_found_error', code: 'model_not_found' } });
    const wrongEndpoint = await count({ model: 'bridge-opus-5', messages: [{ role: 'user', content: 'x' }] });
    expect(wrongEndpoint.status).toBe(400);
    expect(wrongEndpoint.body.error.code).toBe('endpoint_not_supported_for_model');

    const noMessages = await count({ model: 'lm-opus-5' });
    expect(noMessages.status).toBe(422);
    expect(noMessages.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' }, detail: [{ loc: ['body', 'messages'], type: 'missing' }] });
    const badMessage = await count({ model: 'lm-opus-5', messages: [{ content: 'no role' }] });
    expect(badMessage.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'messages', 0, 'role'] })]);
    const badJson = await http(gw.url, 'POST', '/v1/messages/count_tokens', { rawBody: '{"model":', headers: { 'x-api-key': keyB, 'anthropic-version': '2023-06-01' } });
    expect(badJson.status).toBe(422);
    expect(badJson.body.type).toBe('error');
    expect(recorded).toHaveLength(0);
  });

  it.each([
    [500, {}, 502, 'api_error', 'upstream_error'],
    [401, {}, 502, 'api_error', 'upstream_error'],
    [400, {}, 400, 'invalid_request_error', 'request_rejected'],
    [429, { 'retry-after': '7' }, 429, 'rate_limit_error', 'upstream_rate_limited'],
  ] as const)('an upstream %i (%o) becomes our own %i (%s, %s) with nothing of the upstream in it', async (status, headers, expectedStatus, type, code) => {
    answer = { status, headers, body: JSON.stringify({ type: 'error', error: { type: 'x', message: `${CANARY} ${UPSTREAM_SECRET} ${UPSTREAM_MODEL}` } }) };
    const response = await count({ model: 'lm-opus-5', messages: [{ role: 'user', content: 'x' }] });
    expect(response.status).toBe(expectedStatus);
    expect(response.body).toMatchObject({ type: 'error', error: { type, code } });
    if (status === 429) expect(response.headers.get('retry-after')).toBe('7');
    expectNoLeak(response.text);
  });

  it("forwarded counts take slots of the key's rate limit; estimates cost nothing and take none", async () => {
    const { actor } = await newFundedAccount(gw);
    const limited = (await gw.services.keys.create(actor, { providerFamily: 'family_b' })).key;
    await gw.db.query('update api_keys set rpm_limit = 2 where key_hint = $1', [limited.slice(-4)]);
    const headers = { 'x-api-key': limited, 'anthropic-version': '2023-06-01' };
    const forwarded = { model: 'lm-opus-5', messages: [{ role: 'user', content: 'x' }] };
    expect((await count(forwarded, headers)).status).toBe(200);
    expect((await count(forwarded, headers)).status).toBe(200);
    const third = await count(forwarded, headers);
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', code: 'rate_limited' } });
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(recorded).toHaveLength(2);
    expect((await count({ ...forwarded, model: 'lm-sonnet-5' }, headers)).status).toBe(200);
  });

  it('an answer that is not a count is a 502 of our own', async () => {
    answer = { status: 200, body: `{"tokens": "${CANARY}"}` };
    const response = await count({ model: 'lm-opus-5', messages: [{ role: 'user', content: 'x' }] });
    expect(response.status).toBe(502);
    expect(response.body).toMatchObject({ type: 'error', error: { type: 'api_error', code: 'upstream_error' } });
    expectNoLeak(response.text);
  });
});
