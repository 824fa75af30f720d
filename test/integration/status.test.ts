import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Decimal } from 'decimal.js';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { http, trpcClient } from '../helpers/clients.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const OPENAI_KEY = `sk-CANARY-status-openai-${randomBytes(6).toString('hex')}`;
const ANTHROPIC_KEY = `sk-CANARY-status-anthropic-${randomBytes(6).toString('hex')}`;
const CANARY = `CANARY-status-upstream-${randomBytes(4).toString('hex')}`;
const UPSTREAM_IDS = ['status-openai-upstream', 'status-anthropic-upstream'];
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const PRICE = { tokens: { input: '1', output: '2' } };
const CATALOG = {
  families: [
    { id: 'family_a', label: 'Family A' },
    { id: 'family_b', label: 'Family B' },
  ],
  groups: [
    { id: 'cheap', label: 'Cheap', public: true },
    { id: 'reserve', label: 'Reserve', public: true },
    { id: 'hidden-lane', label: 'Hidden lane', public: false },
  ],
  plans: [{ id: 'siberia', label: 'Siberia', public: true, multiplier: '1' }],
  defaultPlan: 'siberia',
  models: [
    { id: 'gen-a', label: 'Gen A', family: 'family_a', kind: 'text', endpoints: ['/v1/chat/completions'], groups: { cheap: PRICE, 'hidden-lane': PRICE } },
    { id: 'claude-b', label: 'Claude B', family: 'family_b', kind: 'text', endpoints: ['/v1/messages'], groups: { cheap: PRICE } },
    // Offered in a public group but served by no route: unavailable without a probe.
    { id: 'spare-c', label: 'Spare C', family: 'family_a', kind: 'text', endpoints: ['/v1/chat/completions'], groups: { reserve: PRICE } },
  ],
};

let openaiSim: Simulator;
let anthropicSim: Simulator;
let gw: TestGateway;
let dir: string;
/** Every response body the tests saw, searched for leaks at the end. */
const seen: string[] = [];

beforeAll(async () => {
  openaiSim = await startSimulator({ apiKey: OPENAI_KEY, errorDetail: CANARY, name: 'status-openai' });
  anthropicSim = await startSimulator({ apiKey: ANTHROPIC_KEY, errorDetail: CANARY, name: 'status-anthropic' });
  // The first round takes a while, so the first reader sees `checking`.
  openaiSim.setProbeLatency(1_500);
  anthropicSim.setProbeLatency(1_500);
  dir = await mkdtemp(path.join(tmpdir(), 'baikal-status-'));
  await writeFile(path.join(dir, 'catalog.json'), JSON.stringify(CATALOG));
  await writeFile(
    path.join(dir, 'baikal.json'),
    JSON.stringify({
      upstreams: [
        {
          id: UPSTREAM_IDS[0],
          kind: 'openai-compatible',
          baseUrl: `${openaiSim.url}/v1`,
          credentialEnv: 'STATUS_OPENAI_KEY',
          routes: [
            { group: 'cheap', models: ['gen-a'] },
            { group: 'hidden-lane', models: ['gen-a'] },
          ],
        },
        { id: UPSTREAM_IDS[1], kind: 'anthropic', baseUrl: `${anthropicSim.url}/v1`, credentialEnv: 'STATUS_ANTHROPIC_KEY', routes: [{ group: 'cheap', models: ['claude-b'] }] },
      ],
    }),
  );
  gw = await startTestGateway({
    BAIKAL_CONFIG: path.join(dir, 'baikal.json'),
    BAIKAL_CATALOG: path.join(dir, 'catalog.json'),
    STATUS_OPENAI_KEY: OPENAI_KEY,
    STATUS_ANTHROPIC_KEY: ANTHROPIC_KEY,
    STATUS_PROBE_SECONDS: '0.2',
    STATUS_PROBE_TIMEOUT_MS: '3000',
    DATA_DIR: dir,
  });
});

