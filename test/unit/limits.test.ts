import { describe, expect, it } from 'vitest';
import { Limiter } from '../../src/inference/limits.js';
import { DomainError } from '../../src/shared/errors.js';

const none = { rpmLimit: null, concurrencyLimit: null };
/** A key of its own account (the per-account limit is tested on its own). */
const subject = (keyId: string, overrides: { rpmLimit: number | null; concurrencyLimit: number | null }) => ({ keyId, userId: `account-of-${keyId}`, accountConcurrencyLimit: null, ...overrides });

function refusal(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('Limiter', () => {
  it('bounds requests in flight per account across its keys (issue 22): 6 keys x 8 of one account stop at 16; others still get in', () => {
    const limiter = new Limiter();
    const held = [];
    const refusals: string[] = [];
    for (let key = 0; key < 6; key++) {
      for (let i = 0; i < 8; i++) {
        try {
          held.push(limiter.acquire({ keyId: `greedy-${key}`, userId: 'greedy', accountConcurrencyLimit: null, ...none }));
        } catch (error) {
          refusals.push(String((error as DomainError).reason));
        }
      }
    }
    expect(held).toHaveLength(16);
    expect(new Set(refusals)).toEqual(new Set(['account_concurrency_limited']));
    expect(refusal(() => limiter.acquire({ keyId: 'greedy-9', userId: 'greedy', accountConcurrencyLimit: null, ...none })).message).toContain('limit 16');
    // The other 32 global slots stay for everyone else.
    for (let i = 0; i < 32; i++) limiter.acquire(subject(`other-${i}`, none));
    expect(refusal(() => limiter.acquire(subject('one-more', none))).reason).toBe('capacity_limited');
    // The account's own override wins over the baseline; a released slot is free again.
    held.pop()!.release();
    expect(limiter.inFlightTotal).toBe(47);
    const raised = new Limiter();
    for (let i = 0; i < 20; i++) raised.acquire({ keyId: `k-${i % 3}`, userId: 'partner', accountConcurrencyLimit: 20, rpmLimit: null, concurrencyLimit: 10 });
    expect(refusal(() => raised.acquire({ keyId: 'k-0', userId: 'partner', accountConcurrencyLimit: 20, rpmLimit: null, concurrencyLimit: 10 })).reason).toBe('account_concurrency_limited');
  });

  it('admits exactly 120 requests in any 60 s per key, with Retry-After until the oldest leaves the window', () => {
    let now = 1_000_000;
    const limiter = new Limiter(undefined, () => now);
    for (let i = 0; i < 120; i++) {
      limiter.acquire(subject('k1', none)).release();
      now += 100; // 120 requests over 12 s
    }
    const refused = refusal(() => limiter.acquire(subject('k1', none)));
    expect(refused).toMatchObject({ code: 'rate_limited', reason: 'rate_limited' });
    expect(refused.retryAfterSeconds).toBe(48); // the first left at 1_000_000 + 60 s; now is 12 s later
    expect(() => limiter.acquire(subject('k2', none)).release()).not.toThrow(); // other keys are unaffected
    now = 1_000_000 + 60_000 + 1;
    expect(() => limiter.acquire(subject('k1', none)).release()).not.toThrow();
    expect(refusal(() => limiter.acquire(subject('k1', none))).reason).toBe('rate_limited'); // the second is still inside
  });

  it('holds 8 concurrent requests per key and 48 overall; refused requests consume nothing', () => {
    const limiter = new Limiter();
    const held = Array.from({ length: 8 }, () => limiter.acquire(subject('k', none)));
    expect(refusal(() => limiter.acquire(subject('k', none))).reason).toBe('concurrency_limited');
    for (let key = 0; key < 5; key++) for (let i = 0; i < 8; i++) held.push(limiter.acquire(subject(`other-${key}`, none)));
    expect(limiter.inFlightTotal).toBe(48);
    expect(refusal(() => limiter.acquire(subject('fresh', none))).reason).toBe('capacity_limited');
    held.pop()!.release();
    expect(() => limiter.acquire(subject('fresh', none))).not.toThrow();
  });

  it('releases once however often release() is called, and per-key overrides win', () => {
    const limiter = new Limiter();
    const slot = limiter.acquire(subject('k', { rpmLimit: 2, concurrencyLimit: 1 }));
    expect(refusal(() => limiter.acquire(subject('k', { rpmLimit: 2, concurrencyLimit: 1 }))).reason).toBe('concurrency_limited');
    slot.release();
    slot.release();
    expect(limiter.inFlightFor('k')).toBe(0);
    expect(limiter.inFlightTotal).toBe(0);
    limiter.acquire(subject('k', { rpmLimit: 2, concurrencyLimit: 1 })).release();
    expect(refusal(() => limiter.acquire(subject('k', { rpmLimit: 2, concurrencyLimit: 5 }))).reason).toBe('rate_limited');
    expect(() => limiter.acquire(subject('k', { rpmLimit: 500, concurrencyLimit: null })).release()).not.toThrow();
  });

  it('stays exact for a high-limit key across minutes of traffic (the log compacts as it expires)', () => {
    let now = 5_000_000;
    const limiter = new Limiter(undefined, () => now);
    const limits = { rpmLimit: 3_000, concurrencyLimit: null };
    // 4 minutes at 100 requests/s: the window always holds the last 6,000 attempts' admitted half.
    let admitted = 0;
    const admittedAt: number[] = [];
    for (let i = 0; i < 24_000; i++) {
      try {
        limiter.acquire(subject('busy', limits)).release();
        admitted += 1;
        admittedAt.push(now);
      } catch (error) {
        expect((error as DomainError).reason).toBe('rate_limited');
        // Refused only when 3,000 admissions fall inside the last 60 s.
        expect(admittedAt.filter((t) => t > now - 60_000).length).toBe(3_000);
      }
      now += 10;
    }
    // Each minute admits exactly its 3,000 (the first minute's fill, then one per expiry).
    expect(admitted).toBe(12_000);
  });

  it('matches a plain list of times through bursts, lulls and a wall clock set back (the ring grows, wraps and shrinks)', () => {
    let now = 1_000_000;
    const limiter = new Limiter(undefined, () => now);
    const limits = { rpmLimit: 700, concurrencyLimit: null };
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
    // The model: the admitted times still inside the window (held as the newest when the clock went back;
    // once gone, gone, even when the clock goes back).
    const model: number[] = [];
    const outcomes = { admitted: 0, refused: 0 };
    for (let step = 0; step < 40_000; step++) {
      // Bursts (1 ms apart), lulls (up to 3 minutes), ordinary gaps, and now and then the clock 0-2 s back.
      const roll = random();
      now += roll < 0.6 ? 1 : roll < 0.998 ? Math.floor(random() * 200) : roll < 0.999 ? Math.floor(random() * 180_000) : -Math.floor(random() * 2_000);
      while (model.length && model[0]! <= now - 60_000) model.shift();
      try {
        limiter.acquire(subject('bursty', limits)).release();
        expect(model.length).toBeLessThan(700);
        model.push(Math.max(now, model.at(-1) ?? now));
        outcomes.admitted += 1;
      } catch (error) {
        expect((error as DomainError).reason).toBe('rate_limited');
        expect(model.length).toBe(700);
        // Retry-After: when the 700th newest admitted time leaves the window.
        expect((error as DomainError).retryAfterSeconds).toBe(Math.max(1, Math.ceil((model[0]! + 60_000 - now) / 1000)));
        outcomes.refused += 1;
      }
    }
    expect(outcomes.admitted).toBeGreaterThan(5_000);
    expect(outcomes.refused).toBeGreaterThan(5_000);
  });
});
