import { Decimal } from 'decimal.js';
import type { GroupPrices, TokenPrices } from '../catalog/catalog.schemas.js';
import { MONEY_SCALE, Money, money } from '../shared/money.js';

/**
 * Token usage in the canonical form. `inputTokens` counts every input token, cached or not; cache
 * buckets are null when the upstream did not report them ("not reported", never 0).
 */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number | null;
  cacheWriteTokens: number | null;
}

const PER_MILLION = new Money(1_000_000);

interface ParsedTokenPrices {
  input: Decimal;
  output: Decimal;
  cacheRead: Decimal;
  cacheWrite: Decimal;
  /** The dearest input-side price: what a prompt token is held at. */
  inputSide: Decimal;
}

/** Catalog prices are immutable snapshots, parsed once per price object rather than on every request. */
const parsedPrices = new WeakMap<TokenPrices, ParsedTokenPrices>();

function parsed(prices: TokenPrices): ParsedTokenPrices {
  let result = parsedPrices.get(prices);
  if (!result) {
    const input = money(prices.input);
    const cacheRead = money(prices.cacheRead ?? prices.input);
    const cacheWrite = money(prices.cacheWrite ?? prices.input);
    result = { input, output: money(prices.output), cacheRead, cacheWrite, inputSide: Money.max(input, cacheRead, cacheWrite) };
    parsedPrices.set(prices, result);
  }
  return result;
}

/**
 * DESIGN.md Money: uncached input x input + cache reads x cache-read + cache writes x cache-write +
 * output x output, per 1M tokens; a bucket with no price of its own is billed at the input price.
 * Exact decimals, rounded once at the end to 10 places.
 */
export function tokenCost(usage: TokenUsage, prices: TokenPrices): Decimal {
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  const uncached = Math.max(0, usage.inputTokens - cacheRead - cacheWrite);
  const price = parsed(prices);
  const total = price.input
    .times(uncached)
    .plus(price.cacheRead.times(cacheRead))
    .plus(price.cacheWrite.times(cacheWrite))
    .plus(price.output.times(usage.outputTokens));
  return total.dividedBy(PER_MILLION).toDecimalPlaces(MONEY_SCALE);
}

/** What one request costs under `prices`: tokens, one generation, or `seconds` of video. */
export function costOf(prices: GroupPrices, usage: { tokens?: TokenUsage; generations?: number; seconds?: number }): Decimal {
  if ('tokens' in prices) {
    if (!usage.tokens) throw new Error('token-priced model billed without token usage');
    return tokenCost(usage.tokens, prices.tokens);
  }
  if ('perGeneration' in prices) return money(prices.perGeneration).times(usage.generations ?? 1).toDecimalPlaces(MONEY_SCALE);
  if (usage.seconds === undefined) throw new Error('per-second model billed without seconds');
  return money(prices.perSecond).times(usage.seconds).toDecimalPlaces(MONEY_SCALE);
}

/**
 * The most a text request can cost: every prompt token uncached at the dearest input-side price, plus
 * `maxOutputTokens` of output. Held before forwarding.
 */
export function worstCaseTokenCost(prices: TokenPrices, inputTokens: number, maxOutputTokens: number): Decimal {
  const price = parsed(prices);
  return price.inputSide
    .times(inputTokens)
    .plus(price.output.times(maxOutputTokens))
    .dividedBy(PER_MILLION)
    .toDecimalPlaces(MONEY_SCALE, Decimal.ROUND_UP);
}
