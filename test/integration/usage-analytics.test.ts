import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Decimal } from 'decimal.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsageRecord } from '../../src/usage/usage-recorder.js';
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { newFundedAccount } from '../helpers/accounts.js';
import { http } from '../helpers/clients.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let sim: Simulator;
let gw: TestGateway;
let dir: string;
let me: Awaited<ReturnType<typeof newFundedAccount>>;
let other: Awaited<ReturnType<typeof newFundedAccount>>;
const requestIds: string[] = [];

/** Sums of raw event rows, computed here in JS: the reference for the service's rollup-based figures. */
function reference(rows: Record<string, any>[]): { requests: number; spend: Decimal; input: number; output: number; cacheRead: number; cacheWrite: number; gateway: Decimal; official: Decimal; saved: Decimal; comparable: number } {
  const comparable = rows.filter((r) => r.official_cost_usd !== null);
  const spend = rows.reduce<Decimal>((s, r) => s.plus(r.amount_usd), new Decimal(0));
  const gateway = comparable.reduce<Decimal>((s, r) => s.plus(r.amount_usd), new Decimal(0));
  const official = comparable.reduce<Decimal>((s, r) => s.plus(r.official_cost_usd), new Decimal(0));
  const sum = (key: string) => rows.reduce((s, r) => s + (r[key] ?? 0), 0);
  return {
    requests: rows.length,
    spend,
    input: sum('prompt_tokens'),
    output: sum('completion_tokens'),
    cacheRead: sum('cache_read_tokens'),
    cacheWrite: sum('cache_write_tokens'),
    gateway,
    official,
    saved: official.minus(gateway),
    comparable: comparable.length,
  };
}

beforeAll(async () => {
  sim = await startSimulator({ apiKey: 'usage-upstream-secret' });
  dir = await mkdtemp(path.join(tmpdir(), 'baikal-usage-'));
  const chat = ['gen-5.6-luna', 'zeta-5.2', 'delta-4.5'];
  await writeFile(
    path.join(dir, 'baikal.json'),
    JSON.stringify({
      leaderboard: { timezone: 'Asia/Irkutsk', prize: 'A Baikal mug' },
      upstreams: [{ id: 'sim', kind: 'openai-compatible', baseUrl: `${sim.url}/v1`, credentialEnv: 'USAGE_UPSTREAM_KEY', routes: [{ group: 'cheap', models: chat }] }],
    }),
  );
  gw = await startTestGateway({ BAIKAL_CONFIG: path.join(dir, 'baikal.json'), USAGE_UPSTREAM_KEY: 'usage-upstream-secret', VIDEO_WORKERS: '0' });
  me = await newFundedAccount(gw, '10');
  other = await newFundedAccount(gw, '10');
  // Usage through the real inference path: two families, several models, cache hits, a failure.
  const keyA = (await http(gw.url, 'POST', '/keys', { token: me.token, body: { provider_family: 'family_a' } })).body.key;
  const keyC = (await http(gw.url, 'POST', '/keys', { token: me.token, body: { provider_family: 'family_c' } })).body.key;
  const calls: [string, string, string][] = [
    [keyA, 'gen-5.6-luna', 'one [sim:words=5 cached=2]'],
    [keyA, 'gen-5.6-luna', 'two [sim:words=7]'],
    [keyA, 'zeta-5.2', 'three [sim:words=3]'],
    [keyC, 'delta-4.5', 'four [sim:words=9 cached=1]'],
    [keyA, 'gen-5.6-luna', 'five [sim:status=500]'],
  ];
  for (const [key, model, content] of calls) {
    const rid = `usage-${randomUUID()}`;
    requestIds.push(rid);
    await new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 }).chat.completions.create({ model, messages: [{ role: 'user', content }] }, { headers: { 'x-request-id': rid } }).catch(() => undefined);
  }
  const otherKey = (await http(gw.url, 'POST', '/keys', { token: other.token, body: {} })).body.key;
  await new OpenAI({ apiKey: otherKey, baseURL: `${gw.url}/v1`, maxRetries: 0 }).chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'theirs [sim:words=50]' }] });
  await gw.services.usage.flush();
});

