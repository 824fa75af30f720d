import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRPCClientError } from '@trpc/client';
import { newAdmin, newFundedAccount } from '../helpers/accounts.js';
import { trpcClient } from '../helpers/clients.js';
import { useTestGateway } from '../helpers/gateway.js';
import { canary, hexKey, tempDir, trpcKeeping } from '../helpers/upstreams.js';

const tmp = tempDir();
const STORED_SECRET = canary('trpc-stored');
const ENV_SECRET = canary('trpc-env');

// No upstream in the operator file: nothing is seeded, admins start from an empty list.
const gw = useTestGateway({ DATA_DIR: tmp.dir, TRPC_POOL_KEY: ENV_SECRET, BAIKAL_SECRET_KEY: hexKey() });
const bodies: string[] = [];
let admin: Awaited<ReturnType<typeof newAdmin>>;
let user: Awaited<ReturnType<typeof newFundedAccount>>;

beforeAll(async () => {
  expect(await gw.services.managedUpstreams.load()).toEqual([]);
  admin = await newAdmin(gw);
  user = await newFundedAccount(gw);
});
afterAll(() => tmp.remove());

const query = (procedure: string, input?: unknown, token = admin.token) => trpcKeeping(bodies, gw.url, `upstreams.${procedure}`, 'query', input, token);
const mutate = (procedure: string, input: unknown, token = admin.token) => trpcKeeping(bodies, gw.url, `upstreams.${procedure}`, 'mutation', input, token);
const data = (response: { status: number; body: any }) => {
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.result.data;
};

