import type { Metrics } from '../metrics.js';
import { Cancellation } from '../shared/cancellation.js';
import { DomainError } from '../shared/errors.js';
import type { Logger } from '../shared/logging.js';
import type { AttemptSpan } from '../shared/tracing-api.js';
import type { UpstreamClient } from '../upstreams/client.js';
import type { UpstreamAnswer } from '../upstreams/upstream-body.js';
import type { HealthVerdict } from '../upstreams/breaker.js';
import { clientErrorOf, UpstreamFailure } from '../upstreams/failures.js';
import type { Attempt, UpstreamHealth } from '../upstreams/health.js';
import type { RouteCandidate, RouteTable } from '../upstreams/routes.js';
import type { ClientFormat, ParsedRequest } from './formats/client-format.js';
import type { InferenceCall } from './inference-call.js';
import { PROVIDER_KINDS, type NativeFormat, type ProviderKind } from './providers/index.js';
import { RoutedFailure, type Admitted, type Outcome } from './settlement.js';

/** Carries our request id to the upstream (OpenAI's name for a caller-chosen request id). */
export const CLIENT_REQUEST_ID_HEADER = 'x-client-request-id';

/** How the upstream of one route is spoken to for one request. */
export interface UpstreamLeg {
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  /** Set when the upstream answers in the client's own format (its answer is rewritten, not translated). */
  sameFormat: boolean;
  kind: ProviderKind;
}

/** How a route's upstream takes the client's format as it is (then nothing is translated), or null when it does not. */
function nativeFormatOf(format: ClientFormat, kind: ProviderKind, route: RouteCandidate): NativeFormat | null {
  const native = kind.native[format.id];
  return native && (native.servedBy?.(route.upstream) ?? true) ? native : null;
}

/** Whether a route's upstream answers in the client's own format (then nothing is translated). */
export function speaksClientFormat(format: ClientFormat, kind: ProviderKind, route: RouteCandidate): boolean {
  return nativeFormatOf(format, kind, route) !== null;
}

/**
 * How one route is called for a text request: in the client's own format when the upstream's kind
 * takes it as it is (its `native` formats: chat to an OpenAI-compatible upstream, Messages to an
 * Anthropic one, Responses to an OpenAI-compatible upstream that declares native Responses support),
 * else through the hub.
 */
export function legOf(call: InferenceCall, format: ClientFormat, parsed: ParsedRequest, route: RouteCandidate): UpstreamLeg {
  const kind = PROVIDER_KINDS[route.upstream.kind]!;
  const headers = kind.headers(route.upstream, route.credential);
  const native = nativeFormatOf(format, kind, route);
  if (!native) return { path: kind.path, headers, body: kind.body(parsed.canonical, route.upstreamModel), sameFormat: false, kind };
  const forwarded = native.headers?.(call);
  if (forwarded) Object.assign(headers, forwarded);
  return { path: native.path, headers, body: native.body(parsed.raw, route.upstreamModel), sameFormat: true, kind };
}

/**
 * The second stage: the routes that can serve the request (503 `no_route` if none), the client's
 * disconnect and a graceful stop wired to the upstream call, failover before the first byte, the
 * upstream's timeouts (in its client pool). It ends with an upstream that answered 200 and its route.
 */
/** An outcome with the route's part: the credential that served it and its upstream's prices (for the operator's cost). */
export function routed<T extends Outcome>(outcome: T, route: RouteCandidate, admitted: Pick<Admitted, 'model'>): T {
  outcome.upstreamCredentialId = route.credential.id;
  outcome.upstreamPrices = route.upstream.prices[admitted.model.id] ?? null;
  return outcome;
}

export class UpstreamLegs {
  /** Set when a graceful stop runs out of time: every running upstream call ends, streams with a final error event. */
  private stopped = false;
  /** The running upstream calls, each ended by its client going away or by `stopRunning`. */
  private readonly running = new Set<Cancellation>();

  constructor(private readonly deps: { routes: RouteTable; health: UpstreamHealth; upstreams: UpstreamClient; log: Logger; metrics?: Metrics }) {}

  get stopping(): boolean {
    return this.stopped;
  }