afterAll(async () => {
  await gw?.close();
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

const rawRows = (userId: string, where = 'true', params: unknown[] = []) =>
  gw.db.query<Record<string, any>>(`select * from usage_events where user_id = $1 and ${where} order by created_at desc, id desc`, [userId, ...params]);

describe('GET /usage', () => {
  it('lists own events newest first with every SPEC field, and filters by model, group, status, family, time and limit', async () => {
    const all = await http(gw.url, 'GET', '/usage', { token: me.token });
    expect(all.status).toBe(200);
    expect(all.body.limit).toBe(50);
    expect(all.body.items.map((e: any) => e.request_id)).toEqual([...requestIds].reverse());
    // Event ids are UUIDv7 (their B-tree grows at its end): newest first by time is newest first by the ids' milliseconds.
    const ids: string[] = all.body.items.map((e: any) => e.id);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const millis = ids.map((id) => id.replaceAll('-', '').slice(0, 12));
    expect(millis).toEqual([...millis].sort().reverse());
    expect(Object.keys(all.body.items[0]).sort()).toEqual(
      [
        'amount_usd', 'cache_hit_ratio', 'cache_read_tokens', 'cache_write_tokens', 'client_surface', 'completed_at', 'completion_tokens', 'created_at', 'endpoint', 'error_code',
        'id', 'latency_ms', 'model', 'official_cost_usd', 'prompt_tokens', 'provider_family', 'public_cache_read_usd_per_1m', 'public_cache_write_usd_per_1m',
        'public_input_usd_per_1m', 'public_output_usd_per_1m', 'public_request_usd_per_generation', 'request_id', 'route_group', 'route_group_label', 'saved_usd', 'status', 'total_tokens',
      ].sort(),
    );
    const query = async (q: string) => (await http(gw.url, 'GET', `/usage?${q}`, { token: me.token })).body.items.map((e: any) => e.request_id);
    expect(await query('model=gen-5.6-luna')).toEqual((await rawRows(me.userId, `model = $2`, ['gen-5.6-luna'])).map((r) => r.request_id));
    expect(await query('status=error')).toEqual([requestIds[4]]);
    expect(await query('provider_family=family_c')).toEqual([requestIds[3]]);
    expect(await query('group=cheap')).toHaveLength(5);
    expect(await query('limit=2')).toEqual([requestIds[4], requestIds[3]]);
    const third = (await rawRows(me.userId)).find((r) => r.request_id === requestIds[2])!;
    expect(await query(`from=${encodeURIComponent(new Date(third.created_at).toISOString())}`)).toEqual([requestIds[4], requestIds[3], requestIds[2]]);
    expect(await query(`to=${encodeURIComponent(new Date(third.created_at).toISOString())}`)).toEqual([requestIds[1], requestIds[0]]);
  });

  it('refuses bad filters with 422 and locations; one event by request id, own only', async () => {
    const bad = await http(gw.url, 'GET', '/usage?limit=0&from=yesterday&status=meh&color=red', { token: me.token });
    expect(bad.status).toBe(422);
    // An unknown parameter is ignored, as FastAPI and the other REST lists do (a cache-busting `_=` must not break a list).
    expect(bad.body.detail.map((d: any) => d.loc.join('.')).sort()).toEqual(['query.from', 'query.limit', 'query.status']);
    expect((await http(gw.url, 'GET', '/usage?_=1732700000000', { token: me.token })).status).toBe(200);
    // Date-times as pydantic takes them: a date alone (its midnight UTC), no offset (UTC), Unix seconds; an impossible day is 422.
    for (const from of ['2026-11-01', '2026-11-01T10:00:00', '2026-11-01 10:00', '1700000000']) {
      const lenient = await http(gw.url, 'GET', `/usage/summary?from=${encodeURIComponent(from)}`, { token: me.token });
      expect([from, lenient.status]).toEqual([from, 200]);
    }
    const impossible = await http(gw.url, 'GET', '/usage/summary?from=2026-02-30', { token: me.token });
    expect(impossible.body.detail).toEqual([{ loc: ['query', 'from'], msg: 'Input should be a valid datetime', type: 'datetime_format' }]);
    expect((await http(gw.url, 'GET', '/usage?limit=201', { token: me.token })).status).toBe(422);
    expect((await http(gw.url, 'GET', '/usage')).status).toBe(401);

    const one = await http(gw.url, 'GET', `/usage/${requestIds[0]}`, { token: me.token });
    expect(one.body).toMatchObject({ request_id: requestIds[0], model: 'gen-5.6-luna', status: 'success', cache_read_tokens: 2 });
    expect((await http(gw.url, 'GET', `/usage/${requestIds[0]}`, { token: other.token })).status).toBe(404);
  });
});

describe('GET /usage/summary and /usage/timeseries', () => {
  it('totals, average, savings, by_model and by_group equal the sums of the raw events', async () => {
    const rows = await rawRows(me.userId);
    const ref = reference(rows);
    const summary = (await http(gw.url, 'GET', '/usage/summary', { token: me.token })).body;
    expect(summary).toMatchObject({
      total_requests: ref.requests,
      total_input_tokens: ref.input,
      total_output_tokens: ref.output,
      total_cache_read_tokens: ref.cacheRead,
      total_cache_write_tokens: ref.cacheWrite,
      savings_comparable_requests: ref.comparable,
    });
    expect(new Decimal(summary.total_spend_usd).equals(ref.spend)).toBe(true);
    expect(new Decimal(summary.avg_cost_per_request_usd).equals(ref.spend.dividedBy(ref.requests).toDecimalPlaces(10, Decimal.ROUND_HALF_EVEN))).toBe(true);
    expect(new Decimal(summary.savings_gateway_cost_usd).equals(ref.gateway)).toBe(true);
    expect(new Decimal(summary.savings_official_cost_usd).equals(ref.official)).toBe(true);
    expect(new Decimal(summary.savings_saved_usd).equals(ref.saved)).toBe(true);
    expect(summary.savings_saved_percent).toBe(ref.saved.dividedBy(ref.official).times(100).toFixed(2));
    for (const model of ['gen-5.6-luna', 'zeta-5.2', 'delta-4.5']) {
      const mref = reference(rows.filter((r) => r.model === model));
      expect(summary.by_model[model]).toMatchObject({ requests: mref.requests, input_tokens: mref.input, output_tokens: mref.output });
      expect(new Decimal(summary.by_model[model].spend_usd).equals(mref.spend)).toBe(true);
    }
    expect(summary.by_group.cheap).toMatchObject({ label: 'Cheap', requests: ref.requests });

    // A window whose edges are not on the hour: rollups inside, raw events at the edges, same figures.
    const newest = new Date(rows[0]!.created_at).getTime();
    const from = new Date(newest - 90 * 60_000 - 123).toISOString();
    const to = new Date(newest + 1).toISOString();
    const windowed = (await http(gw.url, 'GET', `/usage/summary?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`, { token: me.token })).body;
    expect(windowed.total_requests).toBe(ref.requests);
    expect(new Decimal(windowed.total_spend_usd).equals(ref.spend)).toBe(true);
    const none = (await http(gw.url, 'GET', `/usage/summary?to=${encodeURIComponent(new Date(newest - 86_400_000).toISOString())}`, { token: me.token })).body;
    expect(none).toMatchObject({ total_requests: 0, total_spend_usd: '0', by_model: {} });
  });

  it('the far edges of time are ranges like any other (no 500): year 9999, year 1, offsets past midnight', async () => {
    const rows = await rawRows(me.userId);
    const ref = reference(rows);
    const q = (path: string, params: Record<string, string>) => http(gw.url, 'GET', `${path}?${new URLSearchParams(params)}`, { token: me.token });
    for (const from of ['9999-12-31T23:59:59Z', '9999-12-31T23:59:59-14:00', '9999-12-31T23:00:00.5Z']) {
      const late = await q('/usage/summary', { from });
      expect([from, late.status, late.body.total_requests]).toEqual([from, 200, 0]);
      expect((await q('/usage', { from })).body.items).toEqual([]);
    }
    for (const [from, to] of [['0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z'], ['0001-01-01T00:00:00+14:00', '9999-12-31T23:59:59.999-14:00']]) {
      const all = await q('/usage/summary', { from: from!, to: to! });
      expect([from, all.status, all.body.total_requests]).toEqual([from, 200, ref.requests]);
      const series = await q('/usage/timeseries', { bucket: 'day', from: from!, to: to! });
      expect([from, series.status, series.body.detail?.[0]?.loc]).toEqual([from, 422, ['query', 'bucket']]);
    }
    const lastDay = await q('/usage/timeseries', { bucket: 'hour', from: '9999-12-30T00:00:00Z', to: '9999-12-31T23:59:59Z' });
    expect(lastDay.status).toBe(200);
    expect(lastDay.body.points.length).toBeGreaterThanOrEqual(24);
    expect(lastDay.body.points.every((p: any) => p.requests === 0)).toBe(true);
  });

  it('timeseries: every bucket present (zeros for empty ones), sums equal the events, filters apply, bad ranges are 422', async () => {
    const rows = await rawRows(me.userId);
    const newest = new Date(rows[0]!.created_at).getTime();
    const from = new Date(newest - 10 * 60_000).toISOString();
    const to = new Date(newest + 60_000).toISOString();
    const series = (await http(gw.url, 'GET', `/usage/timeseries?bucket=minute&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`, { token: me.token })).body;
    expect(series.bucket).toBe('minute');
    expect(series.points.length).toBeGreaterThanOrEqual(11);
    expect(series.points.some((p: any) => p.requests === 0 && p.spend_usd === '0' && p.input_tokens === 0)).toBe(true);
    const times = series.points.map((p: any) => Date.parse(p.ts));
    expect(times.every((t: number, i: number) => i === 0 || t - times[i - 1] === 60_000)).toBe(true);
    const ref = reference(rows);
    expect(series.points.reduce((s: number, p: any) => s + p.requests, 0)).toBe(ref.requests);
    expect(series.points.reduce((s: Decimal, p: any) => s.plus(p.spend_usd), new Decimal(0)).equals(ref.spend)).toBe(true);

    const hourly = (await http(gw.url, 'GET', `/usage/timeseries?bucket=hour&model=zeta-5.2&from=${encodeURIComponent(new Date(newest - 5 * 3_600_000).toISOString())}&to=${encodeURIComponent(to)}`, { token: me.token })).body;
    expect(hourly.points.length).toBeGreaterThanOrEqual(5);
    expect(hourly.points.reduce((s: number, p: any) => s + p.requests, 0)).toBe(1);
    const daily = (await http(gw.url, 'GET', `/usage/timeseries?bucket=day&provider_family=family_c&from=${encodeURIComponent(new Date(newest - 3 * 86_400_000).toISOString())}&to=${encodeURIComponent(to)}`, { token: me.token })).body;
    expect(daily.points.reduce((s: number, p: any) => s + p.output_tokens, 0)).toBe(9);

    const reversed = await http(gw.url, 'GET', `/usage/timeseries?from=${encodeURIComponent(to)}&to=${encodeURIComponent(from)}`, { token: me.token });
    expect(reversed.status).toBe(422);
    const tooMany = await http(gw.url, 'GET', `/usage/timeseries?bucket=minute&from=2026-01-01T00:00:00Z&to=2026-01-05T00:00:00Z`, { token: me.token });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.detail[0].loc).toEqual(['query', 'bucket']);
    expect((await http(gw.url, 'GET', '/usage/timeseries', { token: me.token })).status).toBe(422);
  });
});

describe('GraphQL usage queries', () => {
  /** Counts the SQL statements the gateway sends while `fn` runs, by the tables they read. */
  async function countingQueries(fn: () => Promise<unknown>): Promise<{ events: number; keys: number }> {
    const connection = gw.database.orm.em.getConnection() as unknown as { execute: (...args: unknown[]) => Promise<unknown> };
    const original = connection.execute;
    const seen = { events: 0, keys: 0 };
    connection.execute = function (this: unknown, ...args: unknown[]) {
      const sql = String(args[0]);
      if (/from usage_events/.test(sql)) seen.events += 1;
      if (/from api_keys/.test(sql)) seen.keys += 1;
      return original.apply(this, args);
    };
    try {
      await fn();
    } finally {
      connection.execute = original;
    }
    return seen;
  }
  const page = (limit: number) => http(gw.url, 'POST', '/graphql', { token: me.token, body: { query: `{ usage(limit: ${limit}) { requestId model amountUsd apiKey { id label } } }` } });

  it('a page of events with their keys costs the same number of queries for 2 rows as for 5 (dataloader)', async () => {
    const small = await countingQueries(() => page(2));
    const large = await countingQueries(() => page(5));
    expect(small).toEqual({ events: 1, keys: 1 });
    expect(large).toEqual(small);
    const body = (await page(5)).body;
    expect(body.data.usage).toHaveLength(5);
    expect(new Set(body.data.usage.map((u: any) => u.apiKey.id)).size).toBe(2);
  });

  it('serves the summary, timeseries and leaderboard with the REST figures', async () => {
    const rest = (await http(gw.url, 'GET', '/usage/summary', { token: me.token })).body;
    const gql = (await http(gw.url, 'POST', '/graphql', { token: me.token, body: { query: '{ usageSummary { totals { requests spendUsd savedUsd } byModel { key totals { requests } } } leaderboard(limit: 3) { timezone items { rank } } }' } })).body;
    expect(gql.data.usageSummary.totals).toEqual({ requests: rest.total_requests, spendUsd: rest.total_spend_usd, savedUsd: rest.savings_saved_usd });
    expect(gql.data.usageSummary.byModel.map((m: any) => m.key).sort()).toEqual(Object.keys(rest.by_model).sort());
    expect(gql.data.leaderboard.timezone).toBe('Asia/Irkutsk');
  });
});

describe('GET /leaderboard/daily', () => {
  function event(userId: string, createdAt: Date, tokens: number): UsageRecord {
    return {
      id: randomUUID(), userId, apiKeyId: null, requestId: `lb-${randomUUID()}`, clientSurface: 'api', createdAt, completedAt: createdAt, providerFamily: 'family_a',
      routeGroup: 'cheap', routeGroupLabel: 'Cheap', endpoint: '/v1/chat/completions', model: 'gen-5.6-luna', status: 'success', errorCode: null, latencyMs: 5,
      promptTokens: tokens, completionTokens: 0, cacheReadTokens: null, cacheWriteTokens: null, totalTokens: tokens, cacheHitRatio: null, publicInputUsdPer1m: '0.016',
      publicOutputUsdPer1m: '0.04', publicCacheReadUsdPer1m: null, publicCacheWriteUsdPer1m: null, publicRequestUsdPerGeneration: null, amountUsd: '0', officialCostUsd: '0.0001',
      savedUsd: '0.0001', upstreamId: null,
    };
  }

  it('ranks the day in the configured time zone (Irkutsk, UTC+8): usage just before local midnight counts for that day only', async () => {
    const a = await newFundedAccount(gw, '1');
    const b = await newFundedAccount(gw, '1');
    // 2030-03-10 23:50 and 2030-03-11 00:10 in Irkutsk.
    const beforeMidnight = new Date('2030-03-10T15:50:00Z');
    const afterMidnight = new Date('2030-03-10T16:10:00Z');
    gw.services.usage.record(event(a.userId, beforeMidnight, 5_000));
    gw.services.usage.record(event(b.userId, beforeMidnight, 1_000));
    gw.services.usage.record(event(b.userId, afterMidnight, 7_000));
    await gw.services.usage.flush();

    const day1 = await gw.services.analytics.leaderboard(a.actor, {}, new Date('2030-03-10T10:00:00Z'));
    expect(day1).toMatchObject({ date: '2030-03-10', timezone: 'Asia/Irkutsk', prize: 'A Baikal mug', totalTokens: 6_000 });
    expect(day1.items.map((i) => [i.rank, i.tokens, i.isMe])).toEqual([[1, 5_000, true], [2, 1_000, false]]);
    expect(day1.me).toMatchObject({ rank: 1, tokens: 5_000, isMe: true });
    expect(day1.items[0]!.user).toBe(`${a.input.username.slice(0, 2)}***${a.input.username.slice(-1)}`);
    expect(day1.items[0]!.user).not.toContain(a.input.username);

    const day2 = await gw.services.analytics.leaderboard(a.actor, {}, new Date('2030-03-11T01:00:00Z'));
    expect(day2).toMatchObject({ date: '2030-03-11', totalTokens: 7_000, me: null });
    expect(day2.items).toHaveLength(1);

    const today = await http(gw.url, 'GET', '/leaderboard/daily?limit=1', { token: me.token });
    expect(today.status).toBe(200);
    expect(today.body).toMatchObject({ timezone: 'Asia/Irkutsk', prize: 'A Baikal mug' });
    expect(today.body.items.length).toBeLessThanOrEqual(1);
    expect((await http(gw.url, 'GET', '/leaderboard/daily?limit=101')).status).toBe(422);
  });
});
