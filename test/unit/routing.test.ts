import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/shared/logging.js';
import { TargetHealth } from '../../src/upstreams/breaker.js';
import { UpstreamHealth, type HealthChange } from '../../src/upstreams/health.js';
import { DEFAULT_HEALTH, type Upstream } from '../../src/upstreams/model.js';
import { RouteTable } from '../../src/upstreams/routes.js';

const log = createLogger('silent');

function upstream(id: string, weight: number, options: { fallback?: string[]; priority?: number; credentials?: number; maxConcurrent?: number } = {}): Upstream {
  return {
    id,
    kind: 'openai-compatible',
    baseUrl: `http://${id}.internal/v1`,
    credentials: Array.from({ length: options.credentials ?? 1 }, (_, i) => ({ id: `c${i}`, label: `c${i}`, secret: `secret-${id}-${i}`, maxConcurrent: null })),
    timeouts: { connectMs: 1, firstByteMs: 1, idleMs: 1, keepAliveMs: 1 },
    nativeResponses: false,
    maxConcurrent: options.maxConcurrent ?? 32,
    routes: [{ model: 'm', group: 'cheap', upstreamModel: id === 'b' ? 'b-model' : 'm', weight, priority: options.priority ?? 0 }],
    fallback: options.fallback ?? [],
    prices: {},
    health: DEFAULT_HEALTH,
  };
}

/** A clock the test moves. */
function clock(start = 1_000_000) {
  const c = { now: start, tick: (ms: number) => (c.now += ms) };
  return c;
}

const any = () => true;

describe('route order', () => {
  it('picks by weight, then tries the first choice’s fallbacks in order, then the rest', () => {
    const sequence = [0.0, 0.1, 0.5]; // by weight alone: a, b, c
    let call = 0;
    const table = new RouteTable([upstream('a', 1, { fallback: ['c'] }), upstream('b', 1), upstream('c', 1)], new UpstreamHealth({ log }), () => sequence[call++ % sequence.length]!);
    const order = table.candidates('m', 'cheap').map((r) => `${r.upstream.id}:${r.upstreamModel}`);
    expect(order).toEqual(['a:m', 'c:m', 'b:b-model']);
    expect(table.candidates('m', 'other')).toEqual([]);
    expect(table.candidates('unknown', 'cheap')).toEqual([]);
  });

  it('shares traffic in proportion to weight, and a pool’s credentials share their upstream’s weight', () => {
    const table = new RouteTable([upstream('a', 3, { credentials: 3 }), upstream('b', 1)], new UpstreamHealth({ log }));
    const firsts = Array.from({ length: 4_000 }, () => table.choose('m', 'cheap', any).routes[0]!);
    const share = firsts.filter((r) => r.upstream.id === 'a').length / firsts.length;
    expect(share).toBeGreaterThan(0.7);
    expect(share).toBeLessThan(0.8);
    const perCredential = ['c0', 'c1', 'c2'].map((id) => firsts.filter((r) => r.upstream.id === 'a' && r.credential.id === id).length / firsts.length);
    for (const part of perCredential) expect(part).toBeGreaterThan(0.2);
  });

  it('uses a lower priority only when every route of the higher one is out', () => {
    const c = clock();
    const health = new UpstreamHealth({ log, now: () => c.now });
    const table = new RouteTable([upstream('main', 1, { priority: 10, credentials: 2 }), upstream('spare', 100, { priority: 0 })], health);
    for (let i = 0; i < 200; i++) expect(table.choose('m', 'cheap', any).routes[0]!.upstream.id).toBe('main');
    // The spare is still the failover of a request, after both of main's credentials.
    expect(table.choose('m', 'cheap', any).routes.map((r) => r.upstream.id)).toEqual(['main', 'main', 'spare']);
    const [one, two] = table.routesOf('m', 'cheap');
    openBreaker(health, one!.health, c);
    expect(table.choose('m', 'cheap', any)).toMatchObject({ allowed: 2, routes: [{ upstream: { id: 'main' }, credential: two!.credential }, { upstream: { id: 'spare' } }, { upstream: { id: 'main' }, credential: one!.credential }] });
    openBreaker(health, two!.health, c);
    expect(table.choose('m', 'cheap', any).routes.slice(0, 1).map((r) => r.upstream.id)).toEqual(['spare']);
  });

  it('when every route is out, still tries the one that failed longest ago (a blip of an only upstream is no outage)', () => {
    const c = clock();
    const health = new UpstreamHealth({ log, now: () => c.now });
    const table = new RouteTable([upstream('a', 1), upstream('b', 1)], health);
    const [a, b] = table.routesOf('m', 'cheap');
    openBreaker(health, a!.health, c);
    c.tick(100);
    openBreaker(health, b!.health, c);
    const choice = table.choose('m', 'cheap', any);
    expect(choice).toMatchObject({ allowed: 0, busy: false });
    expect(choice.routes.map((r) => r.upstream.id)).toEqual(['a', 'b']);
    // The forced try answers: that route is closed again and takes traffic at once.
    const attempt = health.begin(a!.health, 'p', true, () => undefined)!;
    health.answered(attempt);
    health.end(attempt, 'ok');
    expect(table.choose('m', 'cheap', any)).toMatchObject({ allowed: 1, routes: [{ upstream: { id: 'a' } }, { upstream: { id: 'b' } }] });
  });

  it('skips a route at its concurrency limit; when every route is full, one still answering serves, a stuck one never', async () => {
    const health = new UpstreamHealth({ log });
    const quick = { ...DEFAULT_HEALTH, stallMs: 50 };
    const table = new RouteTable([{ ...upstream('a', 1, { maxConcurrent: 2 }), health: quick }, { ...upstream('b', 1, { maxConcurrent: 1 }), health: quick }], health);
    const [a, b] = table.routesOf('m', 'cheap');
    const waiting = [health.begin(a!.health, 'p', false, () => undefined)!, health.begin(a!.health, 'p', false, () => undefined)!];
    expect(table.choose('m', 'cheap', any).routes.map((r) => r.upstream.id)).toEqual(['b']);
    waiting.push(health.begin(b!.health, 'p', false, () => undefined)!);
    // Both full, both answering (nothing has waited past the stall threshold yet): a healthy upstream is not capped.
    expect(table.choose('m', 'cheap', any).routes.map((r) => r.upstream.id).sort()).toEqual(['a', 'b']);
    await new Promise((resolve) => setTimeout(resolve, 450));
    // Now their requests have waited past it: full and stuck, the model is busy rather than taking more slots.
    expect(table.choose('m', 'cheap', any)).toEqual({ routes: [], allowed: 0, busy: true });
    for (const attempt of waiting) health.end(attempt, 'none');
    expect(table.choose('m', 'cheap', any).routes).toHaveLength(2);
    health.close();
  });
});

