import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { jsonNestsDeeper, MAX_JSON_DEPTH, tooDeepLocation } from '../../src/shared/json-depth.js';
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { newFundedAccount } from '../helpers/accounts.js';
import { http } from '../helpers/clients.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Issue 22, item 7: JSON nested 10,000 deep was a 500 on tRPC (its adapter re-serialises the body) and a
 * 500/502 on /v1/chat/completions (our own JSON.stringify overflowed). One bound, MAX_JSON_DEPTH, where
 * JSON arrives on every surface: a 422 with `loc`, `msg`, `type`, nothing forwarded, nothing billed.
 */

let sim: Simulator;
let gw: TestGateway;
let dir: string;
let token: string;
let key: string;
let userId: string;

const DEEP = 10_000;
const deepArray = (n: number) => '['.repeat(n) + ']'.repeat(n);
const deepObject = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
/** A body with the deep value at a known place: `messages[0].content`. */
const deepChat = (value: string) => `{"model":"gen-5.6-luna","messages":[{"role":"user","content":${value}}]}`;

beforeAll(async () => {
  sim = await startSimulator({ apiKey: 'deep-upstream-secret' });
  dir = await mkdtemp(path.join(tmpdir(), 'baikal-deep-'));
  await writeFile(
    path.join(dir, 'baikal.json'),
    JSON.stringify({ upstreams: [{ id: 'sim-chat', kind: 'openai-compatible', baseUrl: `${sim.url}/v1`, credentialEnv: 'DEEP_UPSTREAM_KEY', routes: [{ group: 'cheap', models: ['gen-5.6-luna'] }] }] }),
  );
  gw = await startTestGateway({ BAIKAL_CONFIG: path.join(dir, 'baikal.json'), DEEP_UPSTREAM_KEY: 'deep-upstream-secret', DATA_DIR: dir });
  const account = await newFundedAccount(gw, '5');
  token = account.token;
  userId = account.userId;
  key = (await gw.services.keys.create(account.actor, { providerFamily: 'family_a' })).key;
});

