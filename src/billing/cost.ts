import { Decimal } from 'decimal.js';
import type { GroupPrices, TokenPrices } from '../catalog/catalog.schemas.js';
import { MONEY_SCALE, money, toUnits, unitsToMoney, type Units } from '../shared/money.js';
import type { UpstreamPrices } from '../upstreams/model.js';

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

/**
 * Token prices as exact integers: each price times 10^places (places: the most decimal places among
 * them), so a cost is one integer sum, divided once by 10^places x 1M and rounded to MONEY_SCALE.
 * BigInt, because tokens x scaled prices outgrow a float's exact integers.
 */
interface ScaledTokenPrices {
  input: bigint;
  output: bigint;
  cacheRead: bigint;
  cacheWrite: bigint;
  /** The dearest input-side price: what a prompt token is held at. */
  inputSide: bigint;
  /** 10^places x 1M: the divisor of a token sum; and 10^MONEY_SCALE, the result's unit. */
  divisor: bigint;
}

const MONEY_UNIT = 10n ** BigInt(MONEY_SCALE);

/** Catalog prices are immutable snapshots, scaled once per price object rather than on every request. */
const scaledPrices = new WeakMap<TokenPrices, ScaledTokenPrices>();

/** A price as a plain decimal string (catalog prices already are; anything else is normalized). */
function plain(price: string): string {
  return /^\d+(\.\d+)?$/.test(price) ? price : money(price).toFixed();
}

function scaled(prices: TokenPrices): ScaledTokenPrices {
  let result = scaledPrices.get(prices);
  if (!result) {
    const texts = [prices.input, prices.output, prices.cacheRead ?? prices.input, prices.cacheWrite ?? prices.input].map(plain);
    const places = Math.max(...texts.map((t) => (t.includes('.') ? t.length - t.indexOf('.') - 1 : 0)));
    const [input, output, cacheRead, cacheWrite] = texts.map((t) => {
      const [whole, fraction = ''] = t.split('.') as [string, string?];
      return BigInt(whole + fraction.padEnd(places, '0'));
    }) as [bigint, bigint, bigint, bigint];
    const max = (...values: bigint[]) => values.reduce((a, b) => (b > a ? b : a));
    result = { input, output, cacheRead, cacheWrite, inputSide: max(input, cacheRead, cacheWrite), divisor: 10n ** BigInt(places) * 1_000_000n };
    scaledPrices.set(prices, result);
  }
  return result;
}

/** A token count as a whole non-negative number (an upstream's fractional count is billed up; nonsense is 0). */
function tokens(count: number | null): bigint {
  return count !== null && count > 0 && Number.isFinite(count) ? BigInt(Math.ceil(count)) : 0n;
}

/** `sum / divisor` in units of 10^-MONEY_SCALE USD, rounded half to even (`up`: rounded up). */
function unitsOf(sum: bigint, divisor: bigint, up = false): Units {
  const numerator = sum * MONEY_UNIT;
  let units = numerator / divisor;
  const remainder = numerator % divisor;
  if (up ? remainder > 0n : remainder * 2n > divisor || (remainder * 2n === divisor && units % 2n === 1n)) units += 1n;
  return units;
}

/**
 * DESIGN.md Money: uncached input x input + cache reads x cache-read + cache writes x cache-write +
 * output x output, per 1M tokens; a bucket with no price of its own is billed at the input price.
 * Exact, rounded once at the end to 10 places (half to even).
 */
export function tokenCostUnits(usage: TokenUsage, prices: TokenPrices): Units {
  const price = scaled(prices);
  const input = tokens(usage.inputTokens);
  const cacheRead = tokens(usage.cacheReadTokens);
  const cacheWrite = tokens(usage.cacheWriteTokens);
  const uncached = input > cacheRead + cacheWrite ? input - cacheRead - cacheWrite : 0n;
  return unitsOf(price.input * uncached + price.cacheRead * cacheRead + price.cacheWrite * cacheWrite + price.output * tokens(usage.outputTokens), price.divisor);
}

export function tokenCost(usage: TokenUsage, prices: TokenPrices): Decimal {
  return unitsToMoney(tokenCostUnits(usage, prices));
}

/** What one request costs under `prices`: tokens, one generation, or `seconds` of video (rounded half to even). */
export function costUnitsOf(prices: GroupPrices, usage: { tokens?: TokenUsage; generations?: number; seconds?: number }): Units {
  if ('tokens' in prices) {
    if (!usage.tokens) throw new Error('token-priced model billed without token usage');
    return tokenCostUnits(usage.tokens, prices.tokens);
  }
  // Prices may have more places than the ledger: the product is exact, rounded once.
  if ('perGeneration' in prices) return toUnits(money(prices.perGeneration).times(usage.generations ?? 1));
  if (usage.seconds === undefined) throw new Error('per-second model billed without seconds');
  return toUnits(money(prices.perSecond).times(usage.seconds));
}

/** An upstream's token prices in the catalog's form, made once per price list (the scaled form is kept per object). */
const upstreamTokenPrices = new WeakMap<UpstreamPrices, TokenPrices>();

/**
 * The upstream's cost of one request, by the same formula as the customer's (DESIGN.md Money), so margin
 * is exact: tokens at its per-1M prices, images at its per-image price, video seconds at its per-second one.
 * Null when the upstream has no price for what the request used (its cost is then unknown, not zero).
 */
export function upstreamCostUnits(prices: UpstreamPrices | null | undefined, usage: { tokens?: TokenUsage | null; generations?: number; seconds?: number }): Units | null {
  if (!prices) return null;
  if (usage.generations) return prices.perImage === null ? null : toUnits(money(prices.perImage).times(usage.generations));
  if (usage.seconds !== undefined) return prices.perVideoSecond === null ? null : toUnits(money(prices.perVideoSecond).times(usage.seconds));
  if (!usage.tokens || (prices.inputPer1m === null && prices.outputPer1m === null)) return null;
  let tokenPrices = upstreamTokenPrices.get(prices);
  if (!tokenPrices) {
    tokenPrices = { input: prices.inputPer1m ?? '0', output: prices.outputPer1m ?? '0', cacheRead: prices.cacheReadPer1m, cacheWrite: prices.cacheWritePer1m };
    upstreamTokenPrices.set(prices, tokenPrices);
  }
  return tokenCostUnits(usage.tokens, tokenPrices);
}

export function costOf(prices: GroupPrices, usage: { tokens?: TokenUsage; generations?: number; seconds?: number }): Decimal {
  return unitsToMoney(costUnitsOf(prices, usage));
}

/**
 * The most a text request can cost: every prompt token uncached at the dearest input-side price, plus
 * `maxOutputTokens` of output, rounded up. Held before forwarding.
 */
export function worstCaseTokenUnits(prices: TokenPrices, inputTokens: number, maxOutputTokens: number): Units {
  const price = scaled(prices);
  return unitsOf(price.inputSide * tokens(inputTokens) + price.output * tokens(maxOutputTokens), price.divisor, true);
}
