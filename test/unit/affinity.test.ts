import { describe, expect, it } from 'vitest';
import { affinityOrder, DEFAULT_BALANCE_FACTOR, hash32, type AffinityTarget } from '../../src/upstreams/affinity.js';

/** Consistent hashing with bounded load, measured on many keys (deterministic: fixed ids and keys). */

const idle = (ids: string[], weights?: number[]): AffinityTarget[] => ids.map((id, i) => ({ id, inFlight: 0, ...(weights ? { weight: weights[i] } : {}) }));
const KEYS = Array.from({ length: 10_000 }, (_, i) => `account-${i % 97}\u0000session-${i}`);
const IDS = ['cred-alpha', 'cred-bravo', 'cred-charlie', 'cred-delta', 'cred-echo'];

/** How many keys land first on each target. */
function firstCounts(targets: AffinityTarget[], keys = KEYS): number[] {
  const counts = targets.map(() => 0);
  for (const key of keys) counts[affinityOrder(key, targets)[0]!]!++;
  return counts;
}

const chiSquare = (counts: number[], expected: number[]) => counts.reduce((sum, count, i) => sum + (count - expected[i]!) ** 2 / expected[i]!, 0);

describe('affinityOrder', () => {
  it('answers every target once, the same way each time, whatever order the targets come in', () => {
    const targets = idle(IDS);
    for (const key of KEYS.slice(0, 200)) {
      const order = affinityOrder(key, targets);
      expect([...order].sort()).toEqual([0, 1, 2, 3, 4]);
      expect(affinityOrder(key, targets)).toEqual(order);
      // The same set in another order: the same ids in the same preference.
      const reversed = [...targets].reverse();
      expect(affinityOrder(key, reversed).map((i) => reversed[i]!.id)).toEqual(order.map((i) => targets[i]!.id));
    }
    expect(affinityOrder('k', [])).toEqual([]);
    expect(affinityOrder('k', [{ id: 'only', inFlight: 1_000 }])).toEqual([0]);
  });

  it('moves only the keys of a removed target, about 1/n of them, each to its second choice', () => {
    const before = idle(IDS);
    const after = before.filter((t) => t.id !== 'cred-charlie');
    let moved = 0;
    for (const key of KEYS) {
      const order = affinityOrder(key, before).map((i) => before[i]!.id);
      const now = after[affinityOrder(key, after)[0]!]!.id;
      if (order[0] === 'cred-charlie') {
        moved++;
        expect(now).toBe(order[1]);
      } else {
        expect(now).toBe(order[0]);
      }
    }
    const share = moved / KEYS.length;
    console.log(`[affinity] removing 1 of 5 targets moved ${(share * 100).toFixed(1)}% of 10k keys (ideal 20%)`);
    expect(share).toBeGreaterThan(0.14);
    expect(share).toBeLessThan(0.26);
    // Adding it back returns exactly those keys.
    let back = 0;
    for (const key of KEYS) if (before[affinityOrder(key, before)[0]!]!.id !== after[affinityOrder(key, after)[0]!]!.id) back++;
    expect(back).toBe(moved);
  });

  it('spreads keys evenly', () => {
    for (const ids of [IDS, [...IDS, 'cred-foxtrot', 'cred-golf', 'cred-hotel'], ['a', 'b']]) {
      const counts = firstCounts(idle(ids));
      const expected = KEYS.length / ids.length;
      const chi2 = chiSquare(counts, counts.map(() => expected));
      console.log(`[affinity] ${ids.length} targets, 10k keys: ${counts.join(' / ')} (chi-square ${chi2.toFixed(1)} on ${ids.length - 1} degrees of freedom)`);
      // A ring of 160 virtual nodes a target holds each share to within about ±8% (one standard deviation):
      // far looser than a uniform draw's chi-square, far tighter than a bad hash (which puts most keys on one or two targets).
      for (const count of counts) expect(Math.abs(count - expected) / expected).toBeLessThan(0.2);
      expect(chi2).toBeLessThan(0.02 * KEYS.length);
    }
  });

  it('bounds the load: a hot key spills over, and no target ever exceeds ceil(c × total / n)', () => {
    const ids = IDS.slice(0, 4);
    const loads = [0, 0, 0, 0];
    const targets = () => ids.map((id, i) => ({ id, inFlight: loads[i]! }));
    const home = affinityOrder('hot', targets())[0]!;
    let rng = 42;
    const random = () => ((rng = Math.imul(rng ^ (rng >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32;
    let total = 0;
    let maxSeen = 0;
    for (let step = 0; step < 2000; step++) {
      // Mostly the hot key, some other keys; now and then requests finish.
      const key = random() < 0.8 ? 'hot' : `cold-${step}`;
      const order = affinityOrder(key, targets());
      const chosen = order[0]!;
      const bound = Math.ceil((DEFAULT_BALANCE_FACTOR * (total + 1)) / ids.length);
      expect(loads[chosen]).toBeLessThan(bound);
      loads[chosen]!++;
      total++;
      for (const load of loads) expect(load).toBeLessThanOrEqual(Math.ceil((DEFAULT_BALANCE_FACTOR * total) / ids.length));
      maxSeen = Math.max(maxSeen, ...loads);
      if (random() < 0.45) {
        const busy = loads.flatMap((load, i) => (load > 0 ? [i] : []));
        const done = busy[Math.floor(random() * busy.length)]!;
        loads[done]!--;
        total--;
      }
    }
    expect(total).toBeGreaterThan(100); // the load really built up
    expect(maxSeen).toBeGreaterThan(total / ids.length); // and the hot key's home really was full
    // With no load, the hot key goes home again.
    expect(affinityOrder('hot', ids.map((id) => ({ id, inFlight: 0 })))[0]).toBe(home);
  });

  it('puts the targets under their bound first, in ring order, then the crowded ones', () => {
    const targets = idle(IDS);
    const key = KEYS[7]!;
    const ring = affinityOrder(key, targets);
    // Crowd the first two of the key's ring: they go to the end, in ring order.
    const crowded = targets.map((t, i) => ({ ...t, inFlight: i === ring[0] || i === ring[1] ? 10 : 1 }));
    expect(affinityOrder(key, crowded)).toEqual([...ring.slice(2), ring[0], ring[1]]);
    // One in flight on the home and on three others: the bound is ceil(1.25 × (4 + 1) / 5) = 2, so the home stays.
    const busyHome = targets.map((t, i) => ({ ...t, inFlight: i === ring[0] ? 1 : i === ring[4] ? 0 : 1 }));
    expect(affinityOrder(key, busyHome)[0]).toBe(ring[0]);
  });

  it('with minBound, keeps a key home until the floor however low the total load', () => {
    const ids = IDS.slice(0, 4);
    const loads = [0, 0, 0, 0];
    const targets = () => ids.map((id, i) => ({ id, inFlight: loads[i]! }));
    const home = affinityOrder('hot', targets())[0]!;
    // Without a floor the second request of the hot key already moves: ceil(1.25 × 2 / 4) = 1.
    loads[home] = 1;
    expect(affinityOrder('hot', targets())[0]).not.toBe(home);
    // With a floor of 6 it stays home for 6 requests in flight, then the bound of the published algorithm rules again.
    loads[home] = 0;
    for (let i = 0; i < 6; i++) {
      expect(affinityOrder('hot', targets(), DEFAULT_BALANCE_FACTOR, 6)[0]).toBe(home);
      loads[home]!++;
    }
    expect(affinityOrder('hot', targets(), DEFAULT_BALANCE_FACTOR, 6)[0]).not.toBe(home);
    loads.fill(10);
    loads[home] = 11; // total 41: bound ceil(1.25 × 42 / 4) = 14 > the floor
    expect(affinityOrder('hot', targets(), DEFAULT_BALANCE_FACTOR, 6)[0]).toBe(home);
  });

  it('honours weights on the ring and in the bound', () => {
    const ids = ['w-one', 'w-two', 'w-three'];
    const counts = firstCounts(idle(ids, [1, 2, 1]));
    console.log(`[affinity] weights 1/2/1, 10k keys: ${counts.join(' / ')}`);
    expect(counts[1]! / KEYS.length).toBeGreaterThan(0.43);
    expect(counts[1]! / KEYS.length).toBeLessThan(0.57);
    for (const i of [0, 2]) expect(Math.abs(counts[i]! / KEYS.length - 0.25)).toBeLessThan(0.06);

    // A weight-2 target may hold twice the in-flight requests of a weight-1 target before keys move on.
    const heavy = [0, 0, 0];
    for (let i = 0; i < 400; i++) heavy[affinityOrder('hot', ids.map((id, j) => ({ id, inFlight: heavy[j]!, weight: [1, 2, 1][j] })))[0]!]!++;
    expect(heavy[1]! / heavy[0]!).toBeGreaterThan(1.8);
    expect(heavy[1]! / heavy[2]!).toBeGreaterThan(1.8);

    // Weight 0 (a drained credential): never first while another can serve, always last.
    const drained = idle(ids, [1, 0, 1]);
    for (const key of KEYS.slice(0, 500)) {
      const order = affinityOrder(key, drained);
      expect(order[2]).toBe(1);
    }
    expect(affinityOrder('k', idle(ids, [0, 0, 0]))).toEqual([0, 1, 2]);
  });

  it('hashes well enough for ring positions', () => {
    // Keys differing in their last character land far apart: the high bits change too.
    const buckets = new Array(16).fill(0);
    for (let i = 0; i < 16_000; i++) buckets[hash32(`key-${i}`) >>> 28]++;
    for (const count of buckets) expect(Math.abs(count - 1000)).toBeLessThan(150);
    expect(hash32('a')).not.toBe(hash32('b'));
    expect(hash32('same')).toBe(hash32('same'));
  });

  it('micro-benchmark (printed, not asserted)', () => {
    for (const n of [2, 5, 16]) {
      const targets = Array.from({ length: n }, (_, i) => ({ id: `bench-credential-${i}`, inFlight: i % 3 }));
      const keys = KEYS.slice(0, 1000);
      for (let i = 0; i < 20_000; i++) affinityOrder(keys[i % 1000]!, targets);
      const calls = 300_000;
      const started = process.hrtime.bigint();
      let sink = 0;
      for (let i = 0; i < calls; i++) sink += affinityOrder(keys[i % 1000]!, targets)[0]!;
      const ns = Number(process.hrtime.bigint() - started) / calls;
      console.log(`[affinity] affinityOrder with ${n} targets: ${ns.toFixed(0)} ns per call (checksum ${sink})`);
    }
  });
});