  /** The end of a graceful stop's drain period: upstream calls still running end now. */
  stopRunning(): void {
    this.stopped = true;
    for (const call of this.running) call.cancel();
  }

  /**
   * Calls the first route of `admitted.model` that `accepts` and answers (in the order routing chose
   * from what health allows), then hands its response to `relay` (the third stage) while the call is
   * still wired to the client's disconnect. Every attempt tells the route's health how it went.
   */
  async run<T extends Outcome>(
    call: InferenceCall,
    admitted: Admitted,
    signal: Cancellation,
    accepts: (route: RouteCandidate) => boolean,
    request: (route: RouteCandidate) => { path: string; body: Record<string, unknown>; headers: Record<string, string> },
    relay: (response: UpstreamAnswer, route: RouteCandidate) => Promise<T>,
    cancelled: T,
    /** Requests with the same key go to the same credential while it is healthy (its prompt cache): see affinity-key.ts. */
    affinityKey?: () => string | null,
  ): Promise<T> {
    const choice = this.deps.routes.choose(admitted.model.id, call.principal.routeGroup, accepts, affinityKey);
    if (!choice.routes.length) throw this.noRoute(choice.busy, admitted.model.id, call.principal.routeGroup);
    const upstreamCall = new Cancellation();
    const endUpstream = () => upstreamCall.cancel();
    signal.once('abort', endUpstream);
    this.running.add(upstreamCall);
    // A signal that fired while the key, limits and hold were checked never fires again for a new listener.
    if (signal.cancelled || this.stopped) endUpstream();
    try {
      let failure: UpstreamFailure | null = null;
      for (const [index, route] of choice.routes.entries()) {
        if (upstreamCall.cancelled) break;
        const leg = request(route);
        // Each attempt has its own stop, so routing can abandon a stalled one without ending the request.
        const attemptCall = new Cancellation();
        const endAttempt = () => attemptCall.cancel();
        upstreamCall.once('abort', endAttempt);
        const attempt = this.deps.health.begin(route.health, leg.body.stream === true ? route.peers.stream : route.peers.json, index >= choice.allowed, endAttempt);
        if (!attempt) {
          upstreamCall.off('abort', endAttempt);
          continue;
        }
        const span = call.trace?.attempt({ upstreamId: route.upstream.id, kind: route.upstream.kind, upstreamModel: route.upstreamModel, credentialId: route.credential.id });
        let response: UpstreamAnswer;
        try {
          response = await this.send(call, route, leg, attemptCall);
          this.deps.health.answered(attempt);
        } catch (error) {
          upstreamCall.off('abort', endAttempt);
          if (upstreamCall.cancelled) {
            this.finish(attempt, route, 'cancelled', 'none');
            span?.end({ outcome: 'aborted' });
            break;
          }
          failure = this.failed(attempt, route, error, span);
          if (!failure.retryable) break;
          continue;
        }
        // Past the first byte there is no failover: the relay owns the answer from here.
        try {
          return await this.relayed(response, route, admitted, relay, { attempt, span, upstreamCall });
        } finally {
          upstreamCall.off('abort', endAttempt);
        }
      }
      if (this.stopped && !signal.cancelled) throw new DomainError('unavailable', 'The service is restarting; retry the request', { retryAfterSeconds: 1, reason: 'shutting_down' });
      if (signal.cancelled || !failure) return cancelled;
      throw new RoutedFailure(clientErrorOf(failure), failure.upstreamId);
    } finally {
      signal.off('abort', endUpstream);
      this.running.delete(upstreamCall);
    }
  }

  /** Every route is out (or, `busy`, full): nothing to try. */
  private noRoute(busy: boolean, model: string, group: string): DomainError {
    if (busy) return new DomainError('rate_limited', `The model ${model} is at capacity; retry shortly`, { retryAfterSeconds: 1, reason: 'upstream_busy' });
    this.deps.log.error({ model, group }, 'no upstream route serves this model');
    return new DomainError('unavailable', `The model ${model} is temporarily unavailable`, { retryAfterSeconds: 30, reason: 'no_route' });
  }

