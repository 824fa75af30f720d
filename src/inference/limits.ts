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

/**
 * One key's request times inside the last minute, oldest first. Expired times are skipped by moving
 * `head`, and the array is compacted only once half of it is expired: a key allowed 100,000 requests a
 * minute would otherwise shift up to 100,000 entries on every request.
 */
class MinuteLog {
  private times: number[] = [];
  private head = 0;

  get size(): number {
    return this.times.length - this.head;
  }

  /** The most recent time, or -Infinity for an empty log. */
  get newest(): number {
    return this.size ? this.times[this.times.length - 1]! : Number.NEGATIVE_INFINITY;
  }

  /** The n-th most recent time (1: the newest); n <= size. */
  nthNewest(n: number): number {
    return this.times[this.times.length - n]!;
  }

  add(at: number): void {
    this.times.push(at);
  }

  /** Drops the times at or before `cutoff`. */
  expire(cutoff: number): void {
    const { times } = this;
    while (this.head < times.length && times[this.head]! <= cutoff) this.head += 1;
    if (this.head === times.length) {
      times.length = 0;
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= times.length) {
      times.copyWithin(0, this.head);
      times.length -= this.head;
      this.head = 0;
    }
  }
}