describe('managed upstreams over tRPC', () => {
  it('starts empty when the operator file names no upstream, and does not count that as seeded', async () => {
    expect(data(await query('list'))).toEqual([]);
    expect(await gw.db.query('select seeded_at from upstream_state')).toEqual([{ seeded_at: null }]);
  });

  it('runs every operation', async () => {
    const created = data(
      await mutate('create', {
        id: 'trpc-one',
        kind: 'openai-compatible',
        baseUrl: 'https://provider.example/v1',
        nativeResponses: true,
        credentials: [{ secret: STORED_SECRET, label: 'first' }],
        routes: [{ model: 'gen-5.6-luna', group: 'cheap' }],
      }),
    );
    expect(created).toMatchObject({ id: 'trpc-one', nativeResponses: true, active: true, credentials: [{ source: 'stored', last4: STORED_SECRET.slice(-4), label: 'first' }] });
    expect(data(await query('get', { id: 'trpc-one' })).id).toBe('trpc-one');
    expect(data(await mutate('create', { id: 'trpc-two', kind: 'video-jobs', baseUrl: 'http://video.example/v1', credentials: [{ env: 'TRPC_POOL_KEY' }], routes: [{ model: 'alpha-3.0', group: 'cheap' }] }))).toMatchObject({ active: true });

    expect(data(await mutate('update', { id: 'trpc-one', baseUrl: 'https://other.example/v1', fallback: ['trpc-two'] }))).toMatchObject({ baseUrl: 'https://other.example/v1', fallback: ['trpc-two'] });
    expect(data(await mutate('setEnabled', { id: 'trpc-two', enabled: false }))).toMatchObject({ enabled: false, active: false });
    const pooled = data(await mutate('addCredential', { upstreamId: 'trpc-one', env: 'TRPC_POOL_KEY', maxConcurrent: 2 }));
    const envCredential = pooled.credentials.find((c: any) => c.source === 'env');
    expect(envCredential).toMatchObject({ env: 'TRPC_POOL_KEY', maxConcurrent: 2, usable: true });
    expect(data(await mutate('updateCredential', { id: envCredential.id, label: 'second' })).credentials.find((c: any) => c.id === envCredential.id).label).toBe('second');
    expect(data(await mutate('setRoutes', { upstreamId: 'trpc-one', routes: [{ model: 'gen-5.6-terra', group: 'cheap', priority: 3 }] })).routes).toEqual([expect.objectContaining({ model: 'gen-5.6-terra', priority: 3 })]);
    expect(data(await mutate('setPrices', { upstreamId: 'trpc-one', prices: [{ model: 'gen-5.6-terra', inputPer1m: '0.5', outputPer1m: '2' }] })).prices).toEqual([expect.objectContaining({ model: 'gen-5.6-terra', inputPer1m: '0.5', outputPer1m: '2' })]);
    expect(data(await mutate('deleteCredential', { id: envCredential.id })).credentials).toHaveLength(1);

    const routed = gw.services.managedUpstreams.upstreams;
    expect(routed.map((u) => u.id)).toEqual(['trpc-one']);
    expect(routed[0]).toMatchObject({ baseUrl: 'https://other.example/v1', routes: [{ model: 'gen-5.6-terra', priority: 3 }], credentials: [{ secret: STORED_SECRET }] });

    expect((await mutate('delete', { id: 'trpc-two' })).body.error.data).toMatchObject({ code: 'CONFLICT', reason: 'upstream_in_fallback' });
    await mutate('update', { id: 'trpc-one', fallback: [] });
    expect(data(await mutate('delete', { id: 'trpc-two' }))).toBe(true);
    expect((await query('get', { id: 'trpc-two' })).body.error.data).toMatchObject({ code: 'NOT_FOUND', httpStatus: 404 });
  });

  it('answers validation errors as 422 naming the field', async () => {
    const refused = await mutate('create', { id: 'bad', kind: 'anthropic', baseUrl: 'https://ok.example/v1', routes: [{ model: 'lm-opus-5', group: 'no-such-group' }], credentials: [{ env: 'TRPC_UNSET_KEY' }] });
    expect(refused.status).toBe(422);
    expect(refused.body.error.data.code).toBe('UNPROCESSABLE_CONTENT');
    expect(refused.body.error.data.issues.map((issue: any) => issue.loc)).toEqual(expect.arrayContaining([['routes', 0, 'group'], ['credentials', 0, 'env']]));
    const routes = await mutate('setRoutes', { upstreamId: 'trpc-one', routes: [{ model: 'img-2', group: 'cheap' }, { model: 'gen-5.6-luna', group: 'cheap', weight: 0 }] });
    expect(routes.body.error.data.issues.map((issue: any) => issue.loc)).toEqual([['routes', 1, 'weight']]);
    const url = await mutate('update', { id: 'trpc-one', baseUrl: 'javascript:alert(1)' });
    expect(url.body.error.data.issues.map((issue: any) => issue.loc)).toEqual([['baseUrl']]);
  });

  it('refuses every procedure to a non-admin with FORBIDDEN', async () => {
    const credentialId = gw.services.managedUpstreams.upstreams[0]!.credentials[0]!.id;
    const calls = [
      query('list', undefined, user.token),
      query('get', { id: 'trpc-one' }, user.token),
      mutate('create', { id: 'x', kind: 'anthropic', baseUrl: 'https://x.example' }, user.token),
      mutate('update', { id: 'trpc-one', baseUrl: 'https://evil.example' }, user.token),
      mutate('setEnabled', { id: 'trpc-one', enabled: false }, user.token),
      mutate('delete', { id: 'trpc-one' }, user.token),
      mutate('addCredential', { upstreamId: 'trpc-one', secret: 'sk-intruder-1234' }, user.token),
      mutate('updateCredential', { id: credentialId, enabled: false }, user.token),
      mutate('deleteCredential', { id: credentialId }, user.token),
      mutate('setRoutes', { upstreamId: 'trpc-one', routes: [] }, user.token),
      mutate('setPrices', { upstreamId: 'trpc-one', prices: [] }, user.token),
    ];
    for (const [i, response] of (await Promise.all(calls)).entries()) {
      expect(response.status, `procedure ${i}`).toBe(403);
      expect(response.body.error.data, `procedure ${i}`).toMatchObject({ code: 'FORBIDDEN', reason: 'admin_required' });
    }
    // The typed client of front ends sees the same router.
    const error = await trpcClient(gw.url, user.token).upstreams.list.query().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((await trpcClient(gw.url, admin.token).upstreams.list.query()).map((u) => u.id)).toEqual(['trpc-one']);
  });

  it('never answered a secret', () => {
    expect(bodies.length).toBeGreaterThan(25);
    for (const secret of [STORED_SECRET, ENV_SECRET]) expect(bodies.filter((body) => body.includes(secret.slice(0, -4)))).toEqual([]);
  });
});
