import { describe, expect, it } from 'vitest';
import { useTestGateway } from '../helpers/gateway.js';
import { graphql, http, trpcClient } from '../helpers/clients.js';
import { newAdmin, newFundedAccount } from '../helpers/accounts.js';
import { CatalogModelsDocument, MyCatalogModelsDocument, RemoveCatalogModelDocument, SetModelPricesDocument, UpsertCatalogModelDocument } from '../graphql/generated.js';

const gw = useTestGateway();

const SPEC_MODELS = [
  'gen-5.6-luna', 'gen-5.6-terra', 'gen-5.6-sol', 'delta-4.5', 'delta-4.6', 'zeta-5.2', 'eta-k3', 'lm-opus-5', 'lm-fable-5', 'lm-fable-5-cache', 'lm-sonnet-5',
  'img-1.5', 'delta-image', 'img-2', 'img-2-1k', 'img-2-2k', 'img-2-4k', 'img-2-4k-upscaled',
  'alpha-3.0', 'alpha-3.0-omni', 'beta3.0-t2v', 'beta3.0-i2v', 'beta3.0-prime-t2v', 'beta3.0-prime-i2v', 'gamma_h3', 'delta-imagine-video-1.5', 'epsilon2.5-01-720',
  'bridge-opus-5',
];

describe('GET /catalog/models', () => {
  it('lists every SPEC.md model with its groups, endpoints and public prices; nothing private', async () => {
    const response = await http(gw.url, 'GET', '/catalog/models');
    expect(response.status).toBe(200);
    expect(response.body.object).toBe('list');
    expect(response.body.data.map((m: any) => m.id).sort()).toEqual([...SPEC_MODELS].sort());
    expect(response.body.families.map((f: any) => f.id)).toEqual(['family_a', 'family_b', 'family_c', 'family_d']);
    const luna = response.body.data.find((m: any) => m.id === 'gen-5.6-luna');
    expect(luna).toMatchObject({
      provider_family: 'family_a',
      kind: 'text',
      endpoints: ['/v1/chat/completions', '/v1/responses'],
      groups: [{ id: 'cheap', label: 'Cheap', pricing_plan: 'siberia', pricing: { input_usd_per_1m: '0.016', output_usd_per_1m: '0.04', cache_read_usd_per_1m: '0.0016', cache_write_usd_per_1m: '0.018', usd_per_generation: null, usd_per_second: null } }],
    });
    const opus = response.body.data.find((m: any) => m.id === 'lm-opus-5');
    expect(opus.endpoints).toEqual(['/v1/messages']);
    const image = response.body.data.find((m: any) => m.id === 'img-2-2k');
    expect(image.endpoints).toEqual(['/v1/images/generations']);
    expect(image.groups[0].pricing.usd_per_generation).toBe('0.03');
    const video = response.body.data.find((m: any) => m.id === 'gamma_h3');
    expect(video.video).toMatchObject({ seconds: { min: 4, max: 15, default: 5 }, resolutions: ['480p', '768p', '1080p'], aspect_ratios: ['16:9', '9:16', '1:1', '3:4', '4:3', '21:9'] });
    expect(video.groups[0].pricing.usd_per_second).toBe('0.024');
    expect(response.text).not.toMatch(/upstream|route_id|credential|cost_price|api_key/i);
  });
});

