import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamsSchema, type UpstreamDefinition } from '../../src/upstreams/config.js';
import { UpstreamsService } from '../../src/upstreams/upstreams.service.js';
import { useTestGateway } from '../helpers/gateway.js';
import { adminActor, canary, capturedLog, hexKey, tempDir } from '../helpers/upstreams.js';

const tmp = tempDir();
const ENV = { APPLY_ONE_KEY: canary('one'), APPLY_TWO_KEY: canary('two'), APPLY_NEW_KEY: canary('new') };
const STORED = [canary('stored-a'), canary('stored-b')];
const [K1, K2, K3] = [hexKey(), hexKey(), hexKey()];
const definitions = (raw: unknown[]): UpstreamDefinition[] => upstreamsSchema.parse(raw);
const ONE = { id: 'one', kind: 'openai-compatible', baseUrl: 'https://one.example/v1', credentialEnv: 'APPLY_ONE_KEY', routes: [{ group: 'cheap', models: ['gen-5.6-luna'] }] };
const TWO = { id: 'two', kind: 'anthropic', baseUrl: 'https://two.example/v1', credentialEnv: 'APPLY_TWO_KEY', routes: [{ group: 'cheap', models: ['lm-opus-5'] }] };

const gw = useTestGateway({ DATA_DIR: tmp.dir });
afterAll(() => tmp.remove());

/** A process of the gateway with its own environment (keys). */
function service(env: Record<string, string>) {
  const { log, lines } = capturedLog();
  return { service: new UpstreamsService({ orm: gw.database.orm, settings: gw.config.managedUpstreams, log, catalog: gw.services.catalog, env: { ...ENV, ...env } }), lines };
}

const sealedRows = () => gw.db.query<{ id: string; sealed_secret: string }>('select id, sealed_secret from upstream_credentials where sealed_secret is not null order by id');

describe('applying the operator file', () => {
  const admin = adminActor();
  let upstreams: UpstreamsService;
  beforeAll(async () => {
    upstreams = service({ BAIKAL_SECRET_KEY: K1 }).service;
    await upstreams.load();
  });

  it('creates what is new, updates by id what exists, and leaves the others alone', async () => {
    expect(await upstreams.applyFile(definitions([ONE, TWO]), { prune: false })).toEqual({ created: ['one', 'two'], updated: [], pruned: [] });
    // An admin's own upstream, a stored secret added to a file upstream, and a file upstream disabled by an admin.
    await upstreams.create(admin, { id: 'manual', kind: 'anthropic', baseUrl: 'https://manual.example/v1', credentials: [{ secret: STORED[0]! }], routes: [{ model: 'lm-sonnet-5', group: 'cheap' }] });
    await upstreams.addCredential(admin, { upstreamId: 'one', secret: STORED[1]!, label: 'admin added' });
    await upstreams.setEnabled(admin, { id: 'two', enabled: false });

    const edited = [
      { ...ONE, baseUrl: 'https://one-moved.example/v1', credentials: [{ env: 'APPLY_NEW_KEY', label: 'new', maxConcurrent: 2 }], credentialEnv: undefined, routes: [{ group: 'cheap', models: ['gen-5.6-terra'], weight: 2 }], prices: { 'gen-5.6-terra': { inputPer1m: '1.5' } } },
      { ...TWO, maxConcurrent: 5 },
      { id: 'three', kind: 'video-jobs', baseUrl: 'https://three.example/v1', credentialEnv: 'APPLY_NEW_KEY', routes: [{ group: 'cheap', models: ['alpha-3.0'] }] },
    ];
    expect(await upstreams.applyFile(definitions(edited), { prune: false })).toEqual({ created: ['three'], updated: ['one', 'two'], pruned: [] });

    const views = await upstreams.list(admin);
    expect(views.map((u) => u.id)).toEqual(['manual', 'one', 'three', 'two']);
    const one = views.find((u) => u.id === 'one')!;
    expect(one).toMatchObject({ baseUrl: 'https://one-moved.example/v1', prices: [{ model: 'gen-5.6-terra', inputPer1m: '1.5' }], routes: [{ model: 'gen-5.6-terra', weight: 2 }] });
    // The file's variables replace the file's old ones; what an admin stored stays.
    expect(one.credentials.map((c) => [c.source, c.env ?? c.label])).toEqual([
      ['stored', 'admin added'],
      ['env', 'APPLY_NEW_KEY'],
    ]);
    expect(views.find((u) => u.id === 'two')).toMatchObject({ enabled: false, maxConcurrent: 5 });
    expect(upstreams.upstreams.map((u) => u.id)).toEqual(['manual', 'one', 'three']);
  });

  it('deletes the upstreams the file does not name with prune', async () => {
    expect(await upstreams.applyFile(definitions([ONE]), { prune: true })).toEqual({ created: [], updated: ['one'], pruned: ['manual', 'three', 'two'] });
    expect((await upstreams.list(admin)).map((u) => u.id)).toEqual(['one']);
    expect(await gw.db.query("select count(*)::int as n from upstream_credentials where upstream_id <> 'one'")).toEqual([{ n: 0 }]);
  });

  it('refuses a file naming one (model, group) twice for an upstream, changing nothing', async () => {
    const version = upstreams.version;
    const twice = { ...ONE, routes: [{ group: 'cheap', models: ['gen-5.6-luna'] }, { group: 'cheap', models: ['gen-5.6-sol', 'gen-5.6-luna'] }] };
    await expect(upstreams.applyFile(definitions([twice]), { prune: false })).rejects.toThrow('upstreams.0.routes.1.models.1: one already routes gen-5.6-luna in group cheap');
    expect(upstreams.version).toBe(version);
    expect((await upstreams.get(admin, { id: 'one' })).routes.map((r) => r.model)).toEqual(['gen-5.6-luna']);
  });
});

