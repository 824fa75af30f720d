import type { HealthSettings } from './model.js';

/**
 * What routing knows of one (upstream, credential): a circuit breaker over a sliding window of
 * outcomes, a rate-limit pause (`retry-after`), a refused credential, and the requests in flight.
 *
 *   closed --(>= minFailures failures, >= failureRate of the window)--> open
 *   open --(cooldown over)--> half-open: one request (the probe) goes through
 *   half-open --probe answers--> closed      half-open --probe fails--> open, cooldown doubled
 *
 * Pure state over a clock passed in; health.ts drives it and shares what it learns with the other processes.
 */
export type BreakerState = 'closed' | 'open' | 'half_open' | 'rate_limited' | 'auth_failed';

/** How an attempt ended, as far as the route's health is concerned. */
export type HealthVerdict = 'ok' | 'failure' | 'rate_limited' | 'auth_failed' | 'none';

/** How long a credential refused with 401/403 stays out before one request tries it again. */
export const AUTH_RETRY_MS = 5 * 60_000;
/** A 429 without `retry-after` pauses the credential this long. */
const DEFAULT_RATE_LIMIT_MS = 1_000;
/** Window buckets: outcomes are counted per slice of the window, so forgetting old ones costs nothing per request. */
const BUCKETS = 10;

/** What a claim is: a normal request, the probe after a cool-down, or a last-resort try of a route that is out. */
export interface Claim {
  probe: boolean;
  forced: boolean;
}
const PROBE: Claim = { probe: true, forced: false };
const FORCED: Claim = { probe: true, forced: true };
const NORMAL: Claim = { probe: false, forced: false };

export class TargetHealth {
  /** Requests in flight through this credential in this process. */
  inFlight = 0;
  /** Requests in flight here that peers have overtaken (health.ts): while any, new requests go elsewhere. */
  stalledPending = 0;
  /** Requests in flight here that have waited past the stall threshold for their first byte. */
  slowPending = 0;
  /** When this target last failed (ms), for the rule that the longest-failed of all-open routes is still tried. */
  lastFailureAt = 0;
  private open = false;
  /** Until when the breaker stays open (then one probe); also the end of a rate-limit or auth pause. */
  private openUntil = 0;
  private pausedUntil = 0;
  private pause: 'rate_limited' | 'auth_failed' | null = null;
  private cooldownMs: number;
  private probing = false;
  private readonly ok = new Uint32Array(BUCKETS);
  private readonly failed = new Uint32Array(BUCKETS);
  private bucketAt = 0;

  constructor(
    /** `upstreamId/credentialId`. */
    readonly key: string,
    readonly upstreamId: string,
    readonly credentialId: string,
    private settings: HealthSettings,
  ) {
    this.cooldownMs = settings.cooldownMs;
  }

  /** How long a request may wait for its first byte here before a peer's later answer makes it a stall. */
  get stallMs(): number {
    return this.settings.stallMs;
  }

  /** New settings from an edit of the upstream; what was learned stays. */
  configure(settings: HealthSettings): void {
    this.settings = settings;
  }

  state(now: number): BreakerState {
    if (this.pause && now < this.pausedUntil) return this.pause;
    if (!this.open) return 'closed';
    return now < this.openUntil ? 'open' : 'half_open';
  }

  /** Whether a new request may be sent here now (concurrency is the router's to check). */
  available(now: number): boolean {
    if (this.stalledPending > 0) return false;
    const state = this.state(now);
    return state === 'closed' || (state === 'half_open' && !this.probing);
  }

  /**
   * Claims the request about to be sent: null when it may not go (the probe was taken meanwhile), else
   * whether it is a probe (its answer decides the breaker). `forced`: the last-resort try of a model
   * whose every route is out, a probe too.
   */
  claim(now: number, forced: boolean): Claim | null {
    if (!forced && !this.available(now)) return null;
    const claim = forced ? FORCED : this.state(now) === 'half_open' ? PROBE : NORMAL;
    if (claim.probe) this.probing = true;
    this.inFlight++;
    return claim;
  }

  /**
   * Records how a claimed request ended; returns the transition it caused, if any, for the other
   * processes and the admin page. `retryAfterMs` with `rate_limited`.
   */
  settle(now: number, claim: Claim, verdict: HealthVerdict, retryAfterMs: number | null = null): BreakerState | null {
    this.inFlight--;
    if (claim.probe) this.probing = false;
    return this.record(now, verdict, retryAfterMs, claim);
  }

