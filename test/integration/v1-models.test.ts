import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestGateway } from '../helpers/gateway.js';
import { http } from '../helpers/clients.js';
import { newAdmin, newFundedAccount } from '../helpers/accounts.js';

const gw = useTestGateway();
let key: string;

beforeAll(async () => {
  const { actor } = await newFundedAccount(gw);
  key = (await gw.services.keys.create(actor, { providerFamily: 'family_c' })).key;
});

function client(apiKey: string) {
  return new OpenAI({ apiKey, baseURL: `${gw.url}/v1`, maxRetries: 0 });
}

describe('GET /v1/models', () => {
  it('lists public models in the OpenAI list shape, without a key and through the official client', async () => {
    const anonymous = await http(gw.url, 'GET', '/v1/models');
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.object).toBe('list');
    expect(anonymous.body.data.find((m: any) => m.id === 'gen-5.6-luna')).toEqual({
      id: 'gen-5.6-luna',
      object: 'model',
      created: 1767225600,
      owned_by: 'baikal',
      family: 'family_a',
      kind: 'text',
      endpoints: ['/v1/chat/completions', '/v1/responses'],
      context_window: 400000,
      max_output_tokens: 128000,
      groups: ['cheap'],
      pricing_plan: 'siberia',
      pricing: { cheap: { input_usd_per_1m: '0.016', output_usd_per_1m: '0.04', cache_read_usd_per_1m: '0.0016', cache_write_usd_per_1m: '0.018' } },
    });
    const listed = [];
    for await (const model of client(key).models.list()) listed.push(model.id);
    expect(listed).toEqual(anonymous.body.data.map((m: any) => m.id));
    expect(await client(key).models.retrieve('delta-4.6')).toMatchObject({ id: 'delta-4.6', object: 'model' });
  });

  it('a key widens the list with the private group it may use', async () => {
    const admin = await newAdmin(gw);
    await gw.services.catalog.upsertModel(admin.actor, {
      id: 'delta-private', label: 'Delta Private', family: 'family_c', kind: 'text', endpoints: ['/v1/chat/completions'],
      groups: { cheap: { tokens: { input: '1', output: '1' } } },
    });
    // Move the new model into a non-public group that only a specially scoped key reaches.
    const catalog = gw.services.catalog.snapshot.data;
    await gw.db.query(`update catalog set data = $1::jsonb, version = version + 1`, [
      JSON.stringify({ ...catalog, groups: [...catalog.groups, { id: 'vip', label: 'VIP', public: false }], models: catalog.models.map((m) => (m.id === 'delta-private' ? { ...m, groups: { vip: m.groups.cheap } } : m)) }),
    ]);
    await gw.services.catalog.load();
    const { actor } = await newFundedAccount(gw);
    const vipKey = (await gw.services.keys.create(actor, { providerFamily: 'family_c' })).key;
    await gw.db.query(`update api_keys set route_group = 'vip' where key_hint = $1`, [vipKey.slice(-4)]);
    const fresh = await gw.services.keys.authenticate(vipKey);
    expect(fresh?.routeGroup).toBe('vip');

    const anonymous = (await http(gw.url, 'GET', '/v1/models')).body.data.map((m: any) => m.id);
    expect(anonymous).not.toContain('delta-private');
    const withKey = (await http(gw.url, 'GET', '/v1/models', { token: vipKey })).body.data.map((m: any) => m.id);
    expect(withKey).toContain('delta-private');
    expect((await http(gw.url, 'GET', '/v1/models/delta-private')).status).toBe(404);
    expect((await http(gw.url, 'GET', '/v1/models/delta-private', { token: vipKey })).status).toBe(200);
  });

  it('answers the Anthropic list shape to x-api-key + anthropic-version callers', async () => {
    // Anthropic pages 20 models by default; a limit over the catalog's size takes them all in one page.
    const response = await http(gw.url, 'GET', '/v1/models?limit=1000', { headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' } });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ has_more: false });
    expect(response.body.data[0]).toMatchObject({ type: 'model', id: expect.any(String), display_name: expect.any(String) });
    expect(response.body.first_id).toBe(response.body.data[0].id);
  });

  it('401 in the OpenAI shape for an unknown key, a key in the wrong header, and a revoked key', async () => {
    const unknown = await client('baikal-sk-' + 'A'.repeat(43)).models.list().catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(unknown).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((unknown as InstanceType<typeof OpenAI.APIError>).error).toEqual({ message: 'Invalid API key', type: 'authentication_error', code: 'invalid_api_key', param: null });
    const wrongHeader = await http(gw.url, 'GET', '/v1/models', { headers: { 'x-api-key': key } });
    expect(wrongHeader.status).toBe(401);
    expect(wrongHeader.body.error.code).toBe('wrong_auth_header');

    const { actor } = await newFundedAccount(gw);
    const doomed = await gw.services.keys.create(actor, {});
    expect((await http(gw.url, 'GET', '/v1/models', { token: doomed.key })).status).toBe(200);
    await gw.services.keys.revoke(actor, doomed.id);
    expect((await http(gw.url, 'GET', '/v1/models', { token: doomed.key })).status).toBe(401);
  });

  it('404 model_not_found for an unknown model; every response carries x-request-id', async () => {
    const missing = await client(key).models.retrieve('no-such-model').catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ type: 'invalid_request_error', code: 'model_not_found' });
    expect((missing as InstanceType<typeof OpenAI.APIError>).headers?.get('x-request-id')).toMatch(/^req_/);
  });
});

describe('unsupported endpoints (SPEC.md section 1)', () => {
  it.each([
    ['POST', '/v1/completions'],
    ['POST', '/v1/embeddings'],
    ['POST', '/v1/rerank'],
    ['POST', '/v1/moderations'],
    ['POST', '/v1/audio/speech'],
    ['POST', '/v1/audio/transcriptions'],
    ['GET', '/v1/realtime'],
  ])('%s %s answers a clear 404 in the OpenAI shape', async (method, path) => {
    const response = await http(gw.url, method, path, { token: key, body: method === 'POST' ? { model: 'gen-5.6-luna', input: 'x' } : undefined });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: { message: 'This endpoint is not supported by this gateway', type: 'invalid_request_error', code: 'unsupported_endpoint', param: null } });
  });

  it('the official client sees embeddings as NotFound', async () => {
    await expect(client(key).embeddings.create({ model: 'gen-5.6-luna', input: 'x' })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});