  /** An attempt failed before its first byte: health, the trace, the operator's log and metrics learn how. */
  private failed(attempt: Attempt, route: RouteCandidate, error: unknown, span: AttemptSpan | undefined): UpstreamFailure {
    const failure = attempt.abandoned ? new UpstreamFailure('timeout', route.upstream.id, 'abandoned: no first byte while other routes answered, and the route was taken out') : this.deps.upstreams.failureOf(error, route.upstream.id);
    this.finish(attempt, route, attempt.abandoned ? 'abandoned' : failure.kind, verdictOf(failure), failure.retryAfterSeconds === null ? null : failure.retryAfterSeconds * 1000);
    span?.end({ outcome: failure.kind, status: failure.status, retryAfterSeconds: failure.retryAfterSeconds });
    // The request id is on this line through the logging scope; the detail is for the operator only.
    this.deps.log.warn({ upstream: route.upstream.id, credential: route.credential.id, kind: failure.kind, status: failure.status, detail: failure.detail }, 'upstream call failed');
    this.deps.metrics?.upstreamError(route.upstream.id, failure.kind);
    return failure;
  }

  /** The relay owns an answer past its first byte; how it ended is the route's verdict (a client gone or a stop is not). */
  private async relayed<T extends Outcome>(
    response: UpstreamAnswer,
    route: RouteCandidate,
    admitted: Admitted,
    relay: (response: UpstreamAnswer, route: RouteCandidate) => Promise<T>,
    attemptOf: { attempt: Attempt; span: AttemptSpan | undefined; upstreamCall: Cancellation },
  ): Promise<T> {
    const { attempt, span, upstreamCall } = attemptOf;
    let verdict: HealthVerdict = 'none';
    let ended = 'cancelled';
    try {
      const outcome = routed(await relay(response, route), route, admitted);
      // A stream the upstream cut (or answered malformed) is the route's failure.
      if (outcome.status === 'success') [verdict, ended] = ['ok', 'ok'];
      else if (outcome.status === 'error' && !upstreamCall.cancelled && !this.stopped) [verdict, ended] = ['failure', 'stream_error'];
      return outcome;
    } finally {
      this.finish(attempt, route, ended, verdict);
      span?.end({ outcome: ended === 'ok' ? 'ok' : ended === 'cancelled' ? 'aborted' : 'server_error', status: response.status, firstByteMs: attempt.firstByteAt - attempt.startedAt });
      // An answer the relay did not read to its end (it failed first) ends its upstream call, which would wait paused.
      response.body.destroy();
    }
  }

  /** An attempt ended: its route's health and the operator's metrics learn how. */
  private finish(attempt: Attempt, route: RouteCandidate, outcome: string, verdict: HealthVerdict, retryAfterMs: number | null = null): void {
    this.deps.health.end(attempt, verdict, retryAfterMs);
    const now = Date.now();
    this.deps.metrics?.observeUpstream(route.upstream.id, route.credential.id, outcome, attempt.firstByteAt ? attempt.firstByteAt - attempt.startedAt : null, now - attempt.startedAt);
  }

  private async send(call: InferenceCall, route: RouteCandidate, leg: { path: string; body: Record<string, unknown>; headers: Record<string, string> }, signal: Cancellation): Promise<UpstreamAnswer> {
    // Our request id travels as OpenAI's X-Client-Request-Id, so an operator can match a provider's logs to ours.
    const response = await this.deps.upstreams.post(route.upstream, leg.path, JSON.stringify(leg.body), { ...leg.headers, [CLIENT_REQUEST_ID_HEADER]: call.requestId }, signal);
    if (response.status === 200) return response;
    throw await this.deps.upstreams.failureFrom(route.upstream.id, response);
  }
}

/** What a failed attempt says of its route: a client's mistake says nothing against it; a refused credential, or a rate limit, is its own state. */
function verdictOf(failure: UpstreamFailure): HealthVerdict {
  switch (failure.kind) {
    case 'rejected':
      return 'ok';
    case 'rate_limited':
      return 'rate_limited';
    case 'misconfigured':
      return failure.status === 401 || failure.status === 403 ? 'auth_failed' : 'failure';
    case 'timeout':
    case 'connection':
    case 'server_error':
      return 'failure';
  }
}
