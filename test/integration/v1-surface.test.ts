import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import defaultCatalog from '../../src/catalog/default-catalog.json' with { type: 'json' };
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { newAdmin, newFundedAccount } from '../helpers/accounts.js';
import { http } from '../helpers/clients.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Issue 21, the /v1 surface: GET /v1/models with groups and prices in both list shapes, Anthropic's
 * error shape on every Anthropic path (404s included), and `request-id` beside `x-request-id` on every
 * response, streams included.
 */

let sim: Simulator;
let gw: TestGateway;
let dir: string;
let keyA: string;
let keyB: string;

const ALL_IDS = defaultCatalog.models.map((m) => m.id);

beforeAll(async () => {
  sim = await startSimulator({ apiKey: 'surface-upstream-secret' });
  dir = await mkdtemp(path.join(tmpdir(), 'baikal-surface-'));
  const route = (models: string[]) => [{ group: 'cheap', models }];
  await writeFile(
    path.join(dir, 'baikal.json'),
    JSON.stringify({
      upstreams: [
        { id: 'sim-chat', kind: 'openai-compatible', baseUrl: `${sim.url}/v1`, credentialEnv: 'SURFACE_UPSTREAM_KEY', routes: route(['gen-5.6-luna']) },
        { id: 'sim-messages', kind: 'anthropic', baseUrl: `${sim.url}/v1`, credentialEnv: 'SURFACE_UPSTREAM_KEY', routes: route(['lm-opus-5']) },
      ],
    }),
  );
  gw = await startTestGateway({ BAIKAL_CONFIG: path.join(dir, 'baikal.json'), SURFACE_UPSTREAM_KEY: 'surface-upstream-secret', DATA_DIR: dir });
  const { actor } = await newFundedAccount(gw, '5');
  keyA = (await gw.services.keys.create(actor, { providerFamily: 'family_a' })).key;
  keyB = (await gw.services.keys.create(actor, { providerFamily: 'family_b' })).key;
});

