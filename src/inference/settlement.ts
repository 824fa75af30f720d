import { costUnitsOf, upstreamCostUnits, type TokenUsage } from '../billing/cost.js';
import type { UpstreamPrices } from '../upstreams/model.js';
import type { WalletHold, WalletStore } from '../billing/wallets.js';
import type { CatalogModel, GroupPrices } from '../catalog/catalog.schemas.js';
import type { CatalogService } from '../catalog/catalog.service.js';
import { DomainError, httpStatusOf } from '../shared/errors.js';
import { formatUnits, ratioText, type Units } from '../shared/money.js';
import type { UsageRecord, UsageRecorder, UsageStatus } from '../usage/usage-recorder.js';
import type { InferenceCall } from './inference-call.js';
import type { Slot } from './limits.js';

/** A request that passed admission: its event id, what it is priced at, its hold and its concurrency slot. */
export interface Admitted {
  eventId: string;
  startedAt: Date;
  model: CatalogModel;
  prices: GroupPrices;
  hold: WalletHold;
  slot: Slot;
}

/** How a request ended, for its bill and its usage event. */
export interface Outcome {
  status: UsageStatus;
  errorCode: string | null;
  usage: TokenUsage | null;
  /** Images produced (per-generation prices). */
  generations?: number;
  upstreamId: string | null;
  /** The credential that served it, and its upstream's prices for the model (for the operator's cost). */
  upstreamCredentialId?: string | null;
  upstreamPrices?: UpstreamPrices | null;
}

/** An upstream failure on its way to the client: the public error, and (for the operator's usage record) where it happened. */
export class RoutedFailure extends Error {
  constructor(
    readonly publicError: DomainError,
    readonly upstreamId: string,
  ) {
    super(publicError.message);
  }
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
 * The last stage: whatever happened to an admitted request, its slot is freed, its hold settled at
 * the cost of what was delivered (or released) and its usage event recorded (written in batches).
 */
export class Settlement {
  constructor(private readonly deps: { catalog: CatalogService; wallets: WalletStore; recorder: UsageRecorder }) {}

  /**
   * Runs an admitted request and, on every exit path (success, refusal, upstream failure, client
   * abort, a bug), settles it. An upstream failure leaves as its public error.
   *
   * A successful answer is settled just before its last bytes go out (`settleNow`, called by the relay): its usage
   * record is then journaled before the client can have the answer (a process killed the moment after loses no
   * bill), and its hold, which is its concurrency slot in the shared wallets, is on its way to Redis before a
   * client that reads the end can send its next request (at a limit, that request would otherwise be refused).
   */
  async after(call: InferenceCall, admitted: Admitted, work: (settleNow: (outcome: Outcome) => void) => Promise<Outcome>): Promise<void> {
    let outcome: Outcome = { status: 'error', errorCode: 'internal_error', usage: null, upstreamId: null };
    // What the client's response said (a stream that failed later still began with 200), for the trace.
    let httpStatus = 500;
    let settled: UsageRecord | null = null;
    const settleNow = (early: Outcome) => void (settled ??= this.finish(call, admitted, early));
    try {
      outcome = await work(settleNow);
      httpStatus = 200;
    } catch (error) {
      if (error instanceof RoutedFailure) {
        outcome = { ...outcome, errorCode: error.publicError.reason, upstreamId: error.upstreamId };
        httpStatus = httpStatusOf(error.publicError.code);
        throw error.publicError;
      }
      if (error instanceof DomainError) {
        outcome = { ...outcome, errorCode: error.reason };
        httpStatus = httpStatusOf(error.code);
      }
      throw error;
    } finally {
      const span = call.trace?.settlement();
      const record = settled ?? this.finish(call, admitted, outcome);
      span?.end();
      call.trace?.end({ status: httpStatus, errorCode: outcome.errorCode, usage: outcome.usage, amountUsd: record.amountUsd, upstreamCostUsd: record.upstreamCostUsd });
    }
  }

  /** A request refused before it held anything (balance, spend cap): a failed usage event, nothing billed. */
  refused(call: InferenceCall, attempt: Pick<Admitted, 'eventId' | 'startedAt' | 'model' | 'prices'>, error: DomainError): void {
    this.deps.recorder.record(this.usageRecord(call, attempt, { status: 'error', errorCode: error.reason, usage: null, upstreamId: null }, 0n));
  }

  /** Frees the slot, settles or releases the hold, records the usage event (and answers it). */
  private finish(call: InferenceCall, admitted: Admitted, outcome: Outcome): UsageRecord {
    admitted.slot.release();
    const cost = outcome.generations ? costUnitsOf(admitted.prices, { generations: outcome.generations }) : outcome.usage ? costUnitsOf(admitted.prices, { tokens: outcome.usage }) : 0n;
    const owner = { userId: call.principal.userId, keyId: call.principal.keyId };
    if (cost > 0n) this.deps.wallets.settle(admitted.hold.id, cost, owner);
    else this.deps.wallets.release(admitted.hold.id, owner);
    const record = this.usageRecord(call, admitted, outcome, cost);
    this.deps.recorder.record(record);
    return record;
  }

  private usageRecord(call: InferenceCall, admitted: Pick<Admitted, 'eventId' | 'startedAt' | 'model' | 'prices'>, outcome: Outcome, cost: Units): UsageRecord {
    const { principal } = call;
    const usage = outcome.usage;
    const official = admitted.model.official;
    const officialCost = usage && official && 'tokens' in official ? costUnitsOf(official, { tokens: usage }) : null;
    const upstreamCost = outcome.generations ? upstreamCostUnits(outcome.upstreamPrices, { generations: outcome.generations }) : usage ? upstreamCostUnits(outcome.upstreamPrices, { tokens: usage }) : null;
    const completedAt = new Date();
    return {
      id: admitted.eventId,
      userId: principal.userId,
      apiKeyId: principal.keyId,
      requestId: call.requestId,
      clientSurface: call.clientSurface,
      createdAt: admitted.startedAt,
      completedAt,
      providerFamily: admitted.model.family,
      routeGroup: principal.routeGroup,
      routeGroupLabel: this.deps.catalog.snapshot.groups.get(principal.routeGroup)?.label ?? principal.routeGroup,
      endpoint: call.endpoint,
      model: admitted.model.id,
      status: outcome.status,
      errorCode: outcome.errorCode,
      latencyMs: completedAt.getTime() - admitted.startedAt.getTime(),
      promptTokens: usage?.inputTokens ?? null,
      completionTokens: usage?.outputTokens ?? null,
      cacheReadTokens: usage?.cacheReadTokens ?? null,
      cacheWriteTokens: usage?.cacheWriteTokens ?? null,
      totalTokens: usage ? usage.inputTokens + usage.outputTokens : null,
      cacheHitRatio: usage && usage.cacheReadTokens !== null && usage.inputTokens > 0 ? ratioText(usage.cacheReadTokens, usage.inputTokens) : null,
      ...publicPricesOf(admitted.prices),
      amountUsd: formatUnits(cost),
      officialCostUsd: officialCost === null ? null : formatUnits(officialCost),
      savedUsd: officialCost === null ? null : formatUnits(officialCost > cost ? officialCost - cost : 0n),
      upstreamId: outcome.upstreamId,
      upstreamCredentialId: outcome.upstreamCredentialId ?? null,
      upstreamCostUsd: upstreamCost === null ? null : formatUnits(upstreamCost),
    };
  }
}
