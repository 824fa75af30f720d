import { DomainError } from '../shared/errors.js';

/** SPEC.md section 8 baselines; a key's own overrides win. */
export interface LimitBaselines {
  requestsPerMinute: number;
  concurrentPerKey: number;
  /** Across an account's keys: well below the global limit, so one account cannot take the whole gateway. */
  concurrentPerAccount: number;
  concurrentGlobal: number;
}

export const DEFAULT_LIMITS: LimitBaselines = { requestsPerMinute: 120, concurrentPerKey: 8, concurrentPerAccount: 16, concurrentGlobal: 48 };

export interface KeyLimitOverrides {
  rpmLimit: number | null;
  concurrencyLimit: number | null;
}

/** Who a request counts against: its key (with the key's overrides) and the key's account (with its own). */
export interface LimitSubject extends KeyLimitOverrides {
  keyId: string;
  userId: string;
  accountConcurrencyLimit: number | null;
}

/** A held concurrency slot. `release()` is idempotent, so every exit path may call it. */
export interface Slot {
  release(): void;
}

/** A slot whose release runs `free` once, however often it is called. */
export function slotFreedBy(free: () => void): Slot {
  let released = false;
  return {
    release: () => {
      if (released) return;
      released = true;
      free();
    },
  };
}

export const WINDOW_MS = 60_000;

/** What admits a request: this process's own `Limiter`, or the Redis-shared one (src/inference/shared-limits.ts). */
export interface RequestLimiter {
  acquire(subject: LimitSubject): Slot | Promise<Slot>;
  /** Slots this process holds now, for metrics and tests. */
  readonly inFlightTotal: number;
  close?(): void;
}

export function limitsOf(baselines: LimitBaselines, subject: LimitSubject): { rpm: number; concurrency: number; accountConcurrency: number } {
  return {
    rpm: subject.rpmLimit ?? baselines.requestsPerMinute,
    concurrency: subject.concurrencyLimit ?? baselines.concurrentPerKey,
    accountConcurrency: subject.accountConcurrencyLimit ?? baselines.concurrentPerAccount,
  };
}

export function capacityLimited(): DomainError {
  return new DomainError('rate_limited', 'The service is at capacity; retry shortly', { retryAfterSeconds: 1, reason: 'capacity_limited' });
}

export function accountConcurrencyLimited(limit: number): DomainError {
  return new DomainError('rate_limited', `Too many concurrent requests for this account across its keys (limit ${limit})`, { retryAfterSeconds: 1, reason: 'account_concurrency_limited' });
}

export function concurrencyLimited(limit: number): DomainError {
  return new DomainError('rate_limited', `Too many concurrent requests for this key (limit ${limit})`, { retryAfterSeconds: 1, reason: 'concurrency_limited' });
}

/** `freeInMs`: when the oldest request that counts against the window leaves it. */
export function rateLimited(rpm: number, freeInMs: number): DomainError {
  return new DomainError('rate_limited', `Rate limit of ${rpm} requests per minute reached for this key`, { retryAfterSeconds: Math.max(1, Math.ceil(freeInMs / 1000)), reason: 'rate_limited' });
}

/**
 * Per-process request limits: a sliding one-minute log per key (exact: the 121st request inside any
 * 60 s is refused), and concurrency counters per key and overall. A refused request consumes nothing.
 * Several processes share these through Redis (the scale-out capability).
 */
export class Limiter implements RequestLimiter {
  private readonly recent = new Map<string, MinuteLog>();
  private readonly inFlight = new Map<string, number>();
  private readonly inFlightByAccount = new Map<string, number>();
  private global = 0;

