import { Decimal } from 'decimal.js';
import { costOf, tokenCost, worstCaseTokenCost, type TokenUsage } from '../billing/cost.js';
import type { WalletHold, Wallets } from '../billing/wallets.js';
import type { Catalog } from '../catalog/catalog.js';
import type { CatalogModel, Endpoint, TokenPrices } from '../catalog/catalog.schemas.js';
import type { CatalogService } from '../catalog/catalog.service.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import type { KeyPrincipal } from '../keys/keys.service.js';
import { DomainError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import type { Logger } from '../shared/logging.js';
import { formatUsd, money } from '../shared/money.js';
import type { UsageRecord, UsageRecorder, UsageStatus } from '../usage/usage-recorder.js';
import type { Limiter, Slot } from './limits.js';
import { callChatCompletions } from './providers/openai-compatible/chat.js';
import type { RouteCandidate, RouteTable } from './routes.js';
import { estimateTokens, SseSplitter } from './sse.js';
import {
  checkChatCapabilities,
  deliveredTextOf,
  outputLimitOf,
  parseChatRequest,
  promptText,
  promptTokenBound,
  publicChunk,
  publicCompletion,
  usageOf,
  type ChatRequest,
  type PublicIdentity,
} from './translate/openai-chat.js';
import { failureOf, UpstreamFailure, type UpstreamClient, type UpstreamResponse } from './upstream-client.js';

/** Output tokens held for a request that sets no limit, when the catalog names no cap for the model. */
const DEFAULT_OUTPUT_HOLD = 16_384;
/** Largest non-streamed upstream response we accept. */
const MAX_JSON_RESPONSE_BYTES = 64 * 1024 * 1024;

/** Where a response goes. Transports implement it; the service never sees `req`/`res`. */
export interface ResponseSink {
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  sendJson(body: object): void;
  /** Starts a 200 server-sent-events response. */
  startStream(): void;
  /** Resolves when the client can take more (backpressure), or at once if it is gone. */
  write(text: string): Promise<void>;
  end(): void;
}

export interface InferenceCall {
  principal: KeyPrincipal;
  /** The request id shown to the client (`x-request-id`); the event id below is ours. */
  requestId: string;
  endpoint: Endpoint;
  clientSurface: string;
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
  prices: TokenPrices;
  hold: WalletHold;
  slot: Slot;
}

interface Outcome {
  status: UsageStatus;
  errorCode: string | null;
  usage: TokenUsage | null;
  upstreamId: string | null;
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

/** What a failed upstream call becomes for the client: our code and words, never the upstream's. */
function clientErrorOf(failure: UpstreamFailure): DomainError {
  switch (failure.kind) {
    case 'rate_limited':
      return new DomainError('rate_limited', 'The model is receiving too many requests right now; retry shortly', { retryAfterSeconds: failure.retryAfterSeconds ?? 5, reason: 'upstream_rate_limited' });
    case 'timeout':
      return new DomainError('unavailable', 'The model did not answer in time; retry shortly', { retryAfterSeconds: 5, reason: 'upstream_timeout' });
    case 'rejected':
      return /context_length_exceeded|maximum context length/i.test(failure.detail)
        ? new DomainError('bad_request', "The request is longer than this model's context window", { reason: 'context_length_exceeded' })
        : new DomainError('bad_request', 'The model could not process this request; check its parameters', { reason: 'request_rejected' });
    case 'connection':
    case 'server_error':
    case 'misconfigured':
      return new DomainError('bad_gateway', 'The model route failed; retry shortly', { reason: 'upstream_error' });
  }
}

/**
 * The inference pipeline: key scope -> catalog price -> worst-case hold (in memory) -> limits ->
 * route -> upstream (failover before the first byte) -> response or stream -> settle and record.
 * Nothing here waits on PostgreSQL once an account is warm: holds are in-memory reservations and
 * settlements are written in batches.
 */
export class InferenceService {
  constructor(
    private readonly deps: {
      catalog: CatalogService;
      accounts: AccountsService;
      wallets: Wallets;
      limiter: Limiter;
      routes: RouteTable;
      upstreams: UpstreamClient;
      recorder: UsageRecorder;
      log: Logger;
    },
  ) {}

  /** The route table, for operators' tooling and the demo upstream. */
  get routes(): RouteTable {
    return this.deps.routes;
  }

  /** `GET /v1/me`: who this key is, what it may call, what it spent this month and whether it can spend now. */
  async keyStatus(principal: KeyPrincipal): Promise<KeyStatusView> {
    const { wallets } = this.deps;
    await wallets.warm(principal.userId, principal.keyId);
    const account = await this.deps.accounts.accountOf(principal.userId);
    const wallet = wallets.view(principal.userId, principal.keyId)!;
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

  /** `POST /v1/chat/completions`: OpenAI chat completions, JSON or SSE. */
  async chatCompletions(call: InferenceCall, body: unknown, sink: ResponseSink): Promise<void> {
    const request = parseChatRequest(body);
    const catalog = this.deps.catalog.snapshot;
    const model = this.resolveModel(catalog, call, request.model);
    checkChatCapabilities(request, model);
    const outputHold = outputLimitOf(request) ?? model.maxOutputTokens ?? DEFAULT_OUTPUT_HOLD;
    const admission = await this.admit(catalog, call, model, (prices) => worstCaseTokenCost(prices, promptTokenBound(request), outputHold));

    let outcome: Outcome = { status: 'error', errorCode: 'internal_error', usage: null, upstreamId: null };
    try {
      outcome = await this.forwardChat(call, request, admission, sink);
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

  /**
   * Which catalog model a key may call here: 404 for an unknown or invisible model, 403 when the key's
   * scope offers nothing on this endpoint (SPEC.md 4.6 rule 3) or does not include the model, 400 when
   * the model is not served on this endpoint (rule 2).
   */
  private resolveModel(catalog: Catalog, call: InferenceCall, modelId: string): CatalogModel {
    const scope = { family: call.principal.providerFamily, group: call.principal.routeGroup };
    const model = catalog.models.get(modelId);
    const visible = model && (Object.keys(model.groups).some((g) => catalog.groups.get(g)?.public) || catalog.allows(scope, model));
    if (!model || !visible) throw new DomainError('not_found', `The model ${JSON.stringify(modelId)} does not exist`, { reason: 'model_not_found' });
    if (!catalog.data.models.some((m) => m.family === scope.family && m.endpoints.includes(call.endpoint))) {
      throw new DomainError('forbidden', `Keys of this scope are not accepted on ${call.endpoint}`, { reason: 'key_scope_denied' });
    }
    if (!catalog.allows(scope, model)) {
      throw new DomainError('forbidden', `This key's scope does not include the model ${model.id}`, { reason: 'key_scope_denied' });
    }
    if (!model.endpoints.includes(call.endpoint)) {
      throw new DomainError('bad_request', `The model ${model.id} is not served on ${call.endpoint}; use ${model.endpoints.join(' or ')}`, { reason: 'endpoint_not_supported_for_model' });
    }
    return model;
  }

  /** Holds the worst case against balance and spend cap, then takes a concurrency slot. */
  private async admit(catalog: Catalog, call: InferenceCall, model: CatalogModel, worstCase: (prices: TokenPrices) => Decimal): Promise<Admission> {
    const { principal } = call;
    const prices = catalog.priceOf(model.id, principal.routeGroup, principal.pricingPlan);
    if (!prices || !('tokens' in prices)) throw new DomainError('not_found', `The model ${model.id} has no token price in this group`, { reason: 'model_not_found' });
    const { wallets } = this.deps;
    if (!wallets.isWarm(principal.userId, principal.keyId)) await wallets.warm(principal.userId, principal.keyId);

    const eventId = newId();
    const startedAt = new Date();
    let hold: WalletHold;
    try {
      hold = wallets.reserve({ id: eventId, userId: principal.userId, keyId: principal.keyId, monthlySpendCap: principal.monthlySpendCap, amount: worstCase(prices.tokens) });
    } catch (error) {
      if (error instanceof DomainError) this.deps.recorder.record(this.usageRecord(call, { eventId, startedAt, model, prices: prices.tokens }, { status: 'error', errorCode: error.reason, usage: null, upstreamId: null }, money(0)));
      throw error;
    }
    try {
      const slot = this.deps.limiter.acquire(principal.keyId, principal);
      return { eventId, startedAt, model, prices: prices.tokens, hold, slot };
    } catch (error) {
      wallets.release(hold.id);
      throw error;
    }
  }

  /** Tries the routes in order until one answers; a failure before the first byte moves on to the next. */
  private async connect(
    routes: RouteCandidate[],
    signal: AbortSignal,
    send: (route: RouteCandidate) => Promise<UpstreamResponse>,
  ): Promise<{ response: UpstreamResponse; route: RouteCandidate } | { failure: UpstreamFailure | null }> {
    let failure: UpstreamFailure | null = null;
    for (const route of routes) {
      if (signal.aborted) break;
      try {
        return { response: await send(route), route };
      } catch (error) {
        if (signal.aborted) break;
        failure = failureOf(error, route.upstream.id);
        // The request id is on this line through the logging scope; the detail is for the operator only.
        this.deps.log.warn({ upstream: route.upstream.id, kind: failure.kind, status: failure.status, detail: failure.detail }, 'upstream call failed');
        if (!failure.retryable) break;
      }
    }
    return { failure };
  }

  private async forwardChat(call: InferenceCall, request: ChatRequest, admission: Admission, sink: ResponseSink): Promise<Outcome> {
    const routes = this.deps.routes.candidates(admission.model.id, call.principal.routeGroup);
    if (!routes.length) {
      this.deps.log.error({ model: admission.model.id, group: call.principal.routeGroup }, 'no upstream route serves this model');
      throw new DomainError('unavailable', `The model ${admission.model.id} is temporarily unavailable`, { retryAfterSeconds: 30, reason: 'no_route' });
    }
    const upstreamAbort = new AbortController();
    const onClientGone = () => upstreamAbort.abort();
    sink.signal.addEventListener('abort', onClientGone, { once: true });
    try {
      const connected = await this.connect(routes, upstreamAbort.signal, (route) => callChatCompletions(this.deps.upstreams, route, request, upstreamAbort.signal));
      if (!('response' in connected)) {
        if (sink.signal.aborted || !connected.failure) return { status: 'cancelled', errorCode: 'client_closed', usage: null, upstreamId: null };
        throw routedFailure(connected.failure);
      }
      const who: PublicIdentity = { id: `chatcmpl-${admission.eventId.replaceAll('-', '')}`, model: admission.model.id, created: Math.floor(Date.now() / 1000) };
      return request.stream
        ? await this.relayChatStream(request, connected.response, connected.route, who, sink)
        : await this.relayChatJson(request, connected.response, connected.route, who, sink);
    } finally {
      sink.signal.removeEventListener('abort', onClientGone);
    }
  }

  private async relayChatJson(request: ChatRequest, response: UpstreamResponse, route: RouteCandidate, who: PublicIdentity, sink: ResponseSink): Promise<Outcome> {
    const upstreamId = route.upstream.id;
    let parsed: any;
    try {
      const length = Number(response.headers['content-length']);
      if (length > MAX_JSON_RESPONSE_BYTES) throw new UpstreamFailure('server_error', upstreamId, `response of ${length} bytes`);
      parsed = JSON.parse(await response.body.text());
    } catch (error) {
      if (sink.signal.aborted) return { status: 'cancelled', errorCode: 'client_closed', usage: this.estimatedUsage(request, ''), upstreamId };
      const failure = error instanceof SyntaxError ? new UpstreamFailure('server_error', upstreamId, 'response is not JSON') : failureOf(error, upstreamId);
      this.deps.log.warn({ upstream: upstreamId, kind: failure.kind, detail: failure.detail }, 'upstream response unreadable');
      throw routedFailure(failure);
    }
    const reported = usageOf(parsed?.usage);
    const usage = reported ?? this.estimatedUsage(request, (parsed?.choices ?? []).map((c: any) => `${c?.message?.content ?? ''}${JSON.stringify(c?.message?.tool_calls ?? '')}`).join(''));
    if (!reported) this.deps.log.warn({ upstream: upstreamId }, 'upstream reported no usage; billing an estimate');
    sink.sendJson(publicCompletion(parsed, who, usage));
    return { status: 'success', errorCode: null, usage, upstreamId };
  }

  /**
   * Relays an SSE stream event by event: each upstream event is rewritten to its public form and
   * written as soon as it arrives (only an unfinished event is ever kept). Usage comes from the
   * upstream's final chunk; a cut or cancelled stream bills an estimate of what was delivered.
   */
  private async relayChatStream(request: ChatRequest, response: UpstreamResponse, route: RouteCandidate, who: PublicIdentity, sink: ResponseSink): Promise<Outcome> {
    const upstreamId = route.upstream.id;
    const clientWantsUsage = request.stream_options?.include_usage === true;
    const splitter = new SseSplitter();
    let usage: TokenUsage | null = null;
    let delivered = '';
    let done = false;
    let failure: UpstreamFailure | null = null;
    sink.startStream();
    try {
      for await (const chunk of response.body) {
        let out = '';
        for (const event of splitter.push(chunk as Uint8Array)) {
          if (event.data === '[DONE]') {
            done = true;
            continue;
          }
          let parsed: any;
          try {
            parsed = JSON.parse(event.data);
          } catch {
            continue;
          }
          if (parsed?.error) {
            failure = new UpstreamFailure('server_error', upstreamId, `stream error event: ${event.data.slice(0, 500)}`);
            continue;
          }
          usage = usageOf(parsed?.usage) ?? usage;
          delivered += deliveredTextOf(parsed);
          const usageOnly = Array.isArray(parsed?.choices) && parsed.choices.length === 0;
          if (usageOnly && !clientWantsUsage) continue;
          out += `data: ${JSON.stringify(publicChunk(parsed, who, clientWantsUsage ? usageOf(parsed?.usage) : null))}\n\n`;
        }
        if (out) await sink.write(out);
      }
    } catch (error) {
      if (!sink.signal.aborted) failure = failureOf(error, upstreamId);
    }

    if (sink.signal.aborted) return { status: 'cancelled', errorCode: 'client_closed', usage: usage ?? this.estimatedUsage(request, delivered), upstreamId };
    if (done && !failure) {
      await sink.write('data: [DONE]\n\n');
      sink.end();
      if (!usage) this.deps.log.warn({ upstream: upstreamId }, 'upstream stream reported no usage; billing an estimate');
      return { status: 'success', errorCode: null, usage: usage ?? this.estimatedUsage(request, delivered), upstreamId };
    }
    // The stream broke after the client got its first byte: no failover now. Say so in-band, bill what was delivered.
    failure ??= new UpstreamFailure('connection', upstreamId, 'stream ended without [DONE]');
    this.deps.log.warn({ upstream: upstreamId, kind: failure.kind, detail: failure.detail }, 'upstream stream failed mid-way');
    const error = clientErrorOf(failure);
    await sink.write(`data: ${JSON.stringify({ error: { message: error.message, type: 'server_error', code: 'stream_interrupted', param: null } })}\n\n`);
    sink.end();
    return { status: 'error', errorCode: 'stream_interrupted', usage: usage ?? this.estimatedUsage(request, delivered), upstreamId };
  }

  /** Usage the upstream never reported: the prompt and the delivered text, estimated. */
  private estimatedUsage(request: ChatRequest, deliveredText: string): TokenUsage {
    return { inputTokens: estimateTokens(promptText(request)), outputTokens: estimateTokens(deliveredText), cacheReadTokens: null, cacheWriteTokens: null };
  }

  /** Settles or releases the hold, frees the slot and records the usage event. Runs on every exit path. */
  private finish(call: InferenceCall, admission: Admission, outcome: Outcome): void {
    admission.slot.release();
    const cost = outcome.usage ? tokenCost(outcome.usage, admission.prices) : money(0);
    const owner = { userId: call.principal.userId, keyId: call.principal.keyId };
    if (cost.greaterThan(0)) this.deps.wallets.settle(admission.hold.id, cost, owner);
    else this.deps.wallets.release(admission.hold.id, owner);
    this.deps.recorder.record(this.usageRecord(call, admission, outcome, cost));
  }

  private usageRecord(call: InferenceCall, admission: Pick<Admission, 'eventId' | 'startedAt' | 'model' | 'prices'>, outcome: Outcome, cost: Decimal): UsageRecord {
    const { principal } = call;
    const catalog = this.deps.catalog.snapshot;
    const usage = outcome.usage;
    const official = admission.model.official;
    const officialCost = usage && official && 'tokens' in official ? costOf(official, { tokens: usage }) : null;
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
      cacheHitRatio: usage && usage.cacheReadTokens !== null && usage.inputTokens > 0 ? money(usage.cacheReadTokens).dividedBy(usage.inputTokens).toDecimalPlaces(4).toFixed() : null,
      publicInputUsdPer1m: admission.prices.input,
      publicOutputUsdPer1m: admission.prices.output,
      publicCacheReadUsdPer1m: admission.prices.cacheRead,
      publicCacheWriteUsdPer1m: admission.prices.cacheWrite,
      publicRequestUsdPerGeneration: null,
      amountUsd: formatUsd(cost),
      officialCostUsd: officialCost ? formatUsd(officialCost) : null,
      savedUsd: officialCost ? formatUsd(Decimal.max(0, officialCost.minus(cost))) : null,
      upstreamId: outcome.upstreamId,
    };
  }
}
