import type { WalletStore } from '../billing/wallets.js';
import type { CatalogService } from '../catalog/catalog.service.js';
import type { Metrics } from '../metrics.js';
import { DomainError, httpStatusOf } from '../shared/errors.js';
import type { Logger } from '../shared/logging.js';
import { NOOP_TRACING, type TracedOperation, type Tracing } from '../shared/tracing.js';
import type { UpstreamClient } from '../upstreams/client.js';
import type { UpstreamHealth } from '../upstreams/health.js';
import type { RouteCandidate, RouteTable } from '../upstreams/routes.js';
import type { UsageRecorder } from '../usage/usage-recorder.js';
import { Admission } from './admission.js';
import { affinityKeyOf } from './affinity-key.js';
import { codecFor } from './answer-codec.js';
import type { ResponseIdentity } from './canonical.js';
import type { ClientFormat } from './formats/client-format.js';
import { WITHHELD_TOOLS_HEADER, type InferenceCall, type ResponseSink } from './inference-call.js';
import type { RequestLimiter } from './limits.js';
import { openAiCompatible, PROVIDER_KINDS } from './providers/index.js';
import { Relay, SlotFreeingSink } from './relay.js';
import type { ResponsesStorage } from './responses-state.js';
import { Settlement, type Outcome } from './settlement.js';
import { toImageUpstreamRequest } from './openai-images.js';
import { legOf, routed, UpstreamLegs, type UpstreamLeg } from './upstream-leg.js';

const CANCELLED: Outcome = { status: 'cancelled', errorCode: 'client_closed', usage: null, upstreamId: null };

/**
 * The /v1 pipeline, one request through four stages, each entered once:
 *   admission (admission.ts: format, scope, capabilities, hold, slot)
 *   -> upstream leg (upstream-leg.ts: route, failover before the first byte, disconnects, stop)
 *   -> relay (relay.ts: one loop over the request's codec, JSON or SSE)
 *   -> settlement (settlement.ts: settle or release, free the slot, record the usage event).
 * Nothing here waits on PostgreSQL once an account is warm: holds are in-memory reservations and
 * settlements are written in batches.
 */
export class InferenceService {
  private readonly admission: Admission;
  private readonly legs: UpstreamLegs;
  private readonly relay: Relay;
  private readonly settlement: Settlement;
  private readonly tracing: Tracing;
  private readonly cacheAffinity: boolean;

  constructor(deps: {
    catalog: CatalogService;
    wallets: WalletStore;
    limiter: RequestLimiter;
    routes: RouteTable;
    health: UpstreamHealth;
    upstreams: UpstreamClient;
    recorder: UsageRecorder;
    log: Logger;
    metrics?: Metrics;
    /** Stored Responses (`store`, `previous_response_id`, `item_reference`); without it they are refused. */
    responses?: ResponsesStorage;
    /** Hosted tools a route cannot serve: withheld from the model and named in a header (default), or refused. */
    hostedTools?: 'withhold' | 'refuse';
    /** OpenTelemetry traces (off: the no-op). */
    tracing?: Tracing;
    /** Keep one account's cacheable requests on one credential (default on). */
    cacheAffinity?: boolean;
    /** Told of each request a limit refused (the key's events). */
    refusals?: { note(userId: string, keyId: string, reason: string): void };
  }) {
    this.cacheAffinity = deps.cacheAffinity !== false;
    this.tracing = deps.tracing ?? NOOP_TRACING;
    this.settlement = new Settlement(deps);
    this.admission = new Admission({ ...deps, settlement: this.settlement });
    this.legs = new UpstreamLegs(deps);
    this.relay = new Relay({ upstreams: deps.upstreams, log: deps.log, stopping: () => this.legs.stopping });
  }

  /**
   * The end of a graceful stop's drain period: requests still running stop now. Streams get a final
   * error event and are billed for what was delivered; their holds and slots are released as usual.
   */
  stopRunning(): void {
    this.legs.stopRunning();
  }