afterAll(async () => {
  await gw?.close();
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const anthropicHeaders = (key: string) => ({ 'x-api-key': key, 'anthropic-version': '2023-06-01' });

function anthropicClient(key: string): Anthropic {
  return new Anthropic({ apiKey: null, baseURL: gw.url, defaultHeaders: anthropicHeaders(key), maxRetries: 0 });
}

describe('GET /v1/models: groups and prices (SPEC.md 4.6)', () => {
  it('every public model carries its family, endpoints, public groups and public prices per pricing kind', async () => {
    const list = (await http(gw.url, 'GET', '/v1/models')).body;
    expect(list.data.map((m: any) => m.id)).toEqual(ALL_IDS);
    for (const model of list.data) {
      expect(model).toMatchObject({ object: 'model', owned_by: 'baikal', groups: ['cheap'], pricing_plan: 'siberia' });
      expect(Object.keys(model.pricing)).toEqual(['cheap']);
    }
    const byId = new Map(list.data.map((m: any) => [m.id, m]));
    expect(byId.get('delta-4.6')).toMatchObject({ family: 'family_c', kind: 'text', pricing: { cheap: { input_usd_per_1m: '0.2', output_usd_per_1m: '0.6', cache_read_usd_per_1m: null, cache_write_usd_per_1m: null } } });
    expect(byId.get('lm-sonnet-5')).toMatchObject({ endpoints: ['/v1/messages'], pricing: { cheap: { cache_write_usd_per_1m: '0.1875' } } });
    expect((byId.get('img-2-4k') as any).pricing).toEqual({ cheap: { usd_per_generation: '0.04' } });
    expect((byId.get('alpha-3.0') as any).pricing).toEqual({ cheap: { usd_per_second: '0.14' } });
    expect((byId.get('epsilon2.5-01-720') as any).pricing).toEqual({ cheap: { usd_per_generation: '0.48' } });
  });

  it("a key's private group widens the list, priced at the key's (non-public) plan; others never see that group", async () => {
    const admin = await newAdmin(gw);
    await gw.services.catalog.upsertModel(admin.actor, {
      id: 'delta-vip', label: 'Delta VIP', family: 'family_c', kind: 'text', endpoints: ['/v1/chat/completions'],
      groups: { cheap: { tokens: { input: '1', output: '2' } } },
    });
    // delta-vip is offered only in a private group; delta-4.6 in the public group and the private one.
    const data = gw.services.catalog.snapshot.data;
    await gw.db.query(`update catalog set data = $1::jsonb, version = version + 1`, [
      JSON.stringify({
        ...data,
        groups: [...data.groups, { id: 'vip', label: 'VIP', public: false }],
        plans: [...data.plans, { id: 'partner', label: 'Partner', public: false, multiplier: '0.5', overrides: {} }],
        models: data.models.map((m) => (m.id === 'delta-vip' ? { ...m, groups: { vip: m.groups.cheap } } : m.id === 'delta-4.6' ? { ...m, groups: { ...m.groups, vip: { tokens: { input: '0.1', output: '0.3', cacheRead: null, cacheWrite: null } } } } : m)),
      }),
    ]);
    await gw.services.catalog.load();
    const { actor } = await newFundedAccount(gw);
    const vipKey = (await gw.services.keys.create(actor, { providerFamily: 'family_c' })).key;
    await gw.db.query(`update api_keys set route_group = 'vip', pricing_plan = 'partner' where key_hint = $1`, [vipKey.slice(-4)]);

    const anonymous = (await http(gw.url, 'GET', '/v1/models')).body.data;
    expect(anonymous.map((m: any) => m.id)).not.toContain('delta-vip');
    expect(anonymous.find((m: any) => m.id === 'delta-4.6')).toMatchObject({ groups: ['cheap'], pricing: { cheap: { input_usd_per_1m: '0.2' } } });
    expect(JSON.stringify(anonymous)).not.toContain('vip');

    const withKey = (await http(gw.url, 'GET', '/v1/models', { token: vipKey })).body.data;
    const vip = withKey.find((m: any) => m.id === 'delta-vip');
    // The plan's multiplier applies to every shown price, and a non-public plan is named `custom`.
    expect(vip).toMatchObject({ groups: ['vip'], pricing_plan: 'custom', pricing: { vip: { input_usd_per_1m: '0.5', output_usd_per_1m: '1' } } });
    expect(withKey.find((m: any) => m.id === 'delta-4.6')).toMatchObject({
      groups: ['cheap', 'vip'],
      pricing: { cheap: { input_usd_per_1m: '0.1', output_usd_per_1m: '0.3' }, vip: { input_usd_per_1m: '0.05', output_usd_per_1m: '0.15' } },
    });
    // Another family's key does not reach the vip group: the group stays hidden from it.
    expect(JSON.stringify((await http(gw.url, 'GET', '/v1/models', { token: keyA })).body)).not.toContain('vip');
    expect((await http(gw.url, 'GET', '/v1/models/delta-vip', { token: keyA })).status).toBe(404);
    expect((await http(gw.url, 'GET', '/v1/models/delta-vip', { token: vipKey })).body).toMatchObject({ id: 'delta-vip', groups: ['vip'] });
    const anthropicShape = await http(gw.url, 'GET', '/v1/models/delta-vip', { headers: anthropicHeaders(vipKey) });
    expect(anthropicShape.body).toMatchObject({ type: 'model', id: 'delta-vip', display_name: 'Delta VIP', groups: ['vip'], pricing: { vip: { input_usd_per_1m: '0.5' } } });

    // The bridge list has the same fields and only the bridge model.
    const bridge = (await http(gw.url, 'GET', '/v1/bridge/models')).body;
    expect(bridge.data).toEqual([expect.objectContaining({ id: 'bridge-opus-5', object: 'model', groups: ['cheap'], pricing: { cheap: expect.objectContaining({ input_usd_per_1m: '0.35' }) } })]);
    expect((await http(gw.url, 'GET', '/v1/bridge/models/bridge-opus-5')).body).toMatchObject({ id: 'bridge-opus-5', family: 'family_b' });
    expect((await http(gw.url, 'GET', '/v1/bridge/models/gen-5.6-luna')).status).toBe(404);
  });

  it('the Anthropic SDK lists every model across pages and retrieves one in its own shape', async () => {
    const client = anthropicClient(keyB);
    const ids: string[] = [];
    for await (const model of client.models.list({ limit: 7 })) ids.push(model.id);
    const openAiIds = (await http(gw.url, 'GET', '/v1/models', { token: keyB })).body.data.map((m: any) => m.id);
    expect(ids).toEqual(openAiIds);
    const opus = await client.models.retrieve('lm-opus-5');
    expect(opus).toMatchObject({ type: 'model', id: 'lm-opus-5', display_name: expect.any(String), created_at: '2026-01-01T00:00:00.000Z', max_input_tokens: expect.any(Number) });
    expect((opus as any).pricing).toEqual({ cheap: { input_usd_per_1m: '0.35', output_usd_per_1m: '0.35', cache_read_usd_per_1m: '0.035', cache_write_usd_per_1m: '0.4' } });
    expect(opus._request_id).toMatch(/^req_/);

    const page = (query: string) => http(gw.url, 'GET', `/v1/models?${query}`, { headers: anthropicHeaders(keyB) });
    const first = (await page('limit=3')).body;
    expect(first).toMatchObject({ has_more: true, first_id: openAiIds[0], last_id: openAiIds[2] });
    expect((await page(`limit=2&after_id=${openAiIds[2]}`)).body.data.map((m: any) => m.id)).toEqual(openAiIds.slice(3, 5));
    expect((await page(`limit=2&before_id=${openAiIds[4]}`)).body).toMatchObject({ has_more: true, first_id: openAiIds[2], last_id: openAiIds[3] });
    const last = (await page(`after_id=${openAiIds.at(-2)}`)).body;
    expect(last).toMatchObject({ has_more: false, first_id: openAiIds.at(-1), last_id: openAiIds.at(-1) });
    const badLimit = await page('limit=0');
    expect(badLimit.status).toBe(422);
    expect(badLimit.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' }, detail: [{ loc: ['query', 'limit'] }] });
    const badCursor = await page('after_id=nope');
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.error.type).toBe('invalid_request_error');
  });
});

describe("Anthropic's error shape on every Anthropic path, 404s included", () => {
  it.each([
    ['GET', '/v1/messages'],
    ['POST', '/v1/messages/batches'],
    ['GET', '/v1/messages/msg_123'],
    ['DELETE', '/v1/messages/anything/deeper'],
  ])('%s %s is a 404 in the Anthropic shape', async (method, target) => {
    const response = await http(gw.url, method, target, { headers: anthropicHeaders(keyB), body: method === 'POST' ? {} : undefined });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ type: 'error', error: { type: 'not_found_error', message: 'Unknown endpoint', code: 'not_found' } });
  });

  it('an unknown model asked with the Anthropic headers is an Anthropic NotFoundError; without them, the OpenAI shape', async () => {
    const missing = await anthropicClient(keyB).models.retrieve('no-such-model').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
    expect((missing as InstanceType<typeof Anthropic.APIError>).error).toEqual({ type: 'error', error: { type: 'not_found_error', message: 'The model "no-such-model" does not exist', code: 'model_not_found' } });
    expect((missing as InstanceType<typeof Anthropic.APIError>).requestID).toMatch(/^req_/);
    const openAi = await http(gw.url, 'GET', '/v1/models/no-such-model');
    expect(openAi.body).toEqual({ error: { message: 'The model "no-such-model" does not exist', type: 'invalid_request_error', code: 'model_not_found', param: null } });
    // A bad key on the model list, asked in the Anthropic shape, is an Anthropic 401.
    const badKey = await http(gw.url, 'GET', '/v1/models', { headers: anthropicHeaders('baikal-sk-' + 'B'.repeat(43)) });
    expect(badKey.status).toBe(401);
    expect(badKey.body).toMatchObject({ type: 'error', error: { type: 'authentication_error', code: 'invalid_api_key' } });
  });

  it('OpenAI paths keep the OpenAI shape for unknown endpoints', async () => {
    const response = await http(gw.url, 'GET', '/v1/nothing-here', { headers: anthropicHeaders(keyB) });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: { message: 'Unknown endpoint', type: 'invalid_request_error', code: 'not_found', param: null } });
  });
});

