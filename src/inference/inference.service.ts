import { costUnitsOf, worstCaseTokenUnits, type TokenUsage } from '../billing/cost.js';
import type { WalletHold, WalletStore } from '../billing/wallets.js';
import type { Catalog } from '../catalog/catalog.js';
import type { CatalogModel, Endpoint, GroupPrices, TokenPrices } from '../catalog/catalog.schemas.js';
import type { CatalogService } from '../catalog/catalog.service.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import type { KeyPrincipal } from '../keys/keys.service.js';
import { Cancellation } from '../shared/cancellation.js';
import { DomainError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import type { Logger } from '../shared/logging.js';
import type { Metrics } from '../metrics.js';
import { formatUnits, formatUsd, money, ratioText, toUnits, type Units } from '../shared/money.js';
import type { UsageRecord, UsageRecorder, UsageStatus } from '../usage/usage-recorder.js';
import type { RequestLimiter, Slot } from './limits.js';
import { promptText, promptTokenBound, textOf, type CanonicalResponse, type CanonicalUsage, type ResponseIdentity } from './canonical.js';
import { chatIdentity, CLIENT_FORMATS, type ClientFormat, type ClientFormatId, type ParsedRequest } from './client-formats.js';
import { openAiCompatible, PROVIDER_KINDS, type ProviderKind } from './providers/index.js';
import { finalResponseOf, prepareResponsesRequest, type ResponsesStorage } from './responses-state.js';
import type { RouteCandidate, RouteTable } from '../upstreams/routes.js';
import { SAME_FORMAT, type SameFormatStream } from './same-format.js';
import { eachChunk, estimateTokens, SseSplitter } from './sse.js';
import { imageOf, parseImageRequest, renderImage, toImageUpstreamRequest, type ImageRequest } from './translate/openai-images.js';
import { resolveModel } from './scope.js';
import type { UpstreamClient, UpstreamResponse } from '../upstreams/client.js';
import { clientErrorOf, UpstreamFailure } from '../upstreams/failures.js';

/** Output tokens held for a request that sets no limit, when the catalog names no cap for the model. */
const DEFAULT_OUTPUT_HOLD = 16_384;
/** Largest non-streamed upstream response we accept. */
const MAX_JSON_RESPONSE_BYTES = 64 * 1024 * 1024;

/** Where a response goes. Transports implement it; the service never sees `req`/`res`. */
export interface ResponseSink {
  /** Cancelled when the client goes away. */
  readonly signal: Cancellation;
  sendJson(body: object): void;
  /** `performance.now()` when the first byte went out (the JSON body or the first stream event), for metrics. */
  readonly firstByteAt?: number;
  /** Sets a response header; only before the answer starts. */
  setHeader(name: string, value: string): void;
  /** Starts a 200 server-sent-events response. */
  startStream(): void;
  /** Nothing when the client can take more now; otherwise a promise that resolves when it can (backpressure) or is gone. */
  write(text: string): Promise<void> | void;
  /** Ends the response, with `last` as its final bytes. */
  end(last?: string): void;
}

export interface InferenceCall {
  principal: KeyPrincipal;
  /** The request id shown to the client (`x-request-id`); the event id below is ours. */
  requestId: string;
  endpoint: Endpoint;
  clientSurface: string;
  /** The client's `anthropic-beta` header: forwarded with a Messages request to an `anthropic` upstream. */
  anthropicBeta?: string;
}

/** The response header naming hosted tools a route could not serve and that were withheld from the model. */
export const WITHHELD_TOOLS_HEADER = 'x-withheld-tools';
/** Carries our request id to the upstream (OpenAI's name for a caller-chosen request id). */
export const CLIENT_REQUEST_ID_HEADER = 'x-client-request-id';

/** How the upstream of one route is spoken to for one request. */
interface UpstreamLeg {
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  /** Set when the upstream answers in the client's own format (its answer is rewritten, not translated). */
  sameFormat: boolean;
  kind: ProviderKind;
}

/** What a relay needs besides the upstream's response. */
interface Answer {
  format: ClientFormat;
  parsed: ParsedRequest;
  who: ResponseIdentity;
  /** Keeps a Responses answer before its last bytes go out (`store`); null otherwise. */
  save: ((response: Record<string, unknown>) => Promise<void>) | null;
}

export interface KeyStatusView {
  keyId: string;
  userId: string;
  username: string | null;
  providerFamily: string;
  routeGroup: string;
  pricingPlan: string;
  monthlySpendCap: string | null;
  monthSpendUsd: string;
  balanceUsd: string;
  availableUsd: string;
  canSpend: boolean;
}

interface Admission {
  eventId: string;
  startedAt: Date;
  model: CatalogModel;
  prices: GroupPrices;
  hold: WalletHold;
  slot: Slot;
}

interface Outcome {
  status: UsageStatus;
  errorCode: string | null;
  usage: TokenUsage | null;
  /** Images produced (per-generation prices). */
  generations?: number;
  upstreamId: string | null;
}

/** A Responses request to an OpenAI-compatible upstream that serves the Responses API itself. */
function isNativeResponses(format: ClientFormat, route: RouteCandidate): boolean {
  return format.id === 'openai-responses' && route.upstream.kind === 'openai-compatible' && route.upstream.nativeResponses === true;
}

/** Whether a route's upstream answers in the client's own format (then nothing is translated). */
function speaksClientFormat(format: ClientFormat, kind: ProviderKind, route: RouteCandidate): boolean {
  return kind.speaks === format.id || isNativeResponses(format, route);
}

function tokenPricesOf(prices: GroupPrices, model: CatalogModel): TokenPrices {
  if (!('tokens' in prices)) throw new DomainError('bad_request', `The model ${model.id} is not priced by tokens here`, { reason: 'endpoint_not_supported_for_model' });
  return prices.tokens;
}

/** The public prices a usage event records: per 1M tokens, or per generation (token prices then read 0). */
function publicPricesOf(prices: GroupPrices): Pick<UsageRecord, 'publicInputUsdPer1m' | 'publicOutputUsdPer1m' | 'publicCacheReadUsdPer1m' | 'publicCacheWriteUsdPer1m' | 'publicRequestUsdPerGeneration'> {
  if ('tokens' in prices) {
    const t = prices.tokens;
    return { publicInputUsdPer1m: t.input, publicOutputUsdPer1m: t.output, publicCacheReadUsdPer1m: t.cacheRead, publicCacheWriteUsdPer1m: t.cacheWrite, publicRequestUsdPerGeneration: null };
  }
  const perGeneration = 'perGeneration' in prices ? prices.perGeneration : null;
  return { publicInputUsdPer1m: '0', publicOutputUsdPer1m: '0', publicCacheReadUsdPer1m: null, publicCacheWriteUsdPer1m: null, publicRequestUsdPerGeneration: perGeneration };
}

/**
 * The sink a relay writes its answer to: the request's concurrency slot is freed just before the
 * answer's last bytes (a JSON body, a stream's end) go out. A client at its concurrency limit that
 * sends its next request the moment it reads this one's end is then admitted, even when the release
 * has to travel to Redis. (A small class: wrapping with `Object.create(sink)` made each request's sink
 * a prototype, about 12 us of V8 bookkeeping per request.)
 */
class SlotFreeingSink implements ResponseSink {
  constructor(
    private readonly sink: ResponseSink,
    private readonly slot: Slot,
  ) {}

  get signal(): Cancellation {
    return this.sink.signal;
  }

  get firstByteAt(): number | undefined {
    return this.sink.firstByteAt;
  }

  sendJson(body: object): void {
    this.slot.release();
    this.sink.sendJson(body);
  }

  setHeader(name: string, value: string): void {
    this.sink.setHeader(name, value);
  }

  startStream(): void {
    this.sink.startStream();
  }

  write(text: string): Promise<void> | void {
    return this.sink.write(text);
  }

  end(last?: string): void {
    this.slot.release();
    this.sink.end(last);
  }
}

/** An upstream failure on its way to the client: the public error, and (for the operator's usage record) where it happened. */
class RoutedFailure extends Error {
  constructor(
    readonly publicError: DomainError,
    readonly upstreamId: string,
  ) {
    super(publicError.message);
  }
}

function routedFailure(failure: UpstreamFailure): RoutedFailure {
  return new RoutedFailure(clientErrorOf(failure), failure.upstreamId);
}


/**
 * The inference pipeline: key scope -> catalog price -> worst-case hold (in memory) -> limits ->
 * route -> upstream (failover before the first byte) -> response or stream -> settle and record.
 * Nothing here waits on PostgreSQL once an account is warm: holds are in-memory reservations and
 * settlements are written in batches.
 */
export class InferenceService {
  /** Set when a graceful stop runs out of time: every running upstream call ends, streams with a final error event. */
  private stopped = false;
  /** The running upstream calls, each ended by its client going away or by `stopRunning`. */
  private readonly upstreamCalls = new Set<Cancellation>();

  constructor(
    private readonly deps: {
      catalog: CatalogService;
      accounts: AccountsService;
      wallets: WalletStore;
      limiter: RequestLimiter;
      routes: RouteTable;
      upstreams: UpstreamClient;
      recorder: UsageRecorder;
      log: Logger;
      metrics?: Metrics;
      /** Stored Responses (`store`, `previous_response_id`, `item_reference`); without it they are refused. */
      responses?: ResponsesStorage;
      /** Hosted tools a route cannot serve: withheld from the model and named in a header (default), or refused. */
      hostedTools?: 'withhold' | 'refuse';
    },
  ) {}

  /**
   * The end of a graceful stop's drain period: requests still running stop now. Streams get a final
   * error event and are billed for what was delivered; their holds and slots are released as usual.
   */
  stopRunning(): void {
    this.stopped = true;
    for (const call of this.upstreamCalls) call.cancel();
  }

  /** The route table, for operators' tooling and the demo upstream. */
  get routes(): RouteTable {
    return this.deps.routes;
  }

  /** `GET /v1/me`: who this key is, what it may call, what it spent this month and whether it can spend now. */
  async keyStatus(principal: KeyPrincipal): Promise<KeyStatusView> {
    const { wallets } = this.deps;
    await wallets.warm(principal.userId, principal.keyId);
    const account = await this.deps.accounts.accountOf(principal.userId);
    const wallet = (await wallets.view(principal.userId, principal.keyId))!;
    const monthSpent = wallet.keyMonthSpent ?? money(0);
    const capLeft = principal.monthlySpendCap === null ? null : money(principal.monthlySpendCap).minus(monthSpent);
    return {
      keyId: principal.keyId,
      userId: principal.userId,
      username: account.username,
      providerFamily: principal.providerFamily,
      routeGroup: principal.routeGroup,
      pricingPlan: this.deps.catalog.snapshot.publicPlanName(principal.pricingPlan),
      monthlySpendCap: principal.monthlySpendCap,
      monthSpendUsd: formatUsd(monthSpent),
      balanceUsd: formatUsd(wallet.balance),
      availableUsd: formatUsd(wallet.available),
      canSpend: wallet.available.greaterThan(0) && (capLeft === null || capLeft.greaterThan(0)),
    };
  }

  /**
   * One inference request in any client format (`/v1/chat/completions`, `/v1/responses`,
   * `/v1/messages`, the bridge), JSON or SSE: validate, admit, forward, relay, settle.
   */
  async complete(call: InferenceCall, formatId: ClientFormatId, body: unknown, sink: ResponseSink): Promise<void> {
    const format = CLIENT_FORMATS[formatId];
    let save: Answer['save'] = null;
    if (formatId === 'openai-responses' && this.deps.responses) {
      const prepared = await prepareResponsesRequest(this.deps.responses, this.deps.log, call.principal, body);
      body = prepared.body;
      save = prepared.save;
    }
    const parsed = format.parse(body);
    const catalog = this.deps.catalog.snapshot;
    const model = resolveModel(catalog, call.principal, call.endpoint, parsed.canonical.model);
    format.checkCapabilities(parsed, model);
    // What a translating route cannot honour is refused now, before anything is held or sent.
    for (const route of this.deps.routes.routesOf(model.id, call.principal.routeGroup)) {
      const kind = PROVIDER_KINDS[route.upstream.kind];
      if (!kind || speaksClientFormat(format, kind, route)) continue;
      kind.check(parsed.canonical);
      if (this.deps.hostedTools === 'refuse' && parsed.withheldTools.length) {
        throw new DomainError('bad_request', `Hosted tools are not available for this model: ${parsed.withheldTools.join(', ')}; remove them from tools`, { reason: 'hosted_tool_not_supported' });
      }
    }
    const outputHold = parsed.canonical.maxOutputTokens ?? model.maxOutputTokens ?? DEFAULT_OUTPUT_HOLD;
    const admission = await this.admit(catalog, call, model, (prices) => worstCaseTokenUnits(tokenPricesOf(prices, model), promptTokenBound(parsed.canonical), outputHold));

    await this.settleAfter(call, admission, () => this.forward(call, format, parsed, admission, sink, save));
  }

  /**
   * Runs an admitted request and, on every exit path (success, refusal, upstream failure, client
   * abort, a bug), frees its slot, settles or releases its hold and records its usage event.
   */
  private async settleAfter(call: InferenceCall, admission: Admission, work: () => Promise<Outcome>): Promise<void> {
    let outcome: Outcome = { status: 'error', errorCode: 'internal_error', usage: null, upstreamId: null };
    try {
      outcome = await work();
    } catch (error) {
      if (error instanceof RoutedFailure) {
        outcome = { ...outcome, errorCode: error.publicError.reason, upstreamId: error.upstreamId };
        throw error.publicError;
      }
      if (error instanceof DomainError) outcome = { ...outcome, errorCode: error.reason };
      throw error;
    } finally {
      this.finish(call, admission, outcome);
    }
  }

  /** `POST /v1/images/generations`: one image, billed per generation at the catalog price. */
  async generateImage(call: InferenceCall, body: unknown, sink: ResponseSink): Promise<void> {
    const request = parseImageRequest(body);
    const catalog = this.deps.catalog.snapshot;
    const model = resolveModel(catalog, call.principal, call.endpoint, request.model);
    const admission = await this.admit(catalog, call, model, (prices) => {
      if (!('perGeneration' in prices)) throw new DomainError('bad_request', `The model ${model.id} is not priced per image`, { reason: 'endpoint_not_supported_for_model' });
      return toUnits(prices.perGeneration);
    });
    await this.settleAfter(call, admission, () => this.forwardImage(call, request, admission, sink));
  }

  private async forwardImage(call: InferenceCall, request: ImageRequest, admission: Admission, sink: ResponseSink): Promise<Outcome> {
    return this.viaUpstream(
      call,
      admission,
      sink,
      // Images are served by OpenAI-compatible upstreams only.
      (route) => route.upstream.kind === 'openai-compatible',
      (route, signal) => this.send(call, route, '/images/generations', toImageUpstreamRequest(request, route.upstreamModel), openAiCompatible.headers(route.upstream), signal),
      async (response, route, sink) => {
        const upstreamId = route.upstream.id;
        const read = await this.readJson(response, upstreamId, sink);
        // An image the client never received is not billed.
        if ('cancelled' in read) return { status: 'cancelled', errorCode: 'client_closed', usage: null, upstreamId };
        const image = imageOf(read.body);
        if (!image) throw routedFailure(new UpstreamFailure('server_error', upstreamId, 'image response without data[0].b64_json'));
        sink.sendJson(renderImage(image, Math.floor(Date.now() / 1000)));
        return { status: 'success', errorCode: null, usage: null, generations: 1, upstreamId };
      },
    );
  }

  /** Holds the worst case against balance and spend cap, then takes a concurrency slot. */
  private async admit(catalog: Catalog, call: InferenceCall, model: CatalogModel, worstCase: (prices: GroupPrices) => Units): Promise<Admission> {
    const { principal } = call;
    const prices = catalog.priceOf(model.id, principal.routeGroup, principal.pricingPlan);
    if (!prices) throw new DomainError('not_found', `The model ${model.id} has no price in this group`, { reason: 'model_not_found' });
    const { wallets } = this.deps;
    if (!wallets.isWarm(principal.userId, principal.keyId)) await wallets.warm(principal.userId, principal.keyId);

    const eventId = newId();
    const startedAt = new Date();
    let hold: WalletHold;
    try {
      hold = await wallets.reserve({ id: eventId, userId: principal.userId, keyId: principal.keyId, monthlySpendCap: principal.monthlySpendCap, amount: worstCase(prices) });
    } catch (error) {
      if (error instanceof DomainError) this.deps.recorder.record(this.usageRecord(call, { eventId, startedAt, model, prices }, { status: 'error', errorCode: error.reason, usage: null, upstreamId: null }, 0n));
      throw error;
    }
    try {
      const slot = await this.deps.limiter.acquire(principal);
      return { eventId, startedAt, model, prices, hold, slot };
    } catch (error) {
      wallets.release(hold.id);
      if (error instanceof DomainError && error.reason) this.deps.metrics?.refused(error.reason);
      throw error;
    }
  }

  /** Tries the routes in order until one answers; a failure before the first byte moves on to the next. */
  private async connect(
    routes: RouteCandidate[],
    signal: Cancellation,
    send: (route: RouteCandidate) => Promise<UpstreamResponse>,
  ): Promise<{ response: UpstreamResponse; route: RouteCandidate } | { failure: UpstreamFailure | null }> {
    let failure: UpstreamFailure | null = null;
    for (const route of routes) {
      if (signal.cancelled) break;
      try {
        return { response: await send(route), route };
      } catch (error) {
        if (signal.cancelled) break;
        failure = this.deps.upstreams.failureOf(error, route.upstream.id);
        // The request id is on this line through the logging scope; the detail is for the operator only.
        this.deps.log.warn({ upstream: route.upstream.id, kind: failure.kind, status: failure.status, detail: failure.detail }, 'upstream call failed');
        this.deps.metrics?.upstreamError(route.upstream.id, failure.kind);
        if (!failure.retryable) break;
      }
    }
    return { failure };
  }

  private async send(call: InferenceCall, route: RouteCandidate, path: string, body: Record<string, unknown>, headers: Record<string, string>, signal: Cancellation): Promise<UpstreamResponse> {
    // Our request id travels as OpenAI's X-Client-Request-Id, so an operator can match a provider's logs to ours.
    const response = await this.deps.upstreams.post(route.upstream, path, JSON.stringify(body), { ...headers, [CLIENT_REQUEST_ID_HEADER]: call.requestId }, signal);
    if (response.status === 200) return response;
    throw await this.deps.upstreams.failureFrom(route.upstream.id, response);
  }

  /**
   * The shared upstream leg of every request: the routes that can serve it (503 `no_route` if none),
   * the client's disconnect wired to the upstream call, failover before the first byte, then `relay`
   * of the answering route's response.
   */
  private async viaUpstream(
    call: InferenceCall,
    admission: Admission,
    sink: ResponseSink,
    accepts: (route: RouteCandidate) => boolean,
    send: (route: RouteCandidate, signal: Cancellation) => Promise<UpstreamResponse>,
    relay: (response: UpstreamResponse, route: RouteCandidate, sink: ResponseSink) => Promise<Outcome>,
  ): Promise<Outcome> {
    const routes = this.deps.routes.candidates(admission.model.id, call.principal.routeGroup).filter(accepts);
    if (!routes.length) {
      this.deps.log.error({ model: admission.model.id, group: call.principal.routeGroup }, 'no upstream route serves this model');
      throw new DomainError('unavailable', `The model ${admission.model.id} is temporarily unavailable`, { retryAfterSeconds: 30, reason: 'no_route' });
    }
    const upstreamCall = new Cancellation();
    const endUpstream = () => upstreamCall.cancel();
    sink.signal.once('abort', endUpstream);
    this.upstreamCalls.add(upstreamCall);
    // A signal that fired while the key, limits and hold were checked never fires again for a new listener.
    if (sink.signal.cancelled || this.stopped) endUpstream();
    try {
      const connected = await this.connect(routes, upstreamCall, (route) => send(route, upstreamCall));
      if (!('response' in connected)) {
        if (this.stopped && !sink.signal.cancelled) throw new DomainError('unavailable', 'The service is restarting; retry the request', { retryAfterSeconds: 1, reason: 'shutting_down' });
        if (sink.signal.cancelled || !connected.failure) return { status: 'cancelled', errorCode: 'client_closed', usage: null, upstreamId: null };
        throw routedFailure(connected.failure);
      }
      return await relay(connected.response, connected.route, new SlotFreeingSink(sink, admission.slot));
    } finally {
      sink.signal.off('abort', endUpstream);
      this.upstreamCalls.delete(upstreamCall);
    }
  }

  private async forward(call: InferenceCall, format: ClientFormat, parsed: ParsedRequest, admission: Admission, sink: ResponseSink, save: Answer['save']): Promise<Outcome> {
    const legs = new Map<RouteCandidate, UpstreamLeg>();
    const legOf = (route: RouteCandidate) => {
      let leg = legs.get(route);
      if (!leg) legs.set(route, (leg = this.upstreamLeg(call, format, parsed, route)));
      return leg;
    };
    return this.viaUpstream(
      call,
      admission,
      sink,
      (route) => PROVIDER_KINDS[route.upstream.kind] !== undefined,
      (route, signal) => {
        const leg = legOf(route);
        return this.send(call, route, leg.path, leg.body, leg.headers, signal);
      },
      async (response, route, sink) => {
        const leg = legOf(route);
        const who: ResponseIdentity = { id: admission.eventId.replaceAll('-', ''), model: admission.model.id, created: Math.floor(Date.now() / 1000) };
        const answer: Answer = { format, parsed, who: format.id === 'openai-chat' ? chatIdentity(who) : who, save };
        if (!leg.sameFormat) {
          // The hub could not give these to the model; say which, so the client is not left guessing.
          const withheld = parsed.withheldTools;
          if (withheld.length) sink.setHeader(WITHHELD_TOOLS_HEADER, withheld.join(', '));
          return parsed.canonical.stream ? this.relayStream(leg.kind, answer, response, route, sink) : this.relayJson(leg.kind, answer, response, route, sink);
        }
        return parsed.canonical.stream ? this.relaySameStream(answer, response, route, sink) : this.relaySameJson(answer, response, route, sink);
      },
    );
  }

  /**
   * How one route is called for this request: in the client's own format when the upstream speaks it
   * (chat to an OpenAI-compatible upstream, Messages to an Anthropic one, Responses to an
   * OpenAI-compatible upstream that declares native Responses support), else through the hub.
   */
  private upstreamLeg(call: InferenceCall, format: ClientFormat, parsed: ParsedRequest, route: RouteCandidate): UpstreamLeg {
    const kind = PROVIDER_KINDS[route.upstream.kind]!;
    const headers = kind.headers(route.upstream);
    if (isNativeResponses(format, route)) {
      // The conversation is already whole (expanded from our store): the upstream keeps no state for us.
      const { previous_response_id: _expanded, ...body } = parsed.raw;
      return { path: '/responses', headers, body: { ...body, model: route.upstreamModel }, sameFormat: true, kind };
    }
    if (kind.speaks !== format.id) return { path: kind.path, headers, body: kind.body(parsed.canonical, route.upstreamModel), sameFormat: false, kind };
    // Beta features of the Messages API reach an Anthropic upstream as the client asked for them.
    if (kind.speaks === 'anthropic-messages' && call.anthropicBeta) headers['anthropic-beta'] = call.anthropicBeta;
    return { path: kind.path, headers, body: kind.passthrough(parsed.raw, route.upstreamModel), sameFormat: true, kind };
  }

  /** Reads a whole JSON answer (bounded); a client that left meanwhile makes the request `cancelled`. */
  private async readJson(response: UpstreamResponse, upstreamId: string, sink: ResponseSink): Promise<{ body: any } | { cancelled: true }> {
    try {
      const length = Number(response.headers['content-length']);
      if (length > MAX_JSON_RESPONSE_BYTES) throw new UpstreamFailure('server_error', upstreamId, `response of ${length} bytes`);
      return { body: JSON.parse(await response.body.text()) };
    } catch (error) {
      if (sink.signal.cancelled) return { cancelled: true };
      const failure = error instanceof SyntaxError ? new UpstreamFailure('server_error', upstreamId, 'response is not JSON') : this.deps.upstreams.failureOf(error, upstreamId);
      this.deps.log.warn({ upstream: upstreamId, kind: failure.kind, detail: failure.detail }, 'upstream response unreadable');
      throw routedFailure(failure);
    }
  }

  private async relayJson(kind: ProviderKind, answer: Answer, response: UpstreamResponse, route: RouteCandidate, sink: ResponseSink): Promise<Outcome> {
    const { format, parsed, who } = answer;
    const upstreamId = route.upstream.id;
    const read = await this.readJson(response, upstreamId, sink);
    if ('cancelled' in read) return { status: 'cancelled', errorCode: 'client_closed', usage: this.estimatedUsage(parsed, ''), upstreamId };
    const reply: CanonicalResponse = kind.fromResponse(read.body);
    if (!reply.usage) this.deps.log.warn({ upstream: upstreamId }, 'upstream reported no usage; billing an estimate');
    const usage = reply.usage ?? this.estimatedUsage(parsed, textOf(reply.parts));
    const body = format.render({ ...reply, usage }, who, parsed);
    await answer.save?.(body as Record<string, unknown>);
    sink.sendJson(body);
    return { status: 'success', errorCode: null, usage, upstreamId };
  }

  /**
   * Relays an upstream stream through the hub: each upstream event is decoded to canonical events and
   * encoded in the client's format as soon as it arrives. Usage comes from the upstream; a cut or
   * cancelled stream bills an estimate of what was delivered.
   */
  private async relayStream(kind: ProviderKind, answer: Answer, response: UpstreamResponse, route: RouteCandidate, sink: ResponseSink): Promise<Outcome> {
    const { format, parsed, who } = answer;
    const upstreamId = route.upstream.id;
    const splitter = new SseSplitter();
    const decoder = kind.decoder();
    const encoder = format.encoder(who, parsed);
    let usage: CanonicalUsage | null = null;
    let delivered = '';
    let failure: UpstreamFailure | null = null;
    sink.startStream();
    // Some formats open their stream only with the first upstream event (Messages: to put early usage in message_start).
    const opening = encoder.start();
    if (opening) await sink.write(opening);
    try {
      await eachChunk(response.body, (chunk) => {
        let out = '';
        for (const event of splitter.push(chunk)) {
          for (const canonical of decoder.push(event)) {
            if (canonical.type === 'usage') usage = canonical.usage;
            else if (canonical.type === 'text_delta' || canonical.type === 'reasoning_delta') delivered += canonical.text;
            else if (canonical.type === 'tool_call_delta') delivered += canonical.argumentsDelta;
            out += encoder.event(canonical);
          }
        }
        if (out) return sink.write(out);
      });
    } catch (error) {
      if (!sink.signal.cancelled) failure = this.deps.upstreams.failureOf(error, upstreamId);
    }
    if (decoder.error) failure ??= this.deps.upstreams.failure('server_error', upstreamId, `stream error event: ${decoder.error}`);

    if (sink.signal.cancelled) return { status: 'cancelled', errorCode: 'client_closed', usage: usage ?? this.estimatedUsage(parsed, delivered), upstreamId };
    if (decoder.done && !failure) {
      if (!usage) this.deps.log.warn({ upstream: upstreamId }, 'upstream stream reported no usage; billing an estimate');
      usage ??= this.estimatedUsage(parsed, delivered);
      const last = encoder.finish(usage);
      if (answer.save) {
        const final = finalResponseOf(last);
        if (final) await answer.save(final);
      }
      sink.end(last);
      return { status: 'success', errorCode: null, usage, upstreamId };
    }
    return this.interrupted(sink, failure, upstreamId, encoder.fail.bind(encoder), usage ?? this.estimatedUsage(parsed, delivered));
  }

  /** A stream that broke after the client got its first byte: no failover now; say so in-band, bill what was delivered. */
  private async interrupted(sink: ResponseSink, failure: UpstreamFailure | null, upstreamId: string, frame: (message: string, code: string) => string, usage: CanonicalUsage): Promise<Outcome> {
    if (this.stopped) {
      sink.end(frame('The service is restarting and ended this stream; retry the request', 'shutting_down'));
      return { status: 'error', errorCode: 'shutting_down', usage, upstreamId };
    }
    const cause = failure ?? new UpstreamFailure('connection', upstreamId, 'stream ended early');
    this.deps.log.warn({ upstream: upstreamId, kind: cause.kind, detail: cause.detail }, 'upstream stream failed mid-way');
    sink.end(frame(clientErrorOf(cause).message, 'stream_interrupted'));
    return { status: 'error', errorCode: 'stream_interrupted', usage, upstreamId };
  }

  /** An answer in the client's own format: the upstream's body, rewritten (our id, public model, documented fields). */
  private async relaySameJson(answer: Answer, response: UpstreamResponse, route: RouteCandidate, sink: ResponseSink): Promise<Outcome> {
    const { format, parsed, who } = answer;
    const upstreamId = route.upstream.id;
    const read = await this.readJson(response, upstreamId, sink);
    if ('cancelled' in read) return { status: 'cancelled', errorCode: 'client_closed', usage: this.estimatedUsage(parsed, ''), upstreamId };
    const rewritten = SAME_FORMAT[format.id].json(read.body, who, parsed);
    if (!rewritten.usage) this.deps.log.warn({ upstream: upstreamId }, 'upstream reported no usage; billing an estimate');
    const usage = rewritten.usage ?? this.estimatedUsage(parsed, rewritten.deliveredText);
    await answer.save?.(rewritten.body as Record<string, unknown>);
    sink.sendJson(rewritten.body);
    return { status: 'success', errorCode: null, usage, upstreamId };
  }

  /**
   * A stream in the client's own format, relayed event by event: each upstream event is rewritten and
   * written as soon as it arrives (only an unfinished event is ever kept), so what the hub does not
   * model (logprobs, thinking blocks and signatures, reasoning items) reaches the client.
   */
  private async relaySameStream(answer: Answer, response: UpstreamResponse, route: RouteCandidate, sink: ResponseSink): Promise<Outcome> {
    const { format, parsed, who } = answer;
    const upstreamId = route.upstream.id;
    const splitter = new SseSplitter();
    const stream: SameFormatStream = SAME_FORMAT[format.id].stream(who, parsed);
    let saved = answer.save === null;
    let failure: UpstreamFailure | null = null;
    sink.startStream();
    try {
      await eachChunk(response.body, (chunk) => {
        let out = '';
        for (const event of splitter.push(chunk)) out += stream.push(event);
        if (!saved && stream.done && stream.finalResponse) {
          // Kept before the client reads the end, so its next request can already refer to it.
          saved = true;
          return answer.save!(stream.finalResponse).then(() => (out ? sink.write(out) : undefined));
        }
        // Synchronous unless the client pushes back: a promise per chunk would pause the body every time.
        if (out) return sink.write(out);
      });
    } catch (error) {
      if (!sink.signal.cancelled) failure = this.deps.upstreams.failureOf(error, upstreamId);
    }
    if (stream.error) failure ??= this.deps.upstreams.failure('server_error', upstreamId, `stream error event: ${stream.error}`);

    const billed = (): CanonicalUsage => stream.usage ?? this.estimatedUsage(parsed, stream.delivered);
    if (sink.signal.cancelled) return { status: 'cancelled', errorCode: 'client_closed', usage: billed(), upstreamId };
    if (stream.done && !failure) {
      sink.end(stream.finish());
      if (!stream.usage) this.deps.log.warn({ upstream: upstreamId }, 'upstream stream reported no usage; billing an estimate');
      return { status: 'success', errorCode: null, usage: billed(), upstreamId };
    }
    return this.interrupted(sink, failure, upstreamId, stream.fail.bind(stream), billed());
  }

  /** Usage the upstream never reported: the prompt and the delivered text, estimated. */
  private estimatedUsage(parsed: ParsedRequest, deliveredText: string): CanonicalUsage {
    return { inputTokens: estimateTokens(promptText(parsed.canonical)), outputTokens: estimateTokens(deliveredText), cacheReadTokens: null, cacheWriteTokens: null, reasoningTokens: null };
  }

  /** Settles or releases the hold, frees the slot (if the answer has not) and records the usage event. Runs on every exit path. */
  private finish(call: InferenceCall, admission: Admission, outcome: Outcome): void {
    admission.slot.release();
    const cost = outcome.generations ? costUnitsOf(admission.prices, { generations: outcome.generations }) : outcome.usage ? costUnitsOf(admission.prices, { tokens: outcome.usage }) : 0n;
    const owner = { userId: call.principal.userId, keyId: call.principal.keyId };
    if (cost > 0n) this.deps.wallets.settle(admission.hold.id, cost, owner);
    else this.deps.wallets.release(admission.hold.id, owner);
    this.deps.recorder.record(this.usageRecord(call, admission, outcome, cost));
  }

  private usageRecord(call: InferenceCall, admission: Pick<Admission, 'eventId' | 'startedAt' | 'model' | 'prices'>, outcome: Outcome, cost: Units): UsageRecord {
    const { principal } = call;
    const catalog = this.deps.catalog.snapshot;
    const usage = outcome.usage;
    const official = admission.model.official;
    const officialCost = usage && official && 'tokens' in official ? costUnitsOf(official, { tokens: usage }) : null;
    const completedAt = new Date();
    return {
      id: admission.eventId,
      userId: principal.userId,
      apiKeyId: principal.keyId,
      requestId: call.requestId,
      clientSurface: call.clientSurface,
      createdAt: admission.startedAt,
      completedAt,
      providerFamily: admission.model.family,
      routeGroup: principal.routeGroup,
      routeGroupLabel: catalog.groups.get(principal.routeGroup)?.label ?? principal.routeGroup,
      endpoint: call.endpoint,
      model: admission.model.id,
      status: outcome.status,
      errorCode: outcome.errorCode,
      latencyMs: completedAt.getTime() - admission.startedAt.getTime(),
      promptTokens: usage?.inputTokens ?? null,
      completionTokens: usage?.outputTokens ?? null,
      cacheReadTokens: usage?.cacheReadTokens ?? null,
      cacheWriteTokens: usage?.cacheWriteTokens ?? null,
      totalTokens: usage ? usage.inputTokens + usage.outputTokens : null,
      cacheHitRatio: usage && usage.cacheReadTokens !== null && usage.inputTokens > 0 ? ratioText(usage.cacheReadTokens, usage.inputTokens) : null,
      ...publicPricesOf(admission.prices),
      amountUsd: formatUnits(cost),
      officialCostUsd: officialCost === null ? null : formatUnits(officialCost),
      savedUsd: officialCost === null ? null : formatUnits(officialCost > cost ? officialCost - cost : 0n),
      upstreamId: outcome.upstreamId,
    };
  }
}