afterAll(async () => {
  await gw?.close();
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function expectTooDeep(response: { status: number; body: any; text: string }, locStart: (string | number)[]) {
  expect(response.status, response.text.slice(0, 300)).toBe(422);
  const issue = response.body.detail?.[0] ?? response.body.error?.detail?.[0] ?? response.body;
  expect(issue.type, response.text.slice(0, 300)).toBe('json_too_deep');
  expect(issue.loc.slice(0, locStart.length)).toEqual(locStart);
  expect(issue.msg).toContain(String(MAX_JSON_DEPTH));
}

describe('the scanner', () => {
  it('measures nesting exactly, skipping strings (brackets and escaped quotes inside text do not count)', () => {
    const bytes = (text: string) => Buffer.from(text);
    expect(jsonNestsDeeper(bytes(deepArray(MAX_JSON_DEPTH)))).toBe(false);
    expect(jsonNestsDeeper(bytes(deepArray(MAX_JSON_DEPTH + 1)))).toBe(true);
    expect(jsonNestsDeeper(bytes(JSON.stringify({ text: '['.repeat(500), quoted: '\\"[[[[' + '{'.repeat(200) })))).toBe(false);
    expect(jsonNestsDeeper(bytes(JSON.stringify({ many: Array.from({ length: 5_000 }, () => [{ a: [1] }]) })))).toBe(false);
    // Non-ASCII text is scanned as bytes without confusion.
    expect(jsonNestsDeeper(bytes(JSON.stringify({ t: 'Байкал [{'.repeat(100) })))).toBe(false);
    expect(tooDeepLocation(JSON.parse(deepChat(deepObject(DEEP))))).toEqual(['messages', 0, 'content', ...Array.from({ length: MAX_JSON_DEPTH - 3 }, () => 'a')]);
  });
});

describe('every surface refuses JSON nested too deeply with a 422, never a 5xx', () => {
  it('/v1/chat/completions: 422 at the location, nothing forwarded, nothing billed', async () => {
    const before = sim.requests.length;
    for (const value of [deepArray(DEEP), deepObject(DEEP)]) {
      const response = await http(gw.url, 'POST', '/v1/chat/completions', { token: key, rawBody: deepChat(value) });
      expectTooDeep(response, ['body', 'messages', 0, 'content']);
    }
    expect(sim.requests.length).toBe(before);
    const events = await gw.db.query<{ n: number }>("select count(*)::int as n from usage_events where user_id = $1 and status = 'success'", [userId]);
    expect(events[0]!.n).toBe(0);
    // Depth at the bound is still served.
    const fine = await http(gw.url, 'POST', '/v1/chat/completions', { token: key, body: { model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi [sim:words=2]' }], metadata: { a: JSON.parse(deepObject(5)) } } });
    expect(fine.status, fine.text).not.toBeGreaterThanOrEqual(500);
  });

  it('/v1/responses and /v1/messages: 422', async () => {
    expectTooDeep(await http(gw.url, 'POST', '/v1/responses', { token: key, rawBody: `{"model":"gen-5.6-luna","input":${deepArray(DEEP)}}` }), ['body', 'input']);
    const messages = await http(gw.url, 'POST', '/v1/messages', { headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, rawBody: `{"model":"lm-opus-5","max_tokens":5,"messages":${deepArray(DEEP)}}` });
    expect(messages.status).toBe(422);
    expect(messages.text).toContain(String(MAX_JSON_DEPTH));
  });

  it('tRPC, GraphQL and the REST cabinet: 422 with the location', async () => {
    expectTooDeep(await http(gw.url, 'POST', '/trpc/keys.create', { token, rawBody: `{"label":"x","extra":${deepArray(DEEP)}}` }), ['body', 'extra']);
    expectTooDeep(await http(gw.url, 'POST', '/graphql', { token, rawBody: `{"query":"{ me { userId } }","variables":{"v":${deepObject(DEEP)}}}` }), ['body', 'variables', 'v']);
    expectTooDeep(await http(gw.url, 'POST', '/keys', { token, rawBody: `{"label":${deepArray(DEEP)}}` }), ['body', 'label']);
    expectTooDeep(await http(gw.url, 'POST', '/auth/login', { rawBody: `{"login":${deepObject(DEEP)},"password":"x"}` }), ['body', 'login']);
    expectTooDeep(await http(gw.url, 'POST', '/payments/invoices', { token, rawBody: deepArray(DEEP) }), ['body']);
    const keys = await gw.db.query<{ n: number }>('select count(*)::int as n from api_keys where user_id = $1', [userId]);
    expect(keys[0]!.n).toBe(1);
  });

  it('the signed webhooks: 422 before any handling', async () => {
    expectTooDeep(await http(gw.url, 'POST', '/payments/webhooks/checkout', { rawBody: `{"id":"evt","data":${deepArray(DEEP)}}` }), ['body', 'data']);
    expectTooDeep(await http(gw.url, 'POST', '/auth/messenger/webhook', { rawBody: `{"token":${deepObject(DEEP)}}` }), ['body', 'token']);
  });

  it('graphql-ws: a message nested too deeply closes the socket with 4400; the gateway keeps serving', async () => {
    const ws = new WebSocket(`${gw.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    await new Promise((resolve) => ws.once('open', resolve));
    const acked = new Promise((resolve) => ws.once('message', resolve));
    ws.send(JSON.stringify({ type: 'connection_init', payload: { sessionToken: token } }));
    expect(JSON.parse(String(await acked))).toMatchObject({ type: 'connection_ack' });
    ws.send(`{"id":"1","type":"subscribe","payload":{"query":"{ me { userId } }","variables":{"v":${deepObject(DEEP)}}}}`);
    expect(await closed).toBe(4400);
    expect((await http(gw.url, 'GET', '/health')).status).toBe(200);
  });
});
