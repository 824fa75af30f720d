import type { Logger } from '../shared/logging.js';
import { TargetHealth, type BreakerState, type Claim, type HealthVerdict } from './breaker.js';
import type { Upstream, UpstreamCredential } from './model.js';

/** A transition of one (upstream, credential), as the other processes and the admin page learn it. */
export interface HealthChange {
  upstreamId: string;
  credentialId: string;
  state: BreakerState;
  /** When an open or paused state ends (ms since the epoch); 0 when closed. */
  until: number;
}

/** One request sent to a target, watched until its first byte. */
export interface Attempt {
  readonly target: TargetHealth;
  /** Whether this request is the route's probe (its answer decides the breaker). */
  readonly claim: Claim;
  readonly upstreamId: string;
  readonly startedAt: number;
  /** model, group and stream-or-not: the requests whose first-byte times are comparable. */
  readonly peers: string;
  firstByteAt: number;
  /** Waited past the stall threshold for its first byte (whether or not a peer answered meanwhile). */
  slow: boolean;
  /** Overtaken by a peer while waiting (counted once against the target). */
  stalled: boolean;
  /** Set when routing ended the wait because the target's breaker opened on it (the leg fails over). */
  abandoned: boolean;
  /** Ends the upstream call of this attempt only (the leg's per-attempt cancellation). */
  abort: () => void;
}

/** Recent first-byte times per peer group, for a stall threshold that follows the model's own pace. */
const SAMPLES = 32;
/** A stall is this many times the peers' recent p95 first-byte time (when that is above the upstream's stallMs). */
const STALL_FACTOR = 4;
const SWEEP_MS = 200;

/**
 * The health of every (upstream, credential) in this process: outcomes, stalls, in-flight counts, and
 * what the other processes learned (through the bus, when Redis is configured). Read in memory by the
 * router on every request; nothing here waits on a network.
 *
 * A hang is seen in seconds, not after the first-byte timeout: a request still waiting for its first
 * byte after max(stallMs, 4 x the model's recent p95) while another route of the same model has
 * answered a request sent later is a stall (a probe of an open route needs no such peer). It counts as a
 * failure, and while it waits its target gets no new request. If the breaker opens, the stalled requests there are abandoned and fail over at once
 * (no byte has reached their clients).
 */