  constructor(
    private readonly baselines: LimitBaselines = DEFAULT_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  acquire(subject: LimitSubject): Slot {
    const { keyId, userId } = subject;
    const { rpm, concurrency, accountConcurrency } = limitsOf(this.baselines, subject);

    if (this.global >= this.baselines.concurrentGlobal) throw capacityLimited();
    const accountRunning = this.inFlightByAccount.get(userId) ?? 0;
    if (accountRunning >= accountConcurrency) throw accountConcurrencyLimited(accountConcurrency);
    const running = this.inFlight.get(keyId) ?? 0;
    if (running >= concurrency) throw concurrencyLimited(concurrency);
    const now = this.now();
    const log = this.windowOf(keyId, now);
    if (log.size >= rpm) throw rateLimited(rpm, log.nthNewest(rpm) + WINDOW_MS - now);

    log.add(now);
    this.inFlight.set(keyId, running + 1);
    this.inFlightByAccount.set(userId, accountRunning + 1);
    this.global += 1;
    return slotFreedBy(() => {
      this.global -= 1;
      decrement(this.inFlight, keyId);
      decrement(this.inFlightByAccount, userId);
    });
  }

  /** Slots held now, for /ready, metrics and tests. */
  get inFlightTotal(): number {
    return this.global;
  }

  inFlightFor(keyId: string): number {
    return this.inFlight.get(keyId) ?? 0;
  }

  private windowOf(keyId: string, now: number): MinuteLog {
    let log = this.recent.get(keyId);
    if (!log) {
      log = new MinuteLog();
      this.recent.set(keyId, log);
      if (this.recent.size > 50_000) this.sweep(now);
    }
    log.expire(now - WINDOW_MS);
    return log;
  }

  private sweep(now: number): void {
    for (const [key, log] of this.recent) if (log.newest <= now - WINDOW_MS) this.recent.delete(key);
  }
}

function decrement(counts: Map<string, number>, id: string): void {
  const left = (counts.get(id) ?? 1) - 1;
  if (left <= 0) counts.delete(id);
  else counts.set(id, left);
}

/** A MinuteLog's smallest capacity: a power of two, so a ring index wraps with a mask. */
const MIN_CAPACITY = 16;

/**
 * One key's request times inside the last minute, oldest first, in a ring buffer of doubles (off the
 * garbage-collected heap, doubled as it fills, halved as it empties). Expiring is a binary search, not a
 * walk over every expired time: a key allowed 100,000 requests a minute that made 5,000 a second and
 * then slowed down would otherwise step over 5,000 expired times a second on its slower requests, and
 * a growing array of every time left old-generation garbage behind each burst.
 */
class MinuteLog {
  private times = new Float64Array(MIN_CAPACITY);
  /** Where the oldest time is, and how many times are held. */
  private head = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The most recent time, or -Infinity for an empty log. */
  get newest(): number {
    return this.count ? this.at(this.count - 1) : Number.NEGATIVE_INFINITY;
  }

  /** The n-th most recent time (1: the newest); n <= size. */
  nthNewest(n: number): number {
    return this.at(this.count - n);
  }

  /** Appends a time; one earlier than the newest (a wall clock set back) is held as the newest, so the log stays sorted. */
  add(at: number): void {
    if (this.count === this.times.length) this.resize(this.times.length * 2);
    this.times[(this.head + this.count) & (this.times.length - 1)] = Math.max(at, this.newest);
    this.count += 1;
  }

  /** Drops the times at or before `cutoff`. */
  expire(cutoff: number): void {
    let low = 0;
    let high = this.count;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.at(middle) <= cutoff) low = middle + 1;
      else high = middle;
    }
    this.head = (this.head + low) & (this.times.length - 1);
    this.count -= low;
    if (this.times.length > MIN_CAPACITY && this.count * 4 <= this.times.length) this.resize(this.times.length / 2);
  }

  /** The i-th oldest time. */
  private at(i: number): number {
    return this.times[(this.head + i) & (this.times.length - 1)]!;
  }

  private resize(capacity: number): void {
    const times = new Float64Array(capacity);
    for (let i = 0; i < this.count; i++) times[i] = this.at(i);
    this.times = times;
    this.head = 0;
  }
}