describe('request-id beside x-request-id on every response', () => {
  const same = (headers: Headers) => {
    const id = headers.get('x-request-id');
    expect(id).toBeTruthy();
    expect(headers.get('request-id')).toBe(id);
  };

  it.each([
    ['GET', '/health'],
    ['GET', '/live'],
    ['GET', '/nowhere'],
    ['GET', '/auth/me'],
    ['GET', '/catalog/models'],
    ['POST', '/graphql'],
    ['GET', '/v1/models'],
    ['GET', '/v1/me'],
    ['POST', '/v1/chat/completions'],
    ['POST', '/v1/messages'],
    ['POST', '/v1/embeddings'],
  ])('%s %s', async (method, target) => {
    const response = await http(gw.url, method, target, { body: method === 'POST' ? { query: '{ __typename }' } : undefined });
    same(response.headers);
  });

  it('a caller-given id is echoed in both headers', async () => {
    const response = await http(gw.url, 'GET', '/v1/models', { headers: { 'x-request-id': 'caller-chosen-id-123' } });
    expect(response.headers.get('x-request-id')).toBe('caller-chosen-id-123');
    expect(response.headers.get('request-id')).toBe('caller-chosen-id-123');
  });

  it('streams of both formats carry it, and the SDKs read it', async () => {
    const chat = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keyA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    expect(chat.status).toBe(200);
    expect(chat.headers.get('content-type')).toContain('text/event-stream');
    same(chat.headers);
    expect(await chat.text()).toContain('[DONE]');

    const stream = anthropicClient(keyB).messages.stream({ model: 'lm-opus-5', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] });
    const final = await stream.finalMessage();
    expect(final.role).toBe('assistant');
    const { response } = await stream.withResponse();
    same(response.headers);
    expect(stream.request_id).toBe(response.headers.get('x-request-id'));

    const openai = new OpenAI({ apiKey: keyA, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const { response: created } = await openai.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    same(created.headers);
  });
});