afterAll(async () => {
  await gw?.close();
  await openaiSim?.close();
  await anthropicSim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function restStatus(): Promise<any> {
  const response = await http(gw.url, 'GET', '/catalog/status');
  expect(response.status).toBe(200);
  seen.push(response.text);
  return response.body;
}

const groupOf = (body: any, id: string) => body.groups.find((g: any) => g.id === id);
const modelOf = (body: any, group: string, model: string) => groupOf(body, group).models.find((m: any) => m.id === model);

async function waitForStatus(done: (body: any) => boolean, timeoutMs = 8_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const body = await restStatus();
    if (done(body)) return body;
    if (Date.now() > until) throw new Error(`status never matched: ${JSON.stringify(body)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function until(check: () => boolean, what: string, timeoutMs = 8_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const PERCENT = /^\d{1,3}\.\d{2}$/;

function expectSpecShape(body: any): void {
  expect(Object.keys(body).sort()).toEqual(['generated_at', 'groups']);
  expect(new Date(body.generated_at).toISOString()).toBe(body.generated_at);
  for (const group of body.groups) {
    expect(Object.keys(group).sort()).toEqual(['id', 'label', 'models', 'status', 'uptime']);
    expect(['active', 'unavailable']).toContain(group.status);
    expect(Object.keys(group.uptime).sort()).toEqual(['all_time', 'last_24h', 'last_30d', 'last_7d']);
    for (const value of Object.values(group.uptime)) expect(value).toMatch(PERCENT);
    for (const model of group.models) {
      expect(Object.keys(model).sort()).toEqual(['checked_at', 'history', 'id', 'label', 'status']);
      expect(['active', 'unavailable', 'checking']).toContain(model.status);
      expect(model.checked_at === null || new Date(model.checked_at).toISOString() === model.checked_at).toBe(true);
      for (const point of model.history) {
        expect(Object.keys(point).sort()).toEqual(['observed_at', 'status']);
        expect(['active', 'unavailable']).toContain(point.status);
      }
    }
  }
}

/** Uptime as SPEC.md's strings, from rows read back from the database, with exact decimal arithmetic. */
function expectedUptime(rows: { status: string; observed_at: Date }[], now: Date, fallback: string): Record<string, string> {
  const windows: Record<string, number> = { all_time: -Infinity, last_24h: now.getTime() - DAY, last_7d: now.getTime() - 7 * DAY, last_30d: now.getTime() - 30 * DAY };
  const result: Record<string, string> = {};
  for (const [name, start] of Object.entries(windows)) {
    let up = new Decimal(0);
    let observed = new Decimal(0);
    rows.forEach((row, i) => {
      const from = Math.max(row.observed_at.getTime(), start);
      const to = Math.min(rows[i + 1]?.observed_at.getTime() ?? now.getTime(), now.getTime());
      if (to <= from) return;
      observed = observed.plus(to - from);
      if (row.status === 'active') up = up.plus(to - from);
    });
    result[name] = observed.isZero() ? fallback : up.times(100).dividedBy(observed).toDecimalPlaces(2, Decimal.ROUND_HALF_UP).toFixed(2);
  }
  return result;
}

describe('GET /catalog/status and the status monitor', () => {
  it('shows public groups with models checking until the first probe, then active; unrouted models unavailable', async () => {
    const first = await restStatus();
    expectSpecShape(first);
    expect(first.groups.map((g: any) => [g.id, g.label])).toEqual([
      ['cheap', 'Cheap'],
      ['reserve', 'Reserve'],
    ]);
    expect(groupOf(first, 'cheap').models.map((m: any) => [m.id, m.label])).toEqual([
      ['gen-a', 'Gen A'],
      ['claude-b', 'Claude B'],
    ]);
    for (const model of groupOf(first, 'cheap').models) expect(model).toEqual({ id: model.id, label: model.label, status: 'checking', checked_at: null, history: [] });
    expect(groupOf(first, 'cheap').status).toBe('unavailable');

    const ready = await waitForStatus((body) => groupOf(body, 'cheap').models.every((m: any) => m.status === 'active'));
    openaiSim.setProbeLatency(0);
    anthropicSim.setProbeLatency(0);
    expectSpecShape(ready);
    const cheap = groupOf(ready, 'cheap');
    expect(cheap.status).toBe('active');
    for (const model of cheap.models) {
      expect(model.checked_at).not.toBeNull();
      expect(model.history[0]).toMatchObject({ status: 'active' });
      expect(new Date(model.history[0].observed_at).getTime()).toBeLessThanOrEqual(new Date(model.checked_at).getTime());
    }
    const reserve = groupOf(ready, 'reserve');
    expect(reserve.status).toBe('unavailable');
    expect(reserve.models).toEqual([{ id: 'spare-c', label: 'Spare C', status: 'unavailable', checked_at: expect.any(String), history: [{ observed_at: expect.any(String), status: 'unavailable' }] }]);

    // One cheap probe per upstream, with that kind's credentials.
    expect(openaiSim.probes[0]!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(anthropicSim.probes[0]!.headers).toMatchObject({ 'x-api-key': ANTHROPIC_KEY, 'anthropic-version': '2023-06-01' });
    expect(openaiSim.requests).toHaveLength(0);
    expect(anthropicSim.requests).toHaveLength(0);

    // The non-public group is neither probed on its own, shown, nor recorded.
    expect(await gw.db.query(`select 1 from model_status_checks where route_group = 'hidden-lane'`)).toHaveLength(0);
  });

  it('records changes only: probing on with nothing changing adds no history, but checked_at moves', async () => {
    const count = async () => Number((await gw.db.query<{ n: string }>(`select count(*) as n from model_status_checks`))[0]!.n);
    const checkedAt = async () => (await gw.db.query<{ checked_at: Date }>(`select checked_at from model_status_current where model = 'gen-a' and route_group = 'cheap'`))[0]!.checked_at;
    // Let the round still sleeping on the first test's slow probes finish, so the fast rounds are on.
    const warm = openaiSim.probes.length;
    await until(() => openaiSim.probes.length >= warm + 2, 'fast probe rounds');
    const rowsBefore = await count();
    const checkedBefore = await checkedAt();
    const probesBefore = openaiSim.probes.length;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(openaiSim.probes.length - probesBefore).toBeGreaterThanOrEqual(3);
    expect(await count()).toBe(rowsBefore);
    expect((await checkedAt()).getTime()).toBeGreaterThan(checkedBefore.getTime());
  });

  it('goes unavailable when upstreams go down and active when they return; a graphql-ws subscriber sees every change', async () => {
    const events: any[] = [];
    const client: Client = createClient({ url: gw.url.replace('http', 'ws') + '/graphql', webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
    const unsubscribe = client.subscribe<{ serviceStatusChanged: any }>(
      { query: 'subscription { serviceStatusChanged { subject groupId groupLabel modelId modelLabel status previousStatus observedAt } }' },
      { next: (message) => events.push(message.data!.serviceStatusChanged), error: (error) => events.push({ error }), complete: () => undefined },
    );
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));

      // One of two upstreams down: its model goes unavailable, the group stays active.
      openaiSim.setDown(true);
      let body = await waitForStatus((b) => modelOf(b, 'cheap', 'gen-a').status === 'unavailable');
      expect(modelOf(body, 'cheap', 'claude-b').status).toBe('active');
      expect(groupOf(body, 'cheap').status).toBe('active');
      await until(() => events.length >= 1, 'the gen-a event');
      expect(events).toEqual([
        { subject: 'model', groupId: 'cheap', groupLabel: 'Cheap', modelId: 'gen-a', modelLabel: 'Gen A', status: 'unavailable', previousStatus: 'active', observedAt: expect.any(String) },
      ]);

      // Both down: the group goes unavailable too.
      anthropicSim.setDown(true);
      body = await waitForStatus((b) => groupOf(b, 'cheap').status === 'unavailable');
      expect(groupOf(body, 'cheap').models.map((m: any) => m.status)).toEqual(['unavailable', 'unavailable']);
      await until(() => events.length >= 3, 'the claude-b and group events');
      expect(events.slice(1)).toEqual([
        { subject: 'model', groupId: 'cheap', groupLabel: 'Cheap', modelId: 'claude-b', modelLabel: 'Claude B', status: 'unavailable', previousStatus: 'active', observedAt: expect.any(String) },
        { subject: 'group', groupId: 'cheap', groupLabel: 'Cheap', modelId: null, modelLabel: null, status: 'unavailable', previousStatus: 'active', observedAt: expect.any(String) },
      ]);

      // Back up.
      openaiSim.setDown(false);
      anthropicSim.setDown(false);
      body = await waitForStatus((b) => groupOf(b, 'cheap').models.every((m: any) => m.status === 'active'));
      expect(groupOf(body, 'cheap').status).toBe('active');
      await until(() => events.length >= 6, 'the recovery events');
      const recovery = events.slice(3);
      expect(recovery.map((e) => [e.subject, e.modelId, e.status, e.previousStatus]).sort()).toEqual([
        ['group', null, 'active', 'unavailable'],
        ['model', 'claude-b', 'active', 'unavailable'],
        ['model', 'gen-a', 'active', 'unavailable'],
      ]);
      // A group change is published after the model change that causes it.
      const groupAt = recovery.findIndex((e) => e.subject === 'group');
      expect(recovery.findIndex((e) => e.subject === 'model')).toBeLessThan(groupAt);
      expect(events.every((e) => !e.error)).toBe(true);

      // History points in order: active, unavailable, active for both models.
      for (const model of groupOf(body, 'cheap').models) {
        expect(model.history.map((p: any) => p.status)).toEqual(['active', 'unavailable', 'active']);
        const times = model.history.map((p: any) => new Date(p.observed_at).getTime());
        expect([...times].sort((a, b) => a - b)).toEqual(times);
        expect(new Set(times).size).toBe(times.length);
      }
      // The group's own series recorded the same story.
      const groupRows = await gw.db.query<{ status: string }>(`select status from model_status_checks where model is null and route_group = 'cheap' order by observed_at, id`);
      expect(groupRows.map((r) => r.status)).toEqual(['active', 'unavailable', 'active']);
      seen.push(JSON.stringify(events));
    } finally {
      unsubscribe();
      await client.dispose();
    }
  });

  it('serves the same data over GraphQL (serviceStatus) and tRPC (status.get), without sign-in', async () => {
    const rest = await restStatus();
    const response = await fetch(`${gw.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: `{ serviceStatus { generatedAt groups { id label status uptime { allTime last24h last7d last30d }
                 models { id label status checkedAt history { observedAt status } } } } }`,
      }),
    });
    const text = await response.text();
    seen.push(text);
    const graph = JSON.parse(text);
    expect(graph.errors).toBeUndefined();
    const status = graph.data.serviceStatus;
    expect(new Date(status.generatedAt).toISOString()).toBe(status.generatedAt);
    const stable = (groups: any[], camel: boolean) =>
      groups.map((g) => ({
        id: g.id,
        label: g.label,
        status: g.status,
        uptimeKeys: Object.keys(g.uptime).length,
        models: g.models.map((m: any) => ({ id: m.id, label: m.label, status: m.status, history: m.history.map((p: any) => [camel ? p.observedAt : p.observed_at, p.status]) })),
      }));
    expect(stable(status.groups, true)).toEqual(stable(rest.groups, false));
    for (const group of status.groups) for (const value of Object.values(group.uptime)) expect(value).toMatch(PERCENT);

    const viaTrpc: any = await trpcClient(gw.url).status.get.query();
    seen.push(JSON.stringify(viaTrpc));
    expect(stable(viaTrpc.groups, true)).toEqual(stable(rest.groups, false));
  });

  it('computes group uptime per window from the recorded history, and keeps all-time uptime across pruning', async () => {
    const now = Date.now();
    const at = (ms: number) => new Date(now - ms).toISOString();
    // The reserve group has been unavailable since the gateway started (its model has no route); before
    // that, a known story is seeded. Rows older than 30 days get pruned below.
    const groupSeed: [number, string][] = [
      [45 * DAY, 'active'],
      [40 * DAY, 'unavailable'],
      [39 * DAY, 'active'],
      [20 * DAY, 'unavailable'],
      [19 * DAY + 12 * HOUR, 'active'],
      [3 * DAY, 'unavailable'],
      [2 * DAY + 18 * HOUR, 'active'],
      [5 * HOUR, 'unavailable'],
      [4 * HOUR + 30 * 60_000, 'active'],
    ];
    for (const [ago, status] of groupSeed) {
      await gw.db.query(`insert into model_status_checks (model, route_group, status, observed_at) values (null, 'reserve', $1, $2)`, [status, at(ago)]);
    }
    await gw.db.query(`insert into model_status_checks (model, route_group, status, observed_at) values ('spare-c', 'reserve', 'active', $1), ('spare-c', 'reserve', 'unavailable', $2), ('spare-c', 'reserve', 'active', $3)`, [
      at(30 * HOUR),
      at(5 * HOUR),
      at(4 * HOUR + 30 * 60_000),
    ]);
    const rows = await gw.db.query<{ status: string; observed_at: Date }>(`select status, observed_at from model_status_checks where model is null and route_group = 'reserve' order by observed_at, id`);
    expect(rows).toHaveLength(groupSeed.length + 1); // the seeded story, then the monitor's first observation

    await new Promise((resolve) => setTimeout(resolve, 1_100)); // past the status page's 1 s cache
    const body = await restStatus();
    const reserve = groupOf(body, 'reserve');
    expect(reserve.status).toBe('unavailable');
    const expected = expectedUptime(rows, new Date(body.generated_at), '0.00');
    expect(reserve.uptime).toEqual(expected);
    // Sanity of the arithmetic itself: the windows really differ.
    expect(new Set(Object.values(expected)).size).toBeGreaterThan(2);

    // History: the last 24 hours only, oldest first.
    const spare = modelOf(body, 'reserve', 'spare-c');
    expect(spare.history.map((p: any) => p.status)).toEqual(['unavailable', 'active', 'unavailable']);
    expect(spare.history[0].observed_at).toBe(at(5 * HOUR));
    expect(spare.history[1].observed_at).toBe(at(4 * HOUR + 30 * 60_000));

    // Pruning drops rows older than 30 days (keeping each series' last one) and folds their uptime in.
    const { deleted } = await gw.services.status.prune();
    expect(deleted).toBe(2);
    const left = await gw.db.query<{ observed_at: Date }>(`select observed_at from model_status_checks where model is null and route_group = 'reserve' order by observed_at`);
    expect(left).toHaveLength(rows.length - 2);
    expect(left[0]!.observed_at.toISOString()).toBe(at(39 * DAY));
    expect(await gw.db.query(`select route_group from model_status_uptime_rollups`)).toEqual([{ route_group: 'reserve' }]);
    expect((await gw.services.status.prune()).deleted).toBe(0);

    const after = await restStatus();
    expect(groupOf(after, 'reserve').uptime).toEqual(expectedUptime(rows, new Date(after.generated_at), '0.00'));
  });

  it('never shows upstream ids, hosts or credentials', () => {
    expect(seen.length).toBeGreaterThan(5);
    const all = seen.join('\n');
    for (const secret of [...UPSTREAM_IDS, OPENAI_KEY, ANTHROPIC_KEY, CANARY, '127.0.0.1', new URL(openaiSim.url).host, new URL(anthropicSim.url).host, 'hidden-lane', 'Hidden lane', 'status-openai', 'status-anthropic']) {
      expect(all).not.toContain(secret);
    }
  });
});

describe('status configuration', () => {
  it('reads STATUS_PROBE_SECONDS (fractions allowed, 0 disables) and STATUS_PROBE_TIMEOUT_MS', () => {
    expect(loadConfig({ NODE_ENV: 'test' }).status).toEqual({ probeIntervalMs: 60_000, probeTimeoutMs: 5_000 });
    expect(loadConfig({ NODE_ENV: 'test', STATUS_PROBE_SECONDS: '0.25', STATUS_PROBE_TIMEOUT_MS: '700' }).status).toEqual({ probeIntervalMs: 250, probeTimeoutMs: 700 });
    expect(loadConfig({ NODE_ENV: 'test', STATUS_PROBE_SECONDS: '0' }).status.probeIntervalMs).toBe(0);
    expect(() => loadConfig({ NODE_ENV: 'test', STATUS_PROBE_SECONDS: '-1' })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: 'test', STATUS_PROBE_TIMEOUT_MS: 'soon' })).toThrow(/STATUS_PROBE_TIMEOUT_MS/);
  });
});