  /** An outcome learned without a request ending (a stall while the request still waits). */
  record(now: number, verdict: HealthVerdict, retryAfterMs: number | null = null, claim: Claim = NORMAL): BreakerState | null {
    if (verdict === 'none') return null;
    if (verdict === 'auth_failed') {
      this.lastFailureAt = now;
      return this.pauseFor('auth_failed', now + AUTH_RETRY_MS, now);
    }
    if (verdict === 'rate_limited') {
      this.lastFailureAt = now;
      this.count(now, false);
      return this.pauseFor('rate_limited', now + (retryAfterMs ?? DEFAULT_RATE_LIMIT_MS), now);
    }
    if (verdict === 'ok') {
      this.count(now, true);
      const wasOut = this.open || this.pause !== null;
      if (this.open && (claim.probe || now >= this.openUntil)) this.close();
      // An answer through a paused credential (a forced try) ends its pause.
      if (this.pause) this.pause = null;
      return wasOut && !this.open && !this.pause ? 'closed' : null;
    }
    this.lastFailureAt = now;
    this.count(now, false);
    if (this.open) {
      // A last-resort try that failed changes nothing: the route is out already (and says so once, not per request).
      if (claim.forced) return null;
      // A failed probe (or a failure seen while half-open): longer until the next one.
      if (now < this.openUntil && !claim.probe) return null;
      this.cooldownMs = Math.min(this.cooldownMs * 2, this.settings.maxCooldownMs);
      this.openUntil = now + this.cooldownMs;
      return 'open';
    }
    const { ok, failed } = this.totals(now);
    if (failed >= this.settings.minFailures && failed >= this.settings.failureRate * (ok + failed)) {
      this.open = true;
      this.cooldownMs = this.settings.cooldownMs;
      this.openUntil = now + this.cooldownMs;
      return 'open';
    }
    return null;
  }

  /** What another process learned (its transition), applied here without re-publishing. */
  adopt(state: BreakerState, until: number, now: number): void {
    if (state === 'closed') {
      this.close();
      this.pause = null;
    } else if (state === 'rate_limited' || state === 'auth_failed') {
      this.pauseFor(state, until, now);
    } else if (state === 'open') {
      this.open = true;
      this.openUntil = Math.max(until, now);
      this.lastFailureAt = now;
    }
  }

  /** When the current open or paused state ends (ms since the epoch), for the other processes. */
  until(): number {
    return this.pause ? this.pausedUntil : this.openUntil;
  }

  /** Pauses the credential until `until`; a transition only when it was not already paused so (a longer pause is kept quietly). */
  private pauseFor(pause: 'rate_limited' | 'auth_failed', until: number, now: number): BreakerState | null {
    const already = this.pause === pause && now < this.pausedUntil;
    this.pausedUntil = already ? Math.max(until, this.pausedUntil) : until;
    this.pause = pause;
    return already ? null : pause;
  }

  private close(): void {
    this.open = false;
    this.cooldownMs = this.settings.cooldownMs;
    this.ok.fill(0);
    this.failed.fill(0);
  }

  private count(now: number, ok: boolean): void {
    this.advance(now);
    const slot = Math.floor(now / this.bucketMs()) % BUCKETS;
    if (ok) this.ok[slot]!++;
    else this.failed[slot]!++;
  }

  private totals(now: number): { ok: number; failed: number } {
    this.advance(now);
    let ok = 0;
    let failed = 0;
    for (let i = 0; i < BUCKETS; i++) {
      ok += this.ok[i]!;
      failed += this.failed[i]!;
    }
    return { ok, failed };
  }

  /** Empties the buckets whose slice of time has passed since the last count. */
  private advance(now: number): void {
    const bucket = Math.floor(now / this.bucketMs());
    const gone = Math.min(bucket - this.bucketAt, BUCKETS);
    for (let i = 1; i <= gone; i++) {
      const slot = (this.bucketAt + i) % BUCKETS;
      this.ok[slot] = 0;
      this.failed[slot] = 0;
    }
    if (bucket > this.bucketAt) this.bucketAt = bucket;
  }

  private bucketMs(): number {
    return Math.max(1, Math.floor(this.settings.windowMs / BUCKETS));
  }
}