/** Five failures in a row: the default breaker opens. */
function openBreaker(health: UpstreamHealth, target: TargetHealth, c: { tick(ms: number): number }) {
  for (let i = 0; i < DEFAULT_HEALTH.minFailures; i++) {
    const attempt = health.begin(target, 'p', false, () => undefined)!;
    c.tick(1);
    health.end(attempt, 'failure');
  }
}

describe('circuit breaker', () => {
  const settings = { ...DEFAULT_HEALTH, windowMs: 10_000, minFailures: 3, failureRate: 0.5, cooldownMs: 1_000, maxCooldownMs: 4_000 };

  it('opens at enough failures in the window, sends one probe after the cool-down, closes when it answers', () => {
    const t = new TargetHealth('u/c', 'u', 'c', settings);
    let now = 0;
    const run = (verdict: 'ok' | 'failure') => t.settle(now, t.claim(now, false)!, verdict);
    run('ok');
    run('failure');
    run('failure');
    expect(run('failure')).toBe('open'); // 3 failures of 4
    expect(t.available(now)).toBe(false);
    now += 999;
    expect(t.state(now)).toBe('open');
    now += 1;
    expect(t.state(now)).toBe('half_open');
    const probe = t.claim(now, false)!;
    expect(probe).toEqual({ probe: true, forced: false });
    expect(t.claim(now, false)).toBe(null); // only one
    expect(t.settle(now, probe, 'failure')).toBe('open');
    now += 1_999;
    expect(t.state(now)).toBe('open'); // cool-down doubled
    now += 1;
    expect(t.settle(now, t.claim(now, false)!, 'ok')).toBe('closed');
    expect(t.available(now)).toBe(true);
  });

  it('does not open below the failure rate, and forgets failures older than the window', () => {
    const t = new TargetHealth('u/c', 'u', 'c', settings);
    let now = 0;
    for (let i = 0; i < 10; i++) {
      t.settle(now, t.claim(now, false)!, i % 3 === 0 ? 'failure' : 'ok'); // 4 of 10 failed
    }
    expect(t.state(now)).toBe('closed');
    t.settle(now, t.claim(now, false)!, 'failure'); // 5 of 11
    expect(t.state(now)).toBe('closed');
    now += 11_000; // all of the above forgotten
    expect(t.settle(now, t.claim(now, false)!, 'failure')).toBe(null);
    expect(t.state(now)).toBe('closed');
  });

  it('pauses a credential for its retry-after, and one refused with 401/403 until it is tried again', () => {
    const t = new TargetHealth('u/c', 'u', 'c', settings);
    expect(t.settle(0, t.claim(0, false)!, 'rate_limited', 30_000)).toBe('rate_limited');
    expect(t.available(29_999)).toBe(false);
    expect(t.available(30_000)).toBe(true);
    expect(t.settle(30_000, t.claim(30_000, false)!, 'auth_failed')).toBe('auth_failed');
    expect(t.state(30_001)).toBe('auth_failed');
  });

  it('last-resort tries of a route that is out, and repeated pauses, say so once (not once per request)', () => {
    const t = new TargetHealth('u/c', 'u', 'c', settings);
    let now = 0;
    for (let i = 0; i < 2; i++) t.settle(now, t.claim(now, false)!, 'failure');
    expect(t.settle(now, t.claim(now, false)!, 'failure')).toBe('open');
    for (let i = 0; i < 5; i++) expect(t.settle((now += 10), t.claim(now, true)!, 'failure')).toBe(null);
    expect(t.state(now)).toBe('open');
    expect(t.settle((now += 10), t.claim(now, true)!, 'ok')).toBe('closed');
    expect(t.settle(now, t.claim(now, false)!, 'rate_limited', 5_000)).toBe('rate_limited');
    expect(t.settle(now + 1, t.claim(now + 1, true)!, 'rate_limited', 9_000)).toBe(null);
    expect(t.available(now + 5_001)).toBe(false); // the longer pause is kept
    expect(t.available(now + 9_001)).toBe(true);
  });

  it('adopts what another process learned', () => {
    const t = new TargetHealth('u/c', 'u', 'c', settings);
    t.adopt('open', 5_000, 0);
    expect(t.available(4_999)).toBe(false);
    expect(t.state(5_000)).toBe('half_open');
    t.adopt('closed', 0, 5_000);
    expect(t.available(5_000)).toBe(true);
  });
});

