import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAdmin, newFundedAccount } from '../helpers/accounts.js';
import { useTestGateway } from '../helpers/gateway.js';
import { canary, catalogWithPremium, graphqlKeeping, hexKey, issueLocs, PREMIUM_MODEL, tempDir } from '../helpers/upstreams.js';
import {
  AddUpstreamCredentialDocument,
  AdminUpstreamDocument,
  AdminUpstreamsDocument,
  CreateUpstreamDocument,
  DeleteUpstreamCredentialDocument,
  DeleteUpstreamDocument,
  SetUpstreamEnabledDocument,
  SetUpstreamPricesDocument,
  SetUpstreamRoutesDocument,
  UpdateUpstreamCredentialDocument,
  UpdateUpstreamDocument,
  type CreateUpstreamInput,
} from '../graphql/generated.js';
import type { Upstream } from '../../src/upstreams/model.js';

const tmp = tempDir();
const ENV_SECRET = canary('env');
const EXTRA_SECRET = canary('extra');
const STORED_SECRET = canary('stored');
const STORED_SECRET_2 = canary('replaced');
const SECRETS = [ENV_SECRET, EXTRA_SECRET, STORED_SECRET, STORED_SECRET_2];
// The gateway reads credential variables and BAIKAL_SECRET_KEY from the environment it is configured from (GQL_UNSET_KEY is not in it).

const gw = useTestGateway({
  BAIKAL_CONFIG: tmp.file('baikal.json', {
    upstreams: [
      {
        id: 'seeded',
        kind: 'openai-compatible',
        baseUrl: 'http://127.0.0.1:9/v1',
        credentialEnv: 'GQL_SEED_KEY',
        routes: [{ group: 'cheap', models: ['gen-5.6-luna'] }],
        prices: { 'gen-5.6-luna': { inputPer1m: '0.1', outputPer1m: '0.4' } },
      },
    ],
  }),
  BAIKAL_CATALOG: tmp.file('catalog.json', catalogWithPremium()),
  DATA_DIR: tmp.dir,
  GQL_SEED_KEY: ENV_SECRET,
  GQL_EXTRA_KEY: EXTRA_SECRET,
  BAIKAL_SECRET_KEY: hexKey(),
});

const bodies: string[] = [];
const changes: Upstream[][] = [];
let admin: Awaited<ReturnType<typeof newAdmin>>;
let user: Awaited<ReturnType<typeof newFundedAccount>>;

beforeAll(async () => {
  await gw.services.managedUpstreams.load();
  gw.services.managedUpstreams.onChange((upstreams) => changes.push(upstreams));
  admin = await newAdmin(gw);
  user = await newFundedAccount(gw);
});
afterAll(() => tmp.remove());

const as = (token?: string) => ({
  call: <R, V>(document: Parameters<typeof graphqlKeeping<R, V>>[2], variables: V) => graphqlKeeping(bodies, gw.url, document, variables, token),
});
const call: ReturnType<typeof as>['call'] = (document, variables) => as(admin.token).call(document, variables);
const routed = (id: string) => gw.services.managedUpstreams.upstreams.find((u) => u.id === id);

const STORED: CreateUpstreamInput = {
  id: 'stored-one',
  kind: 'anthropic',
  baseUrl: 'https://anthropic.example/v1',
  credentials: [{ label: 'main', secret: STORED_SECRET, maxConcurrent: 4 }],
  routes: [{ model: 'lm-opus-5', group: 'cheap', upstreamModel: 'opus-upstream', weight: 2, priority: 5 }],
  prices: [{ model: 'lm-opus-5', inputPer1m: '3', outputPer1m: '15.5', cacheReadPer1m: '0.30' }],
  timeouts: { firstByteMs: 30_000 },
  health: { windowSeconds: 10 },
  fallback: ['seeded'],
};

