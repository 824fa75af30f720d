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

/**
 * DESIGN.md Money: uncached input x input + cache reads x cache-read + cache writes x cache-write +
 * output x output, per 1M tokens; a bucket with no price of its own is billed at the input price.
 * Exact decimals, rounded once at the end to 10 places.
 */
export function tokenCost(usage: TokenUsage, prices: TokenPrices): Decimal {
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  const uncached = Math.max(0, usage.inputTokens - cacheRead - cacheWrite);
  const input = money(prices.input);
  const total = input
    .times(uncached)
    .plus(money(prices.cacheRead ?? prices.input).times(cacheRead))
    .plus(money(prices.cacheWrite ?? prices.input).times(cacheWrite))
    .plus(money(prices.output).times(usage.outputTokens));
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
  const inputSide = Decimal.max(money(prices.input), money(prices.cacheWrite ?? prices.input), money(prices.cacheRead ?? prices.input));
  return inputSide
    .times(inputTokens)
    .plus(money(prices.output).times(maxOutputTokens))
    .dividedBy(PER_MILLION)
    .toDecimalPlaces(MONEY_SCALE, Decimal.ROUND_UP);
}
