import { describe, expect, it } from 'vitest';
import { Limiter } from '../../src/inference/limits.js';
import { DomainError } from '../../src/shared/errors.js';

const none = { rpmLimit: null, concurrencyLimit: null };

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
  it('admits exactly 120 requests in any 60 s per key, with Retry-After until the oldest leaves the window', () => {
    let now = 1_000_000;
    const limiter = new Limiter(undefined, () => now);
    for (let i = 0; i < 120; i++) {
      limiter.acquire('k1', none).release();
      now += 100; // 120 requests over 12 s
    }
    const refused = refusal(() => limiter.acquire('k1', none));
    expect(refused).toMatchObject({ code: 'rate_limited', reason: 'rate_limited' });
    expect(refused.retryAfterSeconds).toBe(48); // the first left at 1_000_000 + 60 s; now is 12 s later
    expect(() => limiter.acquire('k2', none).release()).not.toThrow(); // other keys are unaffected
    now = 1_000_000 + 60_000 + 1;
    expect(() => limiter.acquire('k1', none).release()).not.toThrow();
    expect(refusal(() => limiter.acquire('k1', none)).reason).toBe('rate_limited'); // the second is still inside
  });

  it('holds 8 concurrent requests per key and 48 overall; refused requests consume nothing', () => {
    const limiter = new Limiter();
    const held = Array.from({ length: 8 }, () => limiter.acquire('k', none));
    expect(refusal(() => limiter.acquire('k', none)).reason).toBe('concurrency_limited');
    for (let key = 0; key < 5; key++) for (let i = 0; i < 8; i++) held.push(limiter.acquire(`other-${key}`, none));
    expect(limiter.inFlightTotal).toBe(48);
    expect(refusal(() => limiter.acquire('fresh', none)).reason).toBe('capacity_limited');
    held.pop()!.release();
    expect(() => limiter.acquire('fresh', none)).not.toThrow();
  });

  it('releases once however often release() is called, and per-key overrides win', () => {
    const limiter = new Limiter();
    const slot = limiter.acquire('k', { rpmLimit: 2, concurrencyLimit: 1 });
    expect(refusal(() => limiter.acquire('k', { rpmLimit: 2, concurrencyLimit: 1 })).reason).toBe('concurrency_limited');
    slot.release();
    slot.release();
    expect(limiter.inFlightFor('k')).toBe(0);
    expect(limiter.inFlightTotal).toBe(0);
    limiter.acquire('k', { rpmLimit: 2, concurrencyLimit: 1 }).release();
    expect(refusal(() => limiter.acquire('k', { rpmLimit: 2, concurrencyLimit: 5 })).reason).toBe('rate_limited');
    expect(() => limiter.acquire('k', { rpmLimit: 500, concurrencyLimit: null }).release()).not.toThrow();
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
        limiter.acquire('busy', limits).release();
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
});
