import type { ReserveRequest, WalletHold } from '../billing/wallets.js';
import { DomainError } from '../shared/errors.js';

/** SPEC.md section 8 baselines; a key's own overrides win. */
export interface LimitBaselines {
  /** A key's requests per window (per minute with the default window). */
  requestsPerMinute: number;
  /** The rate window's length: a minute, unless the operator shortens it (RATE_WINDOW_SECONDS; tests do). */
  windowMs: number;
  concurrentPerKey: number;
  /** Across an account's keys: well below the global limit, so one account cannot take the whole gateway. */
  concurrentPerAccount: number;
  concurrentGlobal: number;
}

export const WINDOW_MS = 60_000;

export const DEFAULT_LIMITS: LimitBaselines = { requestsPerMinute: 120, windowMs: WINDOW_MS, concurrentPerKey: 8, concurrentPerAccount: 16, concurrentGlobal: 48 };

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

/**
 * A key's rate window as the limiter saw it while deciding (after counting the request, if admitted):
 * the key's limit per window, the places left, and in how many ms the window is empty again. The
 * transports write it as the client's rate-limit headers (rest-shim/v1/limit-headers.ts).
 */
export interface RequestWindow {
  limit: number;
  remaining: number;
  resetMs: number;
}

/** A held concurrency slot. `release()` is idempotent, so every exit path may call it. */
export interface Slot {
  release(): void;
  /** The key's window after this request was counted (absent from limiters that keep none). */
  readonly window?: RequestWindow;
}

/** A slot whose release runs `free` once, however often it is called. */
export function slotFreedBy(free: () => void, window?: RequestWindow): Slot {
  let released = false;
  return {
    window,
    release: () => {
      if (released) return;
      released = true;
      free();
    },
  };
}

/** What admits a request: this process's own `Limiter`, or the Redis-shared one (src/inference/shared-limits.ts). */
export interface RequestLimiter {
  acquire(subject: LimitSubject): Slot | Promise<Slot>;
  /** The key's window as it stands, counting nothing: for a request refused before it reached the limits. */
  peek(subject: LimitSubject): RequestWindow | Promise<RequestWindow>;
  /**
   * The request's balance hold and its slot in one step (the shared limiter: one Redis script); settling or
   * releasing the hold frees the slot. Without it, admission reserves and then acquires.
   */
  holdAndAcquire?(request: ReserveRequest, subject: LimitSubject): Promise<{ hold: WalletHold; slot: Slot }>;
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

/** Which limit refused a request: the key's own, its account's, the whole gateway's, or the model's routes (upstream). */
export type LimitedBy = 'key' | 'account' | 'gateway' | 'model';

/** The limit behind each 429 reason (the `x-ratelimit-limited-by` header); reasons stay the stable codes. */
export const LIMITED_BY: Readonly<Record<string, LimitedBy>> = {
  rate_limited: 'key',
  concurrency_limited: 'key',
  account_concurrency_limited: 'account',
  capacity_limited: 'gateway',
  upstream_busy: 'model',
  upstream_rate_limited: 'model',
};

/** A refusal by the limiter: the key's window as it stood, and the wait to the millisecond (`retry-after-ms`). */
export class LimitRefusal extends DomainError {
  constructor(
    message: string,
    reason: string,
    readonly retryAfterMs: number,
    readonly window: RequestWindow | undefined,
  ) {
    super('rate_limited', message, { retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)), reason });
  }
}

export function capacityLimited(window?: RequestWindow): LimitRefusal {
  return new LimitRefusal('Gateway concurrency limit reached: the service is at capacity; retry shortly', 'capacity_limited', 1000, window);
}

export function accountConcurrencyLimited(limit: number, window?: RequestWindow): LimitRefusal {
  return new LimitRefusal(`Account concurrency limit reached: too many concurrent requests for this account across its keys (limit ${limit})`, 'account_concurrency_limited', 1000, window);
}

export function concurrencyLimited(limit: number, window?: RequestWindow): LimitRefusal {
  return new LimitRefusal(`Key concurrency limit reached: too many concurrent requests for this key (limit ${limit})`, 'concurrency_limited', 1000, window);
}

/** `freeInMs`: when the oldest request that counts against the window leaves it. */
export function rateLimited(rpm: number, freeInMs: number, window?: RequestWindow, windowMs = WINDOW_MS): LimitRefusal {
  const per = windowMs === WINDOW_MS ? 'minute' : `${windowMs / 1000} s`;
  return new LimitRefusal(`Key rate limit reached: ${rpm} requests per ${per} for this key`, 'rate_limited', Math.max(1, Math.ceil(freeInMs)), window);
}

/**
 * Per-process request limits: a sliding one-minute log per key (exact: the 121st request inside any
 * 60 s is refused; the window's length is a setting), and concurrency counters per key and overall. A refused request consumes nothing.
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
    const now = this.now();
    const log = this.windowOf(keyId, now);

    if (this.global >= this.baselines.concurrentGlobal) throw capacityLimited(this.seen(log, rpm, now));
    const accountRunning = this.inFlightByAccount.get(userId) ?? 0;
    if (accountRunning >= accountConcurrency) throw accountConcurrencyLimited(accountConcurrency, this.seen(log, rpm, now));
    const running = this.inFlight.get(keyId) ?? 0;
    if (running >= concurrency) throw concurrencyLimited(concurrency, this.seen(log, rpm, now));
    const { windowMs } = this.baselines;
    if (log.size >= rpm) throw rateLimited(rpm, log.nthNewest(rpm) + windowMs - now, this.seen(log, rpm, now), windowMs);

    log.add(now);
    this.inFlight.set(keyId, running + 1);
    this.inFlightByAccount.set(userId, accountRunning + 1);
    this.global += 1;
    return slotFreedBy(
      () => {
        this.global -= 1;
        decrement(this.inFlight, keyId);
        decrement(this.inFlightByAccount, userId);
      },
      // The newest time is this request's (or later, after a clock set back): the window is empty a window from it.
      { limit: rpm, remaining: Math.max(0, rpm - log.size), resetMs: log.newest + windowMs - now },
    );
  }

  peek(subject: LimitSubject): RequestWindow {
    const now = this.now();
    return this.seen(this.windowOf(subject.keyId, now), limitsOf(this.baselines, subject).rpm, now);
  }

  /** The key's window as it stands, for a refusal (nothing was counted). */
  private seen(log: MinuteLog, rpm: number, now: number): RequestWindow {
    return { limit: rpm, remaining: Math.max(0, rpm - log.size), resetMs: log.size ? Math.max(0, log.newest + this.baselines.windowMs - now) : 0 };
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
    log.expire(now - this.baselines.windowMs);
    return log;
  }

  private sweep(now: number): void {
    for (const [key, log] of this.recent) if (log.newest <= now - this.baselines.windowMs) this.recent.delete(key);
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