describe('stalls', () => {
  it('a request unanswered while a peer answers later ones is a stall: its target gets nothing new, and when the breaker opens the stalled ones are abandoned', async () => {
    const changes: HealthChange[] = [];
    const published: HealthChange[] = [];
    const health = new UpstreamHealth({ log, publish: (change) => published.push(change) });
    health.onChange((change) => changes.push(change));
    const table = new RouteTable([{ ...upstream('hung', 1), health: { ...DEFAULT_HEALTH, stallMs: 100, minFailures: 3 } }, upstream('fine', 1)], health);
    const [hung, fine] = table.routesOf('m', 'cheap');
    const abandoned: number[] = [];
    const stuck = [0, 1, 2].map((i) => health.begin(hung!.health, 'p', false, () => abandoned.push(i))!);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // A later request to the peer answers.
    const quick = health.begin(fine!.health, 'p', false, () => undefined)!;
    health.answered(quick);
    health.end(quick, 'ok');
    // A request with no peer answer after it is never a stall, however long it waits.
    const alone = health.begin(hung!.health, 'other-model', false, () => undefined)!;
    await new Promise((resolve) => setTimeout(resolve, 450));
    expect(stuck.every((a) => a.stalled)).toBe(true);
    expect(alone.stalled).toBe(false);
    expect(abandoned.sort()).toEqual([0, 1, 2]);
    expect(stuck.every((a) => a.abandoned)).toBe(true);
    expect(changes).toEqual([{ upstreamId: 'hung', credentialId: 'c0', state: 'open', until: expect.any(Number) }]);
    expect(published).toEqual(changes);
    expect(table.choose('m', 'cheap', any)).toMatchObject({ allowed: 1, routes: [{ upstream: { id: 'fine' } }, { upstream: { id: 'hung' } }] });
    // The abandoned requests end as failures, not counted twice.
    for (const a of stuck) health.end(a, 'failure');
    health.end(alone, 'none');
    expect(hung!.health.inFlight).toBe(0);
    expect(health.inFlightOf('hung')).toBe(0);
    health.close();
  });
});