describe('admin catalog edits', () => {
  it('a price change is visible to /catalog/models and to billing at once, without a restart', async () => {
    const admin = await newAdmin(gw);
    const before = gw.services.catalog.snapshot;
    const changed = await graphql(gw.url, SetModelPricesDocument, { modelId: 'zeta-5.2', group: 'cheap', prices: { tokens: { input: '0.21', output: '0.42' } } }, admin.token);
    expect(changed.errors).toBeUndefined();
    expect(changed.data!.setModelPrices.groups[0]!.pricing).toEqual({ inputUsdPer1m: '0.21', outputUsdPer1m: '0.42', cacheReadUsdPer1m: null, cacheWriteUsdPer1m: null });
    const after = gw.services.catalog.snapshot;
    expect(after.version).toBe(before.version + 1);
    expect(after.priceOf('zeta-5.2', 'cheap', 'siberia')).toEqual({ tokens: { input: '0.21', output: '0.42', cacheRead: null, cacheWrite: null } });
    const listed = await http(gw.url, 'GET', '/catalog/models');
    expect(listed.body.data.find((m: any) => m.id === 'zeta-5.2').groups[0].pricing.input_usd_per_1m).toBe('0.21');
    const [{ version }] = await gw.db.query<{ version: number }>('select version from catalog');
    expect(version).toBe(after.version);
  });

  it('refuses invalid prices and unknown models with clear errors, and non-admins with FORBIDDEN', async () => {
    const admin = await newAdmin(gw);
    const user = await newFundedAccount(gw);
    const bad = await graphql(gw.url, SetModelPricesDocument, { modelId: 'zeta-5.2', group: 'cheap', prices: { tokens: { input: '-1', output: 'x' } } }, admin.token);
    expect(bad.errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
    const unknownGroup = await graphql(gw.url, SetModelPricesDocument, { modelId: 'zeta-5.2', group: 'nowhere', prices: { perGeneration: '1' } }, admin.token);
    expect(unknownGroup.errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
    expect(unknownGroup.errors![0]!.message).toBe('The catalog change is not valid');
    const missing = await graphql(gw.url, SetModelPricesDocument, { modelId: 'no-such-model', group: 'cheap', prices: { perGeneration: '1' } }, admin.token);
    expect(missing.errors![0]!.extensions!.code).toBe('NOT_FOUND');
    const forbidden = await graphql(gw.url, SetModelPricesDocument, { modelId: 'zeta-5.2', group: 'cheap', prices: { perGeneration: '1' } }, user.token);
    expect(forbidden.errors![0]!.extensions!.code).toBe('FORBIDDEN');
  });

  it('adds and removes a model', async () => {
    const admin = await newAdmin(gw);
    const model = {
      id: 'gen-6-nova', label: 'Gen 6 Nova', family: 'family_a', kind: 'text', endpoints: ['/v1/chat/completions'],
      groups: { cheap: { tokens: { input: '0.5', output: '1.5' } } },
    };
    const added = await graphql(gw.url, UpsertCatalogModelDocument, { model }, admin.token);
    expect(added.data!.upsertCatalogModel).toEqual({ id: 'gen-6-nova', label: 'Gen 6 Nova' });
    expect((await http(gw.url, 'GET', '/catalog/models')).body.data.some((m: any) => m.id === 'gen-6-nova')).toBe(true);
    expect((await graphql(gw.url, RemoveCatalogModelDocument, { modelId: 'gen-6-nova' }, admin.token)).data!.removeCatalogModel).toBe(true);
    expect(gw.services.catalog.snapshot.models.has('gen-6-nova')).toBe(false);
  });

  it('the stored catalog survives a restart of the service (loaded from PostgreSQL, not the file)', async () => {
    const admin = await newAdmin(gw);
    await gw.services.catalog.setModelPrices(admin.actor, 'eta-k3', 'cheap', { tokens: { input: '0.9', output: '2.2', cacheRead: '0.09' } });
    const reloaded = await gw.services.catalog.load();
    expect(reloaded.priceOf('eta-k3', 'cheap', 'siberia')).toEqual({ tokens: { input: '0.9', output: '2.2', cacheRead: '0.09', cacheWrite: null } });
  });
});

describe('models for the signed-in user', () => {
  it('/catalog/models/me lists only what the user’s keys reach, at their plan, in all three transports', async () => {
    const { token } = await newFundedAccount(gw);
    expect((await http(gw.url, 'GET', '/catalog/models/me', { token })).body.data).toEqual([]);
    await http(gw.url, 'POST', '/keys', { token, body: { provider_family: 'family_c' } });
    const mine = await http(gw.url, 'GET', '/catalog/models/me', { token });
    expect(mine.status).toBe(200);
    expect(mine.body.data.map((m: any) => m.id).sort()).toEqual(['delta-4.5', 'delta-4.6']);

    const gql = await graphql(gw.url, MyCatalogModelsDocument, {}, token);
    expect(gql.data!.myCatalogModels.map((m) => m.id).sort()).toEqual(['delta-4.5', 'delta-4.6']);
    const trpc = await trpcClient(gw.url, token).catalog.myModels.query();
    expect(trpc.models.map((m) => m.id).sort()).toEqual(['delta-4.5', 'delta-4.6']);
    expect((await http(gw.url, 'GET', '/catalog/models/me')).status).toBe(401);
  });

  it('GraphQL catalogModels and tRPC catalog.models match REST', async () => {
    const rest = (await http(gw.url, 'GET', '/catalog/models')).body.data;
    const gql = (await graphql(gw.url, CatalogModelsDocument, {})).data!.catalogModels;
    const trpc = (await trpcClient(gw.url).catalog.models.query()).models;
    expect(gql.map((m) => m.id)).toEqual(rest.map((m: any) => m.id));
    expect(trpc.map((m) => m.id)).toEqual(rest.map((m: any) => m.id));
    const restSol = rest.find((m: any) => m.id === 'gen-5.6-sol');
    const gqlSol = gql.find((m) => m.id === 'gen-5.6-sol')!;
    expect(gqlSol.groups[0]!.pricing.inputUsdPer1m).toBe(restSol.groups[0].pricing.input_usd_per_1m);
    expect(gqlSol.official!.inputUsdPer1m).toBe(restSol.official_pricing.input_usd_per_1m);
  });
});