describe('rotating the secret key', () => {
  it('re-seals every stored secret under the new key, reading old ones with BAIKAL_SECRET_KEYS_OLD; again, nothing to do', async () => {
    const first = service({ BAIKAL_SECRET_KEY: K1 }).service;
    await first.load();
    await first.addCredential(adminActor(), { upstreamId: 'one', secret: STORED[0]!, label: 'second stored' });
    const before = await sealedRows();
    expect(before).toHaveLength(2);

    const rotating = service({ BAIKAL_SECRET_KEY: K2, BAIKAL_SECRET_KEYS_OLD: `${K3},${K1}` });
    expect(await rotating.service.rotateSecrets()).toBe(2);
    const after = await sealedRows();
    for (const [i, row] of after.entries()) {
      expect(row.sealed_secret).not.toBe(before[i]!.sealed_secret);
      expect(row.sealed_secret.split('.')[1]).not.toBe(before[i]!.sealed_secret.split('.')[1]);
    }
    expect(await rotating.service.rotateSecrets()).toBe(0);
    expect(await sealedRows()).toEqual(after);

    // Only the new key is needed now; the old one alone opens nothing.
    const secretsWith = async (env: Record<string, string>) => {
      const next = service(env).service;
      await next.load();
      return next.secrets().filter((secret) => STORED.includes(secret)).sort();
    };
    expect(await secretsWith({ BAIKAL_SECRET_KEY: K2 })).toEqual([...STORED].sort());
    expect(await secretsWith({ BAIKAL_SECRET_KEY: K1 })).toEqual([]);
    for (const line of rotating.lines) for (const secret of STORED) expect(line).not.toContain(secret);
  });

  it('changes nothing when a stored secret opens with no configured key, and names its credential', async () => {
    const before = await sealedRows();
    const stranger = service({ BAIKAL_SECRET_KEY: K3 }).service;
    const error = await stranger.rotateSecrets().catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain('BAIKAL_SECRET_KEYS_OLD');
    for (const row of before) expect((error as Error).message).toContain(row.id);
    for (const secret of STORED) expect((error as Error).message).not.toContain(secret);
    expect(await sealedRows()).toEqual(before);
  });

  it('needs a key to seal with (production without BAIKAL_SECRET_KEY)', async () => {
    const { log } = capturedLog();
    const production = new UpstreamsService({ orm: gw.database.orm, settings: { ...gw.config.managedUpstreams, production: true }, log, catalog: gw.services.catalog, env: { BAIKAL_SECRET_KEYS_OLD: K2 } });
    await expect(production.rotateSecrets()).rejects.toThrow('rotate-secrets needs BAIKAL_SECRET_KEY');
  });
});