  /**
   * One inference request in any client format (`/v1/chat/completions`, `/v1/responses`,
   * `/v1/messages`, the bridge), JSON or SSE: admit, forward, relay, settle.
   */
  async complete(call: InferenceCall, format: ClientFormat, body: unknown, sink: ResponseSink): Promise<void> {
    const { parsed, save, admitted } = await this.traced(call, format.operation, body, () => this.admission.text(call, format, body));
    // A few header writes: the figures came with the slot (no further work or round trip); a later refusal keeps them.
    if (admitted.slot.window) sink.limits(admitted.slot.window);
    const legs = new Map<RouteCandidate, UpstreamLeg>();
    const leg = (route: RouteCandidate) => {
      let known = legs.get(route);
      if (!known) legs.set(route, (known = legOf(call, format, parsed, route)));
      return known;
    };
    await this.settlement.after(call, admitted, (settleNow) =>
      this.legs.run(
        call,
        admitted,
        sink.signal,
        (route) => PROVIDER_KINDS[route.upstream.kind] !== undefined,
        leg,
        (response, route) => {
          const { sameFormat, kind } = leg(route);
          const who: ResponseIdentity = { id: admitted.eventId.replaceAll('-', ''), model: admitted.model.id, created: Math.floor(Date.now() / 1000) };
          // The hub could not give these to the model; say which, so the client is not left guessing.
          if (!sameFormat && parsed.withheldTools.length) sink.setHeader(WITHHELD_TOOLS_HEADER, parsed.withheldTools.join(', '));
          const codec = codecFor(sameFormat, kind, format, who, parsed);
          const settle = (outcome: Outcome) => settleNow(routed(outcome, route, admitted));
          return this.relay.text({ parsed, codec, save, settle }, response, route.upstream.id, new SlotFreeingSink(sink, admitted.slot));
        },
        CANCELLED,
        this.cacheAffinity ? () => affinityKeyOf(format.affinity, parsed.raw, call.principal.userId) : undefined,
      ),
    );
  }

  /** Starts the request's trace and runs admission as its first span; a refusal ends the trace. */
  private async traced<T>(call: InferenceCall, operation: TracedOperation, body: unknown, admit: () => Promise<T>): Promise<T> {
    const asked = typeof body === 'object' && body !== null ? (body as { model?: unknown; stream?: unknown }) : {};
    const trace = (call.trace = this.tracing.request({ requestId: call.requestId, endpoint: call.endpoint, operation, model: typeof asked.model === 'string' ? asked.model : '', stream: asked.stream === true }));
    const span = trace.admission();
    try {
      const admitted = await admit();
      span.end();
      return admitted;
    } catch (error) {
      const code = error instanceof DomainError ? error.reason : 'internal_error';
      span.end(code);
      trace.end({ status: error instanceof DomainError ? httpStatusOf(error.code) : 500, errorCode: code, usage: null, amountUsd: null });
      throw error;
    }
  }

  /** `POST /v1/images/generations`: one image, billed per generation at the catalog price. */
  async generateImage(call: InferenceCall, body: unknown, sink: ResponseSink): Promise<void> {
    const { request, admitted } = await this.traced(call, 'images', body, () => this.admission.image(call, body));
    if (admitted.slot.window) sink.limits(admitted.slot.window);
    await this.settlement.after(call, admitted, (settleNow) =>
      this.legs.run(
        call,
        admitted,
        sink.signal,
        // Images are served by OpenAI-compatible upstreams only.
        (route) => route.upstream.kind === 'openai-compatible',
        (route) => ({ path: '/images/generations', body: toImageUpstreamRequest(request, route.upstreamModel), headers: openAiCompatible.headers(route.upstream, route.credential) }),
        (response, route) => this.relay.image(response, route.upstream.id, new SlotFreeingSink(sink, admitted.slot), (outcome) => settleNow(routed(outcome, route, admitted))),
        CANCELLED,
      ),
    );
  }
}