export class UpstreamHealth {
  private readonly targets = new Map<string, TargetHealth>();
  private readonly inFlightByUpstream = new Map<string, number>();
  private readonly pending = new Set<Attempt>();
  /** peers -> target key -> the latest start time of a request answered there. */
  private readonly answeredStart = new Map<string, Map<string, number>>();
  private readonly samples = new Map<string, { values: Float64Array; next: number; count: number }>();
  private readonly listeners = new Set<(change: HealthChange, local: boolean) => void>();
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    private readonly deps: {
      log: Logger;
      /** Shares a local transition with the other processes (the bus); absent with one process. */
      publish?: (change: HealthChange) => void;
      now?: () => number;
    },
  ) {}

  now(): number {
    return this.deps.now ? this.deps.now() : Date.now();
  }

  /** The health of one credential of an upstream (created on first use, kept across edits). */
  target(upstream: Upstream, credential: UpstreamCredential): TargetHealth {
    const key = `${upstream.id}/${credential.id}`;
    let target = this.targets.get(key);
    if (!target) this.targets.set(key, (target = new TargetHealth(key, upstream.id, credential.id, upstream.health)));
    else target.configure(upstream.health);
    return target;
  }

  /**
   * Whether the upstream or the credential is at its concurrency limit in this process. A full route is
   * skipped while another can serve; with none, it still serves while it is answering (no request of its
   * waits past the stall threshold): the limit keeps a stuck upstream from holding the gateway's slots, it
   * does not cap a healthy one.
   */
  full(upstream: Upstream, credential: UpstreamCredential, target: TargetHealth): boolean {
    return (this.inFlightByUpstream.get(upstream.id) ?? 0) >= upstream.maxConcurrent || (credential.maxConcurrent !== null && target.inFlight >= credential.maxConcurrent);
  }

  inFlightOf(upstreamId: string): number {
    return this.inFlightByUpstream.get(upstreamId) ?? 0;
  }

  /** Starts watching a request to `target`; null when it may not go there now (another request took the probe). */
  begin(target: TargetHealth, peers: string, forced: boolean, abort: () => void): Attempt | null {
    const now = this.now();
    const claim = target.claim(now, forced);
    if (!claim) return null;
    this.inFlightByUpstream.set(target.upstreamId, (this.inFlightByUpstream.get(target.upstreamId) ?? 0) + 1);
    const attempt: Attempt = { target, claim, upstreamId: target.upstreamId, startedAt: now, peers, firstByteAt: 0, slow: false, stalled: false, abandoned: false, abort };
    this.pending.add(attempt);
    if (!this.sweeper) {
      this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
      this.sweeper.unref();
    }
    return attempt;
  }

  /** The first byte came (response headers): the target is answering; its time is a sample of the model's pace. */
  answered(attempt: Attempt): void {
    if (attempt.firstByteAt) return;
    const now = this.now();
    attempt.firstByteAt = now;
    this.unpend(attempt);
    let answered = this.answeredStart.get(attempt.peers);
    if (!answered) this.answeredStart.set(attempt.peers, (answered = new Map()));
    if ((answered.get(attempt.target.key) ?? 0) < attempt.startedAt) answered.set(attempt.target.key, attempt.startedAt);
    let samples = this.samples.get(attempt.peers);
    if (!samples) this.samples.set(attempt.peers, (samples = { values: new Float64Array(SAMPLES), next: 0, count: 0 }));
    samples.values[samples.next] = now - attempt.startedAt;
    samples.next = (samples.next + 1) % SAMPLES;
    samples.count = Math.min(samples.count + 1, SAMPLES);
  }

  /** The attempt is over (answered and relayed, failed, or cancelled); `verdict` is what it says of the target. */
  end(attempt: Attempt, verdict: HealthVerdict, retryAfterMs: number | null = null): void {
    this.unpend(attempt);
    this.inFlightByUpstream.set(attempt.upstreamId, (this.inFlightByUpstream.get(attempt.upstreamId) ?? 1) - 1);
    // A stall already counted against the target: its end (a timeout, or routing abandoning it) is not counted twice.
    const change = attempt.target.settle(this.now(), attempt.claim, attempt.stalled && verdict === 'failure' ? 'none' : verdict, retryAfterMs);
    if (change) this.changed(attempt.target, change, true);
  }

  /** A transition learned by another process. */
  adopt(change: HealthChange): void {
    const target = this.targets.get(`${change.upstreamId}/${change.credentialId}`);
    if (!target) return;
    target.adopt(change.state, change.until, this.now());
    this.changed(target, change.state, false);
  }

  /** Every transition; `local` when this process learned it (not adopted from another). */
  onChange(listener: (change: HealthChange, local: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Every known target's state now (for /metrics and the admin page). */
  snapshot(): { upstreamId: string; credentialId: string; state: BreakerState; until: number; inFlight: number; lastFailureAt: number }[] {
    const now = this.now();
    return [...this.targets.values()].map((t) => ({ upstreamId: t.upstreamId, credentialId: t.credentialId, state: t.state(now), until: t.state(now) === 'closed' ? 0 : t.until(), inFlight: t.inFlight, lastFailureAt: t.lastFailureAt }));
  }

  /** Forgets targets no longer configured (an upstream or credential deleted). */
  retain(keys: Set<string>): void {
    for (const key of this.targets.keys()) if (!keys.has(key)) this.targets.delete(key);
  }

  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  private unpend(attempt: Attempt): void {
    if (!this.pending.delete(attempt)) return;
    if (attempt.stalled) attempt.target.stalledPending--;
    if (attempt.slow) attempt.target.slowPending--;
  }

  private changed(target: TargetHealth, state: BreakerState, local: boolean): void {
    const change: HealthChange = { upstreamId: target.upstreamId, credentialId: target.credentialId, state, until: state === 'closed' ? 0 : target.until() };
    if (local) {
      this.deps.log.warn({ upstream: target.upstreamId, credential: target.credentialId, state, until: change.until ? new Date(change.until).toISOString() : null }, `upstream route ${state === 'closed' ? 'recovered' : state.replace('_', ' ')}`);
      this.deps.publish?.(change);
    }
    if (state === 'open') this.abandonStalled(target);
    for (const listener of this.listeners) listener(change, local);
  }

  /** The breaker opened: the requests overtaken there stop waiting and fail over. */
  private abandonStalled(target: TargetHealth): void {
    for (const attempt of [...this.pending]) if (attempt.target === target && attempt.stalled) this.abandon(attempt);
  }

  private abandon(attempt: Attempt): void {
    attempt.abandoned = true;
    attempt.abort();
  }

  private sweep(): void {
    // Stopped by the first tick with nothing pending (not by each request's end: a timer per request costs more).
    if (!this.pending.size) {
      clearInterval(this.sweeper!);
      this.sweeper = null;
      return;
    }
    const now = this.now();
    const thresholds = new Map<string, number>();
    for (const attempt of this.pending) {
      if (attempt.stalled) continue;
      let threshold = thresholds.get(attempt.peers);
      if (threshold === undefined) thresholds.set(attempt.peers, (threshold = STALL_FACTOR * this.p95(attempt.peers)));
      if (now - attempt.startedAt < Math.max(attempt.target.stallMs, threshold)) continue;
      // Slow, with or without a peer to compare: its target no longer takes requests past its concurrency limit.
      if (!attempt.slow) {
        attempt.slow = true;
        attempt.target.slowPending++;
      }
      // A probe of a route already known bad needs no peer to overtake it: the quiet end of a burst has none.
      if (!attempt.claim.probe && !this.overtaken(attempt)) continue;
      attempt.stalled = true;
      attempt.target.stalledPending++;
      const change = attempt.target.record(now, 'failure');
      if (change) this.changed(attempt.target, change, true);
      // Sent just before the route was taken out, it has only now waited long enough to be seen: it fails over too.
      else if (attempt.target.state(now) !== 'closed') this.abandon(attempt);
    }
  }

  /** Whether another target of the same model answered a request sent after this one. */
  private overtaken(attempt: Attempt): boolean {
    const answered = this.answeredStart.get(attempt.peers);
    if (!answered) return false;
    for (const [key, startedAt] of answered) if (key !== attempt.target.key && startedAt > attempt.startedAt) return true;
    return false;
  }

  private p95(peers: string): number {
    const samples = this.samples.get(peers);
    if (!samples?.count) return 0;
    const sorted = Array.from(samples.values.subarray(0, samples.count)).sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))]!;
  }
}