describe('managed upstreams over GraphQL', () => {
  it('lists the upstream seeded from the operator file, its credential stored as the variable’s name only', async () => {
    const listed = await call(AdminUpstreamsDocument, {});
    expect(listed.errors).toBeUndefined();
    expect(listed.data!.adminUpstreams).toHaveLength(1);
    const seeded = listed.data!.adminUpstreams[0]!;
    expect(seeded).toMatchObject({
      id: 'seeded',
      kind: 'openai-compatible',
      active: true,
      inactiveReason: null,
      timeouts: { connectMs: 5_000, firstByteMs: 60_000, idleMs: 120_000, keepAliveMs: 4_000 },
      health: { windowSeconds: 30, minFailures: 5, failureRate: 0.5, cooldownSeconds: 5, maxCooldownSeconds: 60, stallMs: 1_000 },
      routes: [{ model: 'gen-5.6-luna', group: 'cheap', upstreamModel: 'gen-5.6-luna', weight: 1, priority: 0, enabled: true }],
      prices: [{ model: 'gen-5.6-luna', inputPer1m: '0.1', outputPer1m: '0.4', cacheReadPer1m: null, cacheWritePer1m: null, perImage: null, perVideoSecond: null }],
    });
    expect(seeded.credentials).toEqual([expect.objectContaining({ source: 'env', env: 'GQL_SEED_KEY', last4: null, label: 'GQL_SEED_KEY', usable: true, problem: null })]);
    const rows = await gw.db.query('select secret_env, sealed_secret, secret_last4 from upstream_credentials');
    expect(rows).toEqual([{ secret_env: 'GQL_SEED_KEY', sealed_secret: null, secret_last4: null }]);
    expect(routed('seeded')!.credentials).toEqual([{ id: 'env:GQL_SEED_KEY', label: 'GQL_SEED_KEY', secret: ENV_SECRET, maxConcurrent: null }]);
  });

  it('creates an upstream with a stored secret: sealed in its table, shown by its last four characters, routed at once', async () => {
    const created = await call(CreateUpstreamDocument, { input: STORED });
    expect(created.errors).toBeUndefined();
    const view = created.data!.createUpstream;
    expect(view).toMatchObject({
      id: 'stored-one',
      active: true,
      timeouts: { connectMs: 5_000, firstByteMs: 30_000, idleMs: 120_000, keepAliveMs: 4_000 },
      health: { windowSeconds: 10, minFailures: 5 },
      fallback: ['seeded'],
      routes: [{ model: 'lm-opus-5', group: 'cheap', upstreamModel: 'opus-upstream', weight: 2, priority: 5, enabled: true }],
      prices: [{ model: 'lm-opus-5', inputPer1m: '3', outputPer1m: '15.5', cacheReadPer1m: '0.3', cacheWritePer1m: null }],
    });
    expect(view.credentials).toEqual([expect.objectContaining({ label: 'main', source: 'stored', last4: STORED_SECRET.slice(-4), env: null, maxConcurrent: 4, usable: true })]);

    const [row] = await gw.db.query<{ sealed_secret: string; secret_last4: string; whole: string }>('select sealed_secret, secret_last4, row_to_json(c)::text as whole from upstream_credentials c where upstream_id = $1', ['stored-one']);
    expect(row!.sealed_secret).toMatch(/^v1\.[0-9a-f]{8}\./);
    expect(row!.secret_last4).toBe(STORED_SECRET.slice(-4));
    expect(row!.whole).not.toContain(STORED_SECRET);
    expect(row!.whole).not.toContain(Buffer.from(STORED_SECRET).toString('base64url'));

    const upstream = routed('stored-one')!;
    expect(upstream.credentials).toEqual([{ id: view.credentials[0]!.id, label: 'main', secret: STORED_SECRET, maxConcurrent: 4 }]);
    expect(upstream.routes).toEqual([{ model: 'lm-opus-5', group: 'cheap', upstreamModel: 'opus-upstream', weight: 2, priority: 5 }]);
    expect(upstream.prices['lm-opus-5']).toEqual({ inputPer1m: '3', outputPer1m: '15.5', cacheReadPer1m: '0.3', cacheWritePer1m: null, perImage: null, perVideoSecond: null });
    expect(upstream.health.windowMs).toBe(10_000);
    expect(changes.at(-1)!.map((u) => u.id)).toEqual(['seeded', 'stored-one']);
    expect(gw.services.managedUpstreams.secrets()).toEqual(expect.arrayContaining([ENV_SECRET, STORED_SECRET]));
  });

  it('refuses invalid input naming the field, and stores nothing', async () => {
    const refused = async (input: Partial<CreateUpstreamInput>, loc: string) => {
      const result = await call(CreateUpstreamDocument, { input: { id: 'refused', kind: 'anthropic', baseUrl: 'https://ok.example/v1', ...input } });
      expect(result.errors?.[0]?.extensions?.code, loc).toBe('BAD_USER_INPUT');
      expect(issueLocs(result), JSON.stringify(result.errors)).toContain(loc);
    };
    await refused({ routes: [{ model: 'no-such-model', group: 'cheap' }] }, 'routes.0.model');
    await refused({ routes: [{ model: 'lm-opus-5', group: 'cheap' }, { model: 'lm-opus-5', group: 'no-such-group' }] }, 'routes.1.group');
    await refused({ kind: 'openai-compatible', routes: [{ model: 'gen-5.6-luna', group: 'premium' }] }, 'routes.0.group');
    await refused({ routes: [{ model: 'img-2', group: 'cheap' }] }, 'routes.0.model');
    await refused({ kind: 'openai-compatible', routes: [{ model: 'alpha-3.0', group: 'cheap' }] }, 'routes.0.model');
    await refused({ baseUrl: 'ftp://files.example/v1' }, 'baseUrl');
    await refused({ baseUrl: 'https://user:pw@provider.example/v1' }, 'baseUrl');
    await refused({ credentials: [{ env: 'GQL_UNSET_KEY' }] }, 'credentials.0.env');
    await refused({ credentials: [{ env: 'GQL_EXTRA_KEY', secret: 'sk-both-given-000' }] }, 'credentials.0.secret');
    await refused({ credentials: [{ secret: 'with space inside' }] }, 'credentials.0.secret');
    await refused({ nativeResponses: true }, 'nativeResponses');
    await refused({ fallback: ['no-such-upstream'] }, 'fallback.0');
    await refused({ id: 'Not An Id' }, 'id');
    await refused({ kind: 'carrier-pigeon' }, 'kind');
    await refused({ prices: [{ model: 'lm-opus-5', inputPer1m: '1.2.3' }] }, 'prices.0.inputPer1m');
    expect((await call(AdminUpstreamDocument, { id: 'refused' })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');

    const taken = await call(CreateUpstreamDocument, { input: { id: 'seeded', kind: 'anthropic', baseUrl: 'https://ok.example/v1' } });
    expect(taken.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', reason: 'upstream_exists' });

    const premium = await call(SetUpstreamRoutesDocument, { upstreamId: 'seeded', routes: [{ model: 'gen-5.6-luna', group: 'cheap' }, { model: 'gen-5.6-luna', group: 'premium' }] });
    expect(issueLocs(premium)).toEqual(['routes.1.group']);
    const twice = await call(SetUpstreamRoutesDocument, { upstreamId: 'seeded', routes: [{ model: 'gen-5.6-luna', group: 'cheap' }, { model: 'gen-5.6-luna', group: 'cheap' }] });
    expect(issueLocs(twice)).toEqual(['routes.1.model']);
    expect(issueLocs(await call(AddUpstreamCredentialDocument, { upstreamId: 'seeded', input: { env: 'GQL_UNSET_KEY' } }))).toEqual(['env']);
    expect(issueLocs(await call(SetUpstreamPricesDocument, { upstreamId: 'seeded', prices: [{ model: 'no-such-model', inputPer1m: '1' }] }))).toEqual(['prices.0.model']);
    expect((await call(SetUpstreamRoutesDocument, { upstreamId: 'nobody', routes: [] })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(routed('seeded')!.routes).toEqual([{ model: 'gen-5.6-luna', group: 'cheap', upstreamModel: 'gen-5.6-luna', weight: 1, priority: 0 }]);
  });

  it('replaces routes and prices', async () => {
    const routes = await call(SetUpstreamRoutesDocument, {
      upstreamId: 'seeded',
      routes: [{ model: 'gen-5.6-luna', group: 'cheap' }, { model: PREMIUM_MODEL, group: 'premium', upstreamModel: 'sol-large', weight: 0.5, priority: -2, enabled: false }],
    });
    expect(routes.errors).toBeUndefined();
    expect(routes.data!.setUpstreamRoutes.routes.map(({ id: _id, ...route }) => route)).toEqual([
      { model: 'gen-5.6-luna', group: 'cheap', upstreamModel: 'gen-5.6-luna', weight: 1, priority: 0, enabled: true },
      { model: PREMIUM_MODEL, group: 'premium', upstreamModel: 'sol-large', weight: 0.5, priority: -2, enabled: false },
    ]);
    // A disabled route is kept for the admin, not routed.
    expect(routed('seeded')!.routes.map((r) => r.model)).toEqual(['gen-5.6-luna']);

    const prices = await call(SetUpstreamPricesDocument, { upstreamId: 'seeded', prices: [{ model: 'img-2', perImage: '0.040' }, { model: 'gen-5.6-luna', inputPer1m: '0.2', outputPer1m: '0.8' }] });
    expect(prices.errors).toBeUndefined();
    expect(routed('seeded')!.prices).toEqual({
      'img-2': { inputPer1m: null, outputPer1m: null, cacheReadPer1m: null, cacheWritePer1m: null, perImage: '0.04', perVideoSecond: null },
      'gen-5.6-luna': { inputPer1m: '0.2', outputPer1m: '0.8', cacheReadPer1m: null, cacheWritePer1m: null, perImage: null, perVideoSecond: null },
    });
  });

  it('updates settings partially; a change of kind its routes cannot follow is refused on kind', async () => {
    const updated = await call(UpdateUpstreamDocument, { id: 'seeded', input: { timeouts: { idleMs: 90_000 }, maxConcurrent: 7, nativeResponses: true, health: { stallMs: 2_500 } } });
    expect(updated.errors).toBeUndefined();
    expect(updated.data!.updateUpstream).toMatchObject({ timeouts: { connectMs: 5_000, firstByteMs: 60_000, idleMs: 90_000, keepAliveMs: 4_000 }, maxConcurrent: 7, nativeResponses: true, health: { windowSeconds: 30, stallMs: 2_500 } });
    expect(routed('seeded')).toMatchObject({ maxConcurrent: 7, nativeResponses: true, timeouts: { idleMs: 90_000 }, health: { stallMs: 2_500 } });

    expect(issueLocs(await call(UpdateUpstreamDocument, { id: 'seeded', input: { kind: 'anthropic' } }))).toEqual(['kind']);
    // One issue for each route the new kind cannot serve (the enabled one and the disabled one).
    expect(issueLocs(await call(UpdateUpstreamDocument, { id: 'seeded', input: { kind: 'video-jobs', nativeResponses: false } }))).toEqual(['kind', 'kind']);
    expect(issueLocs(await call(UpdateUpstreamDocument, { id: 'seeded', input: { fallback: ['seeded'] } }))).toEqual(['fallback.0']);
    expect(issueLocs(await call(UpdateUpstreamDocument, { id: 'seeded', input: { timeouts: { idleMs: -1 } } }))).toEqual(['timeouts.idleMs']);
    expect(routed('seeded')).toMatchObject({ kind: 'openai-compatible', nativeResponses: true, fallback: [] });
  });

  it('manages a pool: adds a credential by variable, disables and relabels it, replaces a stored secret, deletes', async () => {
    const added = await call(AddUpstreamCredentialDocument, { upstreamId: 'stored-one', input: { env: 'GQL_EXTRA_KEY', label: 'extra' } });
    expect(added.errors).toBeUndefined();
    const extra = added.data!.addUpstreamCredential.credentials.find((c) => c.env === 'GQL_EXTRA_KEY')!;
    expect(extra).toMatchObject({ source: 'env', label: 'extra', last4: null, usable: true, enabled: true });
    expect(routed('stored-one')!.credentials.map((c) => c.id)).toEqual([expect.any(String), 'env:GQL_EXTRA_KEY']);

    const disabled = await call(UpdateUpstreamCredentialDocument, { id: extra.id, input: { enabled: false, label: 'spare', maxConcurrent: 3 } });
    expect(disabled.data!.updateUpstreamCredential.credentials.find((c) => c.id === extra.id)).toMatchObject({ enabled: false, label: 'spare', maxConcurrent: 3 });
    expect(routed('stored-one')!.credentials).toHaveLength(1);
    const cleared = await call(UpdateUpstreamCredentialDocument, { id: extra.id, input: { maxConcurrent: null } });
    expect(cleared.data!.updateUpstreamCredential.credentials.find((c) => c.id === extra.id)).toMatchObject({ maxConcurrent: null, label: 'spare' });

    const stored = (await call(AdminUpstreamDocument, { id: 'stored-one' })).data!.adminUpstream.credentials.find((c) => c.source === 'stored')!;
    const [before] = await gw.db.query<{ sealed_secret: string }>('select sealed_secret from upstream_credentials where id = $1', [stored.id]);
    const replaced = await call(UpdateUpstreamCredentialDocument, { id: stored.id, input: { secret: STORED_SECRET_2 } });
    expect(replaced.data!.updateUpstreamCredential.credentials.find((c) => c.id === stored.id)).toMatchObject({ last4: STORED_SECRET_2.slice(-4), label: 'main', source: 'stored' });
    const [after] = await gw.db.query<{ sealed_secret: string }>('select sealed_secret from upstream_credentials where id = $1', [stored.id]);
    expect(after!.sealed_secret).not.toBe(before!.sealed_secret);
    expect(routed('stored-one')!.credentials[0]!.secret).toBe(STORED_SECRET_2);

    const deleted = await call(DeleteUpstreamCredentialDocument, { id: extra.id });
    expect(deleted.data!.deleteUpstreamCredential.credentials.map((c) => c.id)).toEqual([stored.id]);
    expect((await call(DeleteUpstreamCredentialDocument, { id: extra.id })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');

    // Its only credential disabled, the upstream stays listed but leaves routing, saying why.
    const off = await call(UpdateUpstreamCredentialDocument, { id: stored.id, input: { enabled: false } });
    expect(off.data!.updateUpstreamCredential).toMatchObject({ active: false, inactiveReason: 'no usable enabled credential' });
    expect(routed('stored-one')).toBeUndefined();
    await call(UpdateUpstreamCredentialDocument, { id: stored.id, input: { enabled: true } });
    expect(routed('stored-one')).toBeDefined();
  });

  it('disables, enables and deletes upstreams; one another falls back to cannot be deleted', async () => {
    const off = await call(SetUpstreamEnabledDocument, { id: 'stored-one', enabled: false });
    expect(off.data!.setUpstreamEnabled).toMatchObject({ enabled: false, active: false, inactiveReason: 'disabled' });
    expect(routed('stored-one')).toBeUndefined();
    await call(SetUpstreamEnabledDocument, { id: 'stored-one', enabled: true });
    expect(routed('stored-one')).toBeDefined();

    const blocked = await call(DeleteUpstreamDocument, { id: 'seeded' });
    expect(blocked.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', reason: 'upstream_in_fallback' });
    await call(UpdateUpstreamDocument, { id: 'stored-one', input: { fallback: [] } });
    expect((await call(DeleteUpstreamDocument, { id: 'seeded' })).data!.deleteUpstream).toBe(true);
    expect((await call(AdminUpstreamDocument, { id: 'seeded' })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(await gw.db.query("select 1 from upstream_credentials where upstream_id = 'seeded' union all select 1 from upstream_routes where upstream_id = 'seeded'")).toEqual([]);
    expect(gw.services.managedUpstreams.upstreams.map((u) => u.id)).toEqual(['stored-one']);
  });

  it('refuses every operation to a signed-in non-admin (FORBIDDEN) and to no one signed in (UNAUTHENTICATED), changing nothing', async () => {
    const version = gw.services.managedUpstreams.version;
    const credentialId = (await call(AdminUpstreamDocument, { id: 'stored-one' })).data!.adminUpstream.credentials[0]!.id;
    for (const [token, code] of [[user.token, 'FORBIDDEN'], [undefined, 'UNAUTHENTICATED']] as const) {
      const { call: caller } = as(token);
      const results = [
        await caller(AdminUpstreamsDocument, {}),
        await caller(AdminUpstreamDocument, { id: 'stored-one' }),
        await caller(CreateUpstreamDocument, { input: { ...STORED, id: 'intruder', fallback: [] } }),
        await caller(UpdateUpstreamDocument, { id: 'stored-one', input: { baseUrl: 'https://evil.example/v1' } }),
        await caller(SetUpstreamEnabledDocument, { id: 'stored-one', enabled: false }),
        await caller(DeleteUpstreamDocument, { id: 'stored-one' }),
        await caller(AddUpstreamCredentialDocument, { upstreamId: 'stored-one', input: { secret: 'sk-intruder-0000' } }),
        await caller(UpdateUpstreamCredentialDocument, { id: credentialId, input: { enabled: false } }),
        await caller(DeleteUpstreamCredentialDocument, { id: credentialId }),
        await caller(SetUpstreamRoutesDocument, { upstreamId: 'stored-one', routes: [] }),
        await caller(SetUpstreamPricesDocument, { upstreamId: 'stored-one', prices: [] }),
      ];
      for (const [i, result] of results.entries()) {
        expect(result.errors?.[0]?.extensions?.code, `operation ${i}`).toBe(code);
        expect(result.data, `operation ${i}`).toBeNull();
      }
    }
    expect(gw.services.managedUpstreams.version).toBe(version);
    expect(routed('stored-one')).toMatchObject({ baseUrl: 'https://anthropic.example/v1', credentials: [expect.objectContaining({ id: credentialId })] });
  });

  it('never answered a secret: no response body holds one, and no table holds one in clear', async () => {
    expect(bodies.length).toBeGreaterThan(40);
    // The search reads what was answered: a stored secret's last four characters are there, the rest never.
    expect(bodies.some((body) => body.includes(`"last4":"${STORED_SECRET_2.slice(-4)}"`))).toBe(true);
    for (const secret of SECRETS) {
      expect(bodies.filter((body) => body.includes(secret))).toEqual([]);
      expect(bodies.filter((body) => body.includes(secret.slice(0, -4)))).toEqual([]);
    }
    const [tables] = await gw.db.query<{ text: string }>(
      `select concat((select json_agg(c)::text from upstream_credentials c), (select json_agg(u)::text from upstreams u), (select json_agg(s)::text from upstream_state s)) as text`,
    );
    for (const secret of SECRETS) expect(tables!.text).not.toContain(secret);
  });
});
