import { describe, expect, it, vi } from 'vitest';
import { TRPCClientError } from '@trpc/client';
import { useTestGateway } from '../helpers/gateway.js';
import { KEY_CACHE_TTL_MS, KeysService } from '../../src/keys/keys.service.js';
import { createLogger } from '../../src/shared/logging.js';
import { graphql, http, trpcClient } from '../helpers/clients.js';
import { newAdmin, newFundedAccount } from '../helpers/accounts.js';
import { CreateKeyDocument, KeysDocument, RevokeKeyDocument, SetKeyLimitsDocument } from '../graphql/generated.js';

const gw = useTestGateway();

const KEY_FIELDS = ['created_at', 'id', 'label', 'last_used', 'monthly_spend_cap', 'pricing_plan', 'provider_family', 'route_group'];
const CREATED_FIELDS = ['created_at', 'id', 'key', 'label', 'monthly_spend_cap', 'pricing_plan', 'provider_family', 'route_group'];

describe('REST /keys (SPEC.md 4.2)', () => {
  it('speaks SPEC names at the edge: issues name snake_case fields, a camelCase twin is an unknown field, and nothing is created by a refused body', async () => {
    const { token } = await newFundedAccount(gw);
    const bad = await http(gw.url, 'POST', '/keys', { token, body: { provider_family: 'nope', route_group: '', monthly_spend_cap: 'ten', extra_field: 1 } });
    expect(bad.status).toBe(422);
    const locs = (bad.body as { detail: { loc: string[] }[] }).detail.map((issue) => issue.loc.join('.')).sort();
    expect(locs).toEqual(['body.extra_field', 'body.monthly_spend_cap', 'body.route_group']);
    const family = await http(gw.url, 'POST', '/keys', { token, body: { provider_family: 'nope' } });
    expect(family.status).toBe(422);
    expect((family.body as { detail: { loc: string[] }[] }).detail.map((issue) => issue.loc)).toEqual([['body', 'provider_family']]);
    for (const body of [{ providerFamily: 'family_a' }, { routeGroup: 'cheap', label: 'x' }, { monthlySpendCap: '5' }]) {
      const twin = await http(gw.url, 'POST', '/keys', { token, body });
      expect(twin.status).toBe(422);
      expect(twin.body).toMatchObject({ detail: [{ loc: ['body', Object.keys(body)[0]], type: 'extra_forbidden' }] });
    }
    const revoked = await http(gw.url, 'DELETE', '/keys/not-a-uuid', { token });
    expect(revoked.status).toBe(422);
    expect(revoked.body).toMatchObject({ detail: [{ loc: ['path', 'key_id'], type: 'uuid_format' }] });
    expect((await http(gw.url, 'GET', '/keys', { token })).body).toEqual([]);
  });

  it('creates a key with the defaults, shows the raw key once, stores only its hash', async () => {
    const { token, userId } = await newFundedAccount(gw);
    const created = await http(gw.url, 'POST', '/keys', { token, body: {} });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(CREATED_FIELDS);
    expect(created.body).toMatchObject({ label: null, provider_family: 'family_a', route_group: 'cheap', pricing_plan: 'siberia', monthly_spend_cap: null });
    expect(created.body.key).toMatch(/^baikal-sk-[A-Za-z0-9_-]{43}$/);

    const stored = await gw.db.query('select * from api_keys where user_id = $1', [userId]);
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(created.body.key);
    expect(JSON.stringify(stored)).not.toContain(created.body.key.slice('baikal-sk-'.length, -4));

    const list = await http(gw.url, 'GET', '/keys', { token });
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(1);
    expect(Object.keys(list.body[0]).sort()).toEqual(KEY_FIELDS);
    expect(list.body[0]).toEqual({ ...created.body, key: undefined, last_used: null, id: created.body.id });
    expect(list.text).not.toContain(created.body.key);
  });

  it('accepts every documented field: label, family, group, plan, spend cap as number or decimal string', async () => {
    const { token } = await newFundedAccount(gw);
    const fromNumber = await http(gw.url, 'POST', '/keys', { token, body: { label: 'ci', provider_family: 'family_b', route_group: 'cheap', pricing_plan: 'siberia', monthly_spend_cap: 12.5 } });
    expect(fromNumber.status).toBe(201);
    expect(fromNumber.body).toMatchObject({ label: 'ci', provider_family: 'family_b', monthly_spend_cap: '12.5' });
    const fromString = await http(gw.url, 'POST', '/keys', { token, body: { monthly_spend_cap: '0.0000000001', label: 'x'.repeat(128) } });
    expect(fromString.status).toBe(201);
    expect(fromString.body.monthly_spend_cap).toBe('0.0000000001');
    const nullCap = await http(gw.url, 'POST', '/keys', { token, body: { monthly_spend_cap: null, label: null } });
    expect(nullCap.status).toBe(201);
    const list = await http(gw.url, 'GET', '/keys', { token });
    expect(list.body.map((k: any) => k.id)).toEqual([nullCap.body.id, fromString.body.id, fromNumber.body.id]);
  });

  it.each([
    ['a label over 128 characters', { label: 'x'.repeat(129) }, ['body', 'label'], 'string_too_long'],
    ['a label of the wrong type', { label: 42 }, ['body', 'label'], 'string_type'],
    ['an unknown provider family', { provider_family: 'family_z' }, ['body', 'provider_family'], 'enum'],
    ['a group the family does not offer', { provider_family: 'family_c', route_group: 'premium' }, ['body', 'route_group'], 'enum'],
    ['an unknown plan', { pricing_plan: 'gold' }, ['body', 'pricing_plan'], 'enum'],
    ['a cap that is not a decimal', { monthly_spend_cap: 'ten dollars' }, ['body', 'monthly_spend_cap'], 'decimal_parsing'],
    ['a cap in exponent notation', { monthly_spend_cap: '1e3' }, ['body', 'monthly_spend_cap'], 'decimal_parsing'],
    ['a negative cap', { monthly_spend_cap: -5 }, ['body', 'monthly_spend_cap'], 'value_error'],
    ['a boolean cap', { monthly_spend_cap: true }, ['body', 'monthly_spend_cap'], 'union_error'],
    ['an unknown field', { scopes: ['all'] }, ['body', 'scopes'], 'extra_forbidden'],
    ['a non-object body', ['x'], ['body'], 'dict_type'],
  ])('422 for %s, and no key is written', async (_name, body, loc, type) => {
    const { token, userId } = await newFundedAccount(gw);
    const response = await http(gw.url, 'POST', '/keys', { token, body });
    expect(response.status).toBe(422);
    const issue = response.body.detail.find((i: any) => JSON.stringify(i.loc) === JSON.stringify(loc));
    expect(issue, JSON.stringify(response.body)).toBeTruthy();
    expect(issue.type).toBe(type);
    expect((await gw.db.query('select 1 from api_keys where user_id = $1', [userId])).length).toBe(0);
  });

  it('revokes a key (204): it leaves the list and stops authenticating at once', async () => {
    const { token, actor } = await newFundedAccount(gw);
    const created = (await http(gw.url, 'POST', '/keys', { token, body: { label: 'to revoke' } })).body;
    expect(await gw.services.keys.authenticate(created.key)).toMatchObject({ keyId: created.id, userId: actor.userId, providerFamily: 'family_a', routeGroup: 'cheap' });
    const revoked = await fetch(`${gw.url}/keys/${created.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    expect(revoked.status).toBe(204);
    expect(await revoked.text()).toBe('');
    expect(await gw.services.keys.authenticate(created.key)).toBeNull();
    expect((await http(gw.url, 'GET', '/keys', { token })).body).toEqual([]);
    expect((await http(gw.url, 'DELETE', `/keys/${created.id}`, { token })).status).toBe(404);
  });

  it("404 for someone else's key or an unknown id, 422 for a malformed id, 401 without a session", async () => {
    const owner = await newFundedAccount(gw);
    const stranger = await newFundedAccount(gw);
    const key = (await http(gw.url, 'POST', '/keys', { token: owner.token, body: {} })).body;
    const foreign = await http(gw.url, 'DELETE', `/keys/${key.id}`, { token: stranger.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ detail: 'No such key', code: 'not_found' });
    expect(await gw.services.keys.authenticate(key.key)).not.toBeNull();
    expect((await http(gw.url, 'DELETE', `/keys/00000000-0000-4000-8000-000000000000`, { token: owner.token })).status).toBe(404);
    const malformed = await http(gw.url, 'DELETE', '/keys/not-a-uuid', { token: owner.token });
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0].loc).toEqual(['path', 'key_id']);
    expect((await http(gw.url, 'GET', '/keys')).status).toBe(401);
    expect((await http(gw.url, 'POST', '/keys', { body: {} })).status).toBe(401);
  });

  it('refuses unknown, malformed and foreign-prefix raw keys', async () => {
    for (const raw of ['', 'baikal-sk-', 'baikal-sk-' + 'A'.repeat(43), 'sk-' + 'A'.repeat(48), "baikal-sk-' or 1=1 --", 'baikal-sk-' + 'x'.repeat(5000)]) {
      expect(await gw.services.keys.authenticate(raw)).toBeNull();
    }
  });

  it('records last use in batches, without a write per request', async () => {
    const { token } = await newFundedAccount(gw);
    const key = (await http(gw.url, 'POST', '/keys', { token, body: {} })).body;
    const at = new Date('2026-11-22T01:02:03.000Z');
    gw.services.keys.markUsed(key.id, new Date(at.getTime() - 1000));
    gw.services.keys.markUsed(key.id, at);
    expect((await http(gw.url, 'GET', '/keys', { token })).body[0].last_used).toBeNull();
    await gw.services.keys.flushLastUsed();
    expect((await http(gw.url, 'GET', '/keys', { token })).body[0].last_used).toBe(at.toISOString());
  });

  it('shows a private plan as custom', async () => {
    const admin = await newAdmin(gw);
    await gw.services.catalog.upsertPlan(admin.actor, { id: 'acme-private', label: 'Acme', public: false, multiplier: '0.8' });
    const { token, userId } = await newFundedAccount(gw);
    const key = (await http(gw.url, 'POST', '/keys', { token, body: {} })).body;
    await gw.db.query(`update api_keys set pricing_plan = 'acme-private' where id = $1`, [key.id]);
    const list = await http(gw.url, 'GET', '/keys', { token });
    expect(list.body[0].pricing_plan).toBe('custom');
    expect(list.text).not.toContain('acme');
    const refused = await http(gw.url, 'POST', '/keys', { token, body: { pricing_plan: 'acme-private' } });
    expect(refused.status).toBe(422);
    expect(refused.text).not.toContain('acme');
    expect(userId).toBeTruthy();
  });
});

describe('keys over GraphQL and tRPC', () => {
  it('GraphQL keys, createKey, revokeKey; other users get NOT_FOUND', async () => {
    const { token } = await newFundedAccount(gw);
    const stranger = await newFundedAccount(gw);
    const created = await graphql(gw.url, CreateKeyDocument, { input: { label: 'gql', monthlySpendCap: '3.50' } }, token);
    expect(created.data!.createKey).toMatchObject({ label: 'gql', providerFamily: 'family_a', routeGroup: 'cheap', pricingPlan: 'siberia', monthlySpendCap: '3.5' });
    expect(created.data!.createKey.key).toMatch(/^baikal-sk-/);
    const list = await graphql(gw.url, KeysDocument, {}, token);
    expect(list.data!.keys.map((k) => k.id)).toEqual([created.data!.createKey.id]);
    const invalid = await graphql(gw.url, CreateKeyDocument, { input: { monthlySpendCap: 'lots' } }, token);
    expect(invalid.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', issues: [{ loc: ['monthlySpendCap'], type: 'decimal_parsing' }] });
    const foreign = await graphql(gw.url, RevokeKeyDocument, { id: created.data!.createKey.id }, stranger.token);
    expect(foreign.errors![0]!.extensions!.code).toBe('NOT_FOUND');
    expect((await graphql(gw.url, RevokeKeyDocument, { id: created.data!.createKey.id }, token)).data!.revokeKey).toBe(true);
    expect((await graphql(gw.url, KeysDocument, {}, token)).data!.keys).toEqual([]);
  });

  it('tRPC keys.list, keys.create, keys.revoke', async () => {
    const { token } = await newFundedAccount(gw);
    const client = trpcClient(gw.url, token);
    const created = await client.keys.create.mutate({ label: 'trpc', providerFamily: 'family_c' });
    expect(created).toMatchObject({ label: 'trpc', providerFamily: 'family_c', routeGroup: 'cheap' });
    expect((await client.keys.list.query()).map((k) => k.id)).toEqual([created.id]);
    expect(await client.keys.revoke.mutate({ id: created.id })).toEqual({ ok: true });
    const again = await client.keys.revoke.mutate({ id: created.id }).catch((error: unknown) => error);
    expect(again).toBeInstanceOf(TRPCClientError);
    expect((again as TRPCClientError<any>).data.code).toBe('NOT_FOUND');
  });

  it('admins override a key’s limits and spend cap; the cached principal follows at once', async () => {
    const admin = await newAdmin(gw);
    const owner = await newFundedAccount(gw);
    const key = (await http(gw.url, 'POST', '/keys', { token: owner.token, body: {} })).body;
    expect(await gw.services.keys.authenticate(key.key)).toMatchObject({ rpmLimit: null, monthlySpendCap: null });
    const set = await graphql(gw.url, SetKeyLimitsDocument, { input: { keyId: key.id, rpmLimit: 600, concurrencyLimit: 16, monthlySpendCap: '25' } }, admin.token);
    expect(set.data!.setKeyLimits).toEqual({ keyId: key.id, userId: owner.userId, rpmLimit: 600, concurrencyLimit: 16, monthlySpendCap: '25' });
    expect(await gw.services.keys.authenticate(key.key)).toMatchObject({ rpmLimit: 600, concurrencyLimit: 16, monthlySpendCap: '25' });
    expect((await http(gw.url, 'GET', '/keys', { token: owner.token })).body[0].monthly_spend_cap).toBe('25');
    const cleared = await graphql(gw.url, SetKeyLimitsDocument, { input: { keyId: key.id, rpmLimit: null } }, admin.token);
    expect(cleared.data!.setKeyLimits).toMatchObject({ rpmLimit: null, concurrencyLimit: 16 });
    const denied = await graphql(gw.url, SetKeyLimitsDocument, { input: { keyId: key.id, rpmLimit: 100000 } }, owner.token);
    expect(denied.errors![0]!.extensions!.code).toBe('FORBIDDEN');
  });

  it('an expiring cached key is served while one lookup refreshes it; a change made behind its back shows after that refresh', async () => {
    let clock = Date.now();
    const queries: string[] = [];
    const orm = gw.database.orm;
    // The gateway's database, seen through a counter of key lookups.
    const counted = new Proxy(orm, {
      get: (target, name) =>
        name === 'em'
          ? new Proxy(target.em, {
              get: (em, emName) =>
                emName === 'fork'
                  ? () => {
                      const forked = em.fork();
                      const execute = forked.execute.bind(forked);
                      return Object.assign(forked, { execute: (sql: string, params?: unknown[]) => (queries.push(sql), execute(sql, params)) });
                    }
                  : Reflect.get(em, emName),
            })
          : Reflect.get(target, name),
    });
    const keys = new KeysService({ orm: counted as never, settings: { keyPrefix: gw.config.operator.brand.keyPrefix }, log: createLogger('silent'), catalog: gw.services.catalog }, () => clock);
    const owner = await newFundedAccount(gw);
    const key = (await http(gw.url, 'POST', '/keys', { token: owner.token, body: {} })).body;

    // 20 requests at once for a key not seen yet: one query.
    const first = await Promise.all(Array.from({ length: 20 }, () => keys.authenticate(key.key)));
    expect(first.every((p) => p?.keyId === key.id)).toBe(true);
    expect(queries).toHaveLength(1);

    // Revoked in the database directly (no eviction reaches this process).
    await gw.db.query('update api_keys set revoked_at = now() where id = $1', [key.id]);
    clock += KEY_CACHE_TTL_MS - 1;
    expect((await keys.authenticate(key.key))?.keyId).toBe(key.id); // still fresh: no query
    expect(queries).toHaveLength(1);

    // Past its time: answered from the cache at once, with one refresh behind it for all callers.
    clock += 2;
    const stale = await Promise.all(Array.from({ length: 20 }, () => keys.authenticate(key.key)));
    expect(stale.every((p) => p?.keyId === key.id)).toBe(true);
    expect(queries).toHaveLength(2);
    await vi.waitFor(async () => expect(await keys.authenticate(key.key)).toBeNull());

    // A key unused for twice its time is looked up before it is trusted again.
    const other = (await http(gw.url, 'POST', '/keys', { token: owner.token, body: {} })).body;
    expect((await keys.authenticate(other.key))?.keyId).toBe(other.id);
    await gw.db.query('update api_keys set revoked_at = now() where id = $1', [other.id]);
    clock += 2 * KEY_CACHE_TTL_MS;
    expect(await keys.authenticate(other.key)).toBeNull();
  });

  it('the summary counts active keys', async () => {
    const { token } = await newFundedAccount(gw);
    const a = (await http(gw.url, 'POST', '/keys', { token, body: {} })).body;
    await http(gw.url, 'POST', '/keys', { token, body: {} });
    await http(gw.url, 'DELETE', `/keys/${a.id}`, { token });
    expect((await http(gw.url, 'GET', '/auth/summary', { token })).body.active_keys).toBe(1);
  });
});
