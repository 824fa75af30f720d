import { worstCaseTokenUnits } from '../billing/cost.js';
import type { WalletHold, WalletStore } from '../billing/wallets.js';
import type { Catalog } from '../catalog/catalog.js';
import type { CatalogModel, GroupPrices, TokenPrices } from '../catalog/catalog.schemas.js';
import type { CatalogService } from '../catalog/catalog.service.js';
import type { Metrics } from '../metrics.js';
import { DomainError } from '../shared/errors.js';
import { newTimeOrderedId } from '../shared/ids.js';
import type { Logger } from '../shared/logging.js';
import { toUnits, type Units } from '../shared/money.js';
import type { RouteTable } from '../upstreams/routes.js';
import { promptTokenBound } from './canonical.js';
import type { ClientFormat, ParsedRequest } from './formats/client-format.js';
import type { InferenceCall } from './inference-call.js';
import { LimitRefusal, type RequestLimiter } from './limits.js';
import { PROVIDER_KINDS } from './providers/index.js';
import type { ResponsesStorage } from './responses-state.js';
import { resolveModel } from './scope.js';
import type { Admitted, Settlement } from './settlement.js';
import { speaksClientFormat } from './upstream-leg.js';
import { parseImageRequest, type ImageRequest } from './openai-images.js';

/** Output tokens held for a request that sets no limit, when the catalog names no cap for the model. */
const DEFAULT_OUTPUT_HOLD = 16_384;

/** A text request that passed admission: parsed in its client format, and what a stored Responses answer is kept with. */
export interface AdmittedText {
  parsed: ParsedRequest;
  /** Keeps a Responses answer before its last bytes go out (`store`); null otherwise. */
  save: ((response: Record<string, unknown>) => Promise<void>) | null;
  admitted: Admitted;
}

function tokenPricesOf(prices: GroupPrices, model: CatalogModel): TokenPrices {
  if (!('tokens' in prices)) throw new DomainError('bad_request', `The model ${model.id} is not priced by tokens here`, { reason: 'endpoint_not_supported_for_model' });
  return prices.tokens;
}

/**
 * The first stage: the request is read in its client format, checked against the key's scope, the
 * model's capabilities and what every route it may take can honour, then the worst case is held
 * against balance and spend cap (in memory, no database round trip once the account is warm) and a
 * concurrency slot is taken. Nothing is held for a request that is refused here.
 */
export class Admission {
  constructor(
    private readonly deps: {
      catalog: CatalogService;
      wallets: WalletStore;
      limiter: RequestLimiter;
      routes: RouteTable;
      settlement: Settlement;
      log: Logger;
      metrics?: Metrics;
      /** Stored Responses (`store`, `previous_response_id`, `item_reference`); without it they are refused. */
      responses?: ResponsesStorage;
      /** Hosted tools a route cannot serve: withheld from the model and named in a header (default), or refused. */
      hostedTools?: 'withhold' | 'refuse';
      /** Told of each request a limit refused (the key's `limit_refused` events, src/events/limit-refusals.ts). */
      refusals?: { note(userId: string, keyId: string, reason: string): void };
    },
  ) {}

  /** `/v1/chat/completions`, `/v1/responses`, `/v1/messages` and the bridge. */
  async text(call: InferenceCall, format: ClientFormat, body: unknown): Promise<AdmittedText> {
    let save: AdmittedText['save'] = null;
    if (format.prepare) {
      const prepared = await format.prepare(body, { responses: this.deps.responses, log: this.deps.log, owner: call.principal });
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
    const admitted = await this.hold(catalog, call, model, (prices) => worstCaseTokenUnits(tokenPricesOf(prices, model), promptTokenBound(parsed.canonical), outputHold));
    return { parsed, save, admitted };
  }

  /** `/v1/images/generations`: one image, held at the catalog's price per generation. */
  async image(call: InferenceCall, body: unknown): Promise<{ request: ImageRequest; admitted: Admitted }> {
    const request = parseImageRequest(body);
    const catalog = this.deps.catalog.snapshot;
    const model = resolveModel(catalog, call.principal, call.endpoint, request.model);
    const admitted = await this.hold(catalog, call, model, (prices) => {
      if (!('perGeneration' in prices)) throw new DomainError('bad_request', `The model ${model.id} is not priced per image`, { reason: 'endpoint_not_supported_for_model' });
      return toUnits(prices.perGeneration);
    });
    return { request, admitted };
  }

  /** Holds the worst case against balance and spend cap, then takes a concurrency slot. */
  private async hold(catalog: Catalog, call: InferenceCall, model: CatalogModel, worstCase: (prices: GroupPrices) => Units): Promise<Admitted> {
    const { principal } = call;
    const prices = catalog.priceOf(model.id, principal.routeGroup, principal.pricingPlan);
    if (!prices) throw new DomainError('not_found', `The model ${model.id} has no price in this group`, { reason: 'model_not_found' });
    const { wallets } = this.deps;
    const ownerCapped = principal.ownerMonthlyCap !== null;
    if (!wallets.isWarm(principal.userId, principal.keyId, principal.memberId, ownerCapped)) await wallets.warm(principal.userId, principal.keyId, principal.memberId, ownerCapped);

    const eventId = newTimeOrderedId();
    const startedAt = new Date();
    const request = {
      id: eventId,
      userId: principal.userId,
      keyId: principal.keyId,
      monthlySpendCap: principal.monthlySpendCap,
      memberId: principal.memberId,
      memberMonthlyCap: principal.memberMonthlyCap,
      ownerMonthlyCap: principal.ownerMonthlyCap,
      amount: worstCase(prices),
    };
    const attempt = { eventId, startedAt, model, prices };
    const { limiter } = this.deps;
    if (limiter.holdAndAcquire) {
      try {
        return { ...attempt, ...(await limiter.holdAndAcquire(request, principal)) };
      } catch (error) {
        throw this.refused(call, attempt, error);
      }
    }
    let hold: WalletHold;
    try {
      hold = await wallets.reserve(request);
    } catch (error) {
      throw this.refused(call, attempt, error);
    }
    try {
      return { ...attempt, hold, slot: await limiter.acquire(principal) };
    } catch (error) {
      wallets.release(hold.id);
      throw this.refused(call, attempt, error);
    }
  }

  /** A refusal by the money is recorded as a failed usage event; one by the limits is counted and told to the key's watchers. */
  private refused(call: InferenceCall, attempt: Pick<Admitted, 'eventId' | 'startedAt' | 'model' | 'prices'>, error: unknown): unknown {
    if (!(error instanceof DomainError)) return error;
    if (error instanceof LimitRefusal) {
      this.deps.metrics?.refused(error.reason);
      this.deps.refusals?.note(call.principal.userId, call.principal.keyId, error.reason);
    } else this.deps.settlement.refused(call, attempt, error);
    return error;
  }
}
