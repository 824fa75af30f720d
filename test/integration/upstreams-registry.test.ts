import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { SharedState } from '../../src/shared/redis.js';
import { resolveUpstreams } from '../../src/upstreams/config.js';
import type { Upstream } from '../../src/upstreams/model.js';
import { UpstreamsService, type UpstreamsSettings } from '../../src/upstreams/upstreams.service.js';
import { useTestGateway } from '../helpers/gateway.js';
import { adminActor, canary, capturedLog, hexKey, tempDir } from '../helpers/upstreams.js';

const tmp = tempDir();
const ALPHA = canary('alpha');
const BETA = canary('beta');
const SPARE = canary('spare');
const STORED = canary('stored');
const ENV = { REG_ALPHA_KEY: ALPHA, REG_BETA_KEY: BETA, REG_BETA_SPARE: SPARE };
const KEY = hexKey();
const FILE = {
  upstreams: [
    { id: 'alpha', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', credentialEnv: 'REG_ALPHA_KEY', fallback: ['beta'], routes: [{ group: 'cheap', models: ['gen-5.6-luna', 'img-2'], modelMap: { 'img-2': 'image-two' }, weight: 3 }], prices: { 'img-2': { perImage: '0.02' } } },
    {
      id: 'beta',
      kind: 'anthropic',
      baseUrl: 'http://127.0.0.1:9/anthropic',
      credentials: [{ env: 'REG_BETA_KEY', label: 'b1', maxConcurrent: 3 }, { env: 'REG_BETA_SPARE' }],
      maxConcurrent: 9,
      health: { windowSeconds: 12, minFailures: 2 },
      timeouts: { firstByteMs: 1_234 },
      routes: [{ group: 'cheap', models: ['lm-opus-5'], priority: -1 }],
    },
  ],
};

const gw = useTestGateway({ BAIKAL_CONFIG: tmp.file('baikal.json', FILE), DATA_DIR: tmp.dir, ...ENV });
const sharedStates: SharedState[] = [];
afterAll(async () => {
  await Promise.all(sharedStates.map((shared) => shared.close()));
  tmp.remove();
});

/** Another gateway process on the same database: its own registry, environment and log. */
function process_(options: { env?: Record<string, string | undefined>; settings?: Partial<UpstreamsSettings>; shared?: SharedState } = {}) {
  const { log, lines } = capturedLog();
  const service = new UpstreamsService({
    orm: gw.database.orm,
    settings: { ...gw.config.managedUpstreams, ...options.settings },
    log,
    catalog: gw.services.catalog,
    env: options.env ?? { ...ENV, BAIKAL_SECRET_KEY: KEY },
    shared: options.shared,
  });
  return { service, lines };
}

/** Pools and routes in one order, so two sets of upstreams compare by content. */
function normalized(upstreams: Upstream[]): Upstream[] {
  return upstreams.map((u) => ({
    ...u,
    credentials: [...u.credentials].sort((a, b) => a.id.localeCompare(b.id)),
    routes: [...u.routes].sort((a, b) => `${a.model}/${a.group}`.localeCompare(`${b.model}/${b.group}`)),
  }));
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 5_000; !check(); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function newShared(log = capturedLog().log): Promise<SharedState> {
  const shared = new SharedState(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', log, `test-upstreams-${randomBytes(6).toString('hex')}:`);
  await shared.connect();
  sharedStates.push(shared);
  return shared;
}

describe('the upstream registry', () => {
  it('seeds from the operator file once, in one transaction, when several processes start together', async () => {
    // A first start: no upstream stored, never seeded (the test gateway may have loaded already).
    await gw.db.query('delete from upstreams');
    await gw.db.query('update upstream_state set seeded_at = null, version = 0');
    const processes = Array.from({ length: 5 }, () => process_());
    const loaded = await Promise.all(processes.map(({ service }) => service.load()));

    // What the file gives the gateway today, and what the stored copy gives it, are the same upstreams.
    const fromFile = normalized(resolveUpstreams(gw.config.operator.upstreams, ENV));
    for (const upstreams of loaded) expect(normalized(upstreams)).toEqual(fromFile);
    expect(normalized(loaded[0]!).find((u) => u.id === 'beta')!.credentials).toEqual([
      { id: 'env:REG_BETA_KEY', label: 'b1', secret: BETA, maxConcurrent: 3 },
      { id: 'env:REG_BETA_SPARE', label: 'REG_BETA_SPARE', secret: SPARE, maxConcurrent: null },
    ]);

    const seededLines = processes.flatMap(({ lines }) => lines.filter((line) => line.includes('upstreams seeded from BAIKAL_CONFIG')));
    expect(seededLines).toHaveLength(1);
    expect(await gw.db.query('select version::int, seeded_at is not null as seeded from upstream_state')).toEqual([{ version: 1, seeded: true }]);
    expect(await gw.db.query('select upstream_id, secret_env, sealed_secret from upstream_credentials order by secret_env')).toEqual([
      { upstream_id: 'alpha', secret_env: 'REG_ALPHA_KEY', sealed_secret: null },
      { upstream_id: 'beta', secret_env: 'REG_BETA_KEY', sealed_secret: null },
      { upstream_id: 'beta', secret_env: 'REG_BETA_SPARE', sealed_secret: null },
    ]);
    expect(await gw.db.query('select count(*)::int as n from upstream_routes')).toEqual([{ n: 3 }]);
  });

  it('does not seed again: an upstream an admin deleted stays deleted after a restart, even when none is left', async () => {
    const first = process_();
    await first.service.load();
    await first.service.remove(adminActor(), { id: 'alpha' });
    const restarted = process_();
    expect((await restarted.service.load()).map((u) => u.id)).toEqual(['beta']);
    expect(restarted.lines.some((line) => line.includes('seed an empty database only'))).toBe(true);

    await restarted.service.remove(adminActor(), { id: 'beta' });
    expect(await process_().service.load()).toEqual([]);
    // Put the file's upstreams back for the tests below.
    await first.service.applyFile(gw.config.operator.upstreams, { prune: false });
  });

  it('leaves out a credential whose variable is unset or whose stored secret no key opens, saying so by id, never by its text', async () => {
    const owner = process_();
    await owner.service.load();
    const alpha = await owner.service.addCredential(adminActor(), { upstreamId: 'alpha', secret: STORED, label: 'stored' });
    const storedId = alpha.credentials.find((c) => c.source === 'stored')!.id;
    expect(owner.service.upstreams.find((u) => u.id === 'alpha')!.credentials.map((c) => c.id)).toEqual(['env:REG_ALPHA_KEY', storedId]);

    // Another process with another key and without two of the variables.
    const other = process_({ env: { REG_BETA_KEY: BETA, BAIKAL_SECRET_KEY: hexKey() } });
    const upstreams = await other.service.load();
    // alpha: its variable unset, its stored secret unreadable: not routed; beta: its spare left out.
    expect(upstreams.map((u) => u.id)).toEqual(['beta']);
    expect(upstreams[0]!.credentials.map((c) => c.id)).toEqual(['env:REG_BETA_KEY']);
    const errors = other.lines.filter((line) => line.includes('"level":50'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(storedId);
    expect(errors[0]).toContain('cannot be decrypted');
    expect(other.lines.some((line) => line.includes('REG_BETA_SPARE is not set'))).toBe(true);
    expect(other.lines.some((line) => line.includes('upstream alpha is not routed: no usable enabled credential'))).toBe(true);
    for (const secret of [ALPHA, BETA, SPARE, STORED]) expect(other.lines.concat(owner.lines).join('\n')).not.toContain(secret);

    const view = (await other.service.list(adminActor())).find((u) => u.id === 'alpha')!;
    expect(view).toMatchObject({ active: false, inactiveReason: 'no usable enabled credential' });
    expect(view.credentials.find((c) => c.id === storedId)).toMatchObject({ usable: false, problem: expect.stringContaining('cannot be decrypted') });
    expect(other.service.secrets().sort()).toEqual([BETA]);
    await owner.service.removeCredential(adminActor(), { id: storedId });
  });

  it('in production without BAIKAL_SECRET_KEY, variables still work and storing a secret is refused naming the field', async () => {
    const production = process_({ env: { ...ENV }, settings: { production: true, dataDir: `${tmp.dir}/production` } });
    expect((await production.service.load()).map((u) => u.id)).toEqual(['alpha', 'beta']);
    const refused = await production.service.addCredential(adminActor(), { upstreamId: 'beta', secret: 'sk-would-be-stored-1234' }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'validation_failed', issues: [{ loc: ['secret'], type: 'secret_key_missing' }] });
    const view = await production.service.addCredential(adminActor(), { upstreamId: 'beta', env: 'REG_ALPHA_KEY', label: 'borrowed' });
    expect(view.credentials.map((c) => c.label)).toContain('borrowed');
    await production.service.removeCredential(adminActor(), { id: view.credentials.find((c) => c.label === 'borrowed')!.id });
  });

  it('tells the other processes through the bus; one without it catches up by polling; older versions change nothing', async () => {
    // One bus connection serves both here: it hears every message, as each process's own does.
    const shared = await newShared();
    const a = process_({ shared });
    const b = process_();
    const c = process_();
    await Promise.all([a.service.load(), b.service.load(), c.service.load()]);
    const heard: Upstream[][] = [];
    b.service.onChange((upstreams) => heard.push(upstreams));
    shared.onMessage((message) => {
      if (message.type === 'upstreams-changed') void b.service.adoptRemote(message.version);
    });

    await a.service.setEnabled(adminActor(), { id: 'beta', enabled: false });
    await until(() => heard.length === 1, 'the bus message');
    expect(heard[0]!.map((u) => u.id)).toEqual(['alpha']);
    expect(b.service.version).toBe(a.service.version);

    await b.service.adoptRemote(a.service.version);
    await b.service.adoptRemote(a.service.version - 1);
    expect(heard).toHaveLength(1);

    expect(c.service.upstreams.map((u) => u.id)).toEqual(['alpha', 'beta']);
    await c.service.poll();
    expect(c.service.upstreams.map((u) => u.id)).toEqual(['alpha']);
    await a.service.setEnabled(adminActor(), { id: 'beta', enabled: true });
    await until(() => heard.length === 2, 'the second bus message');
  });
});
