import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, Limiter, LimitRefusal } from '../../src/inference/limits.js';
import { DomainError } from '../../src/shared/errors.js';
import { goDuration, writeRefusal, writeWindow } from '../../rest-shim/v1/limit-headers.js';

/** Issue 54 item 4: the figures the limiter hands out and how the transports write them. */

const subject = (keyId: string, rpmLimit: number | null = null, concurrencyLimit: number | null = null) => ({ keyId, userId: `account-of-${keyId}`, accountConcurrencyLimit: null, rpmLimit, concurrencyLimit });

function headersOf(write: (res: { setHeader(name: string, value: string): void }) => void): Record<string, string> {
  const headers: Record<string, string> = {};
  write({ setHeader: (name, value) => void (headers[name] = value) });
  return headers;
}

function refusal(fn: () => unknown): LimitRefusal {
  try {
    fn();
  } catch (error) {
    if (error instanceof LimitRefusal) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('goDuration: OpenAI’s reset format (Go’s time.Duration)', () => {
  it.each([
    [0, '0s'],
    [12, '12ms'],
    [999, '999ms'],
    [1_000, '1s'],
    [8_640, '8.64s'],
    [59_999, '59.999s'],
    [60_000, '1m0s'],
    [86_400, '1m26.4s'],
    [360_000, '6m0s'],
    [3_600_000, '1h0m0s'],
    [3_723_450, '1h2m3.45s'],
    [-5, '0s'],
  ])('%i ms is %s', (ms, text) => {
    expect(goDuration(ms)).toBe(text);
  });
});

describe('the limiter’s figures', () => {
  it('an admitted request carries its window: remaining one less each time, empty a full window later', () => {
    let now = 1_000_000;
    const limiter = new Limiter(undefined, () => now);
    expect(limiter.acquire(subject('k', 3)).window).toEqual({ limit: 3, remaining: 2, resetMs: 60_000 });
    now += 10_000;
    expect(limiter.acquire(subject('k', 3)).window).toEqual({ limit: 3, remaining: 1, resetMs: 60_000 });
    expect(limiter.peek(subject('k', 3))).toEqual({ limit: 3, remaining: 1, resetMs: 60_000 });
    now += 5_000;
    expect(limiter.acquire(subject('k', 3)).window).toEqual({ limit: 3, remaining: 0, resetMs: 60_000 });
    now += 1_000;
    const refused = refusal(() => limiter.acquire(subject('k', 3)));
    // The first leaves the window 44 s from now; the window is empty when the newest leaves, 59 s from now.
    expect(refused).toMatchObject({ reason: 'rate_limited', retryAfterMs: 44_000, retryAfterSeconds: 44, window: { limit: 3, remaining: 0, resetMs: 59_000 } });
    expect(refused.message).toBe('Key rate limit reached: 3 requests per minute for this key');
  });

  it('a shorter window (RATE_WINDOW_SECONDS) is counted, shown and named in the message', () => {
    let now = 0;
    const limiter = new Limiter({ ...DEFAULT_LIMITS, windowMs: 2_000 }, () => now);
    expect(limiter.acquire(subject('k', 1)).window).toEqual({ limit: 1, remaining: 0, resetMs: 2_000 });
    now = 500;
    const refused = refusal(() => limiter.acquire(subject('k', 1)));
    expect(refused).toMatchObject({ retryAfterMs: 1_500, retryAfterSeconds: 2 });
    expect(refused.message).toBe('Key rate limit reached: 1 requests per 2 s for this key');
    now = 2_001;
    expect(limiter.acquire(subject('k', 1)).window?.remaining).toBe(0);
  });

  it('concurrency refusals name their limit (key, account, gateway) and show the window untouched', () => {
    const limiter = new Limiter();
    limiter.acquire(subject('one', null, 1));
    const byKey = refusal(() => limiter.acquire(subject('one', null, 1)));
    expect(byKey).toMatchObject({ reason: 'concurrency_limited', retryAfterMs: 1_000, window: { limit: 120, remaining: 119 } });
    expect(byKey.message).toMatch(/^Key concurrency limit reached/);
    for (let i = 0; i < 47; i++) limiter.acquire(subject(`k-${i}`));
    const byGateway = refusal(() => limiter.acquire(subject('fresh')));
    expect(byGateway).toMatchObject({ reason: 'capacity_limited', window: { limit: 120, remaining: 120, resetMs: 0 } });
    expect(byGateway.message).toMatch(/^Gateway concurrency limit reached/);
    expect(headersOf((res) => writeRefusal(res, 'openai', byGateway))).toMatchObject({ 'retry-after': '1', 'retry-after-ms': '1000', 'x-ratelimit-limited-by': 'gateway' });
  });
});

describe('the headers', () => {
  it('OpenAI’s names with a Go duration; Anthropic’s with the RFC 3339 time the window is empty (whole seconds, rounded up)', () => {
    const window = { limit: 120, remaining: 7, resetMs: 59_500 };
    expect(headersOf((res) => writeWindow(res, 'openai', window, 0))).toEqual({ 'x-ratelimit-limit-requests': '120', 'x-ratelimit-remaining-requests': '7', 'x-ratelimit-reset-requests': '59.5s' });
    expect(headersOf((res) => writeWindow(res, 'anthropic', window, Date.UTC(2026, 10, 28, 6, 0, 0, 200)))).toEqual({
      'anthropic-ratelimit-requests-limit': '120',
      'anthropic-ratelimit-requests-remaining': '7',
      'anthropic-ratelimit-requests-reset': '2026-11-28T06:01:00Z',
    });
  });

  it('any refusal with a wait says it in seconds and milliseconds; a 429 of the model’s routes is limited by the model; others say nothing', () => {
    const busy = new DomainError('rate_limited', 'The model m is at capacity; retry shortly', { retryAfterSeconds: 1, reason: 'upstream_busy' });
    expect(headersOf((res) => writeRefusal(res, 'anthropic', busy))).toEqual({ 'retry-after': '1', 'retry-after-ms': '1000', 'x-ratelimit-limited-by': 'model' });
    const noRoute = new DomainError('unavailable', 'The model m is temporarily unavailable', { retryAfterSeconds: 30, reason: 'no_route' });
    expect(headersOf((res) => writeRefusal(res, 'openai', noRoute))).toEqual({ 'retry-after': '30', 'retry-after-ms': '30000' });
    expect(headersOf((res) => writeRefusal(res, 'openai', new DomainError('forbidden', 'no', { reason: 'key_scope_denied' })))).toEqual({});
  });
});
