import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import defaultCatalog from '../../src/catalog/default-catalog.json' with { type: 'json' };
import { Catalog } from '../../src/catalog/catalog.js';
import { catalogFile, type TokenPrices } from '../../src/catalog/catalog.schemas.js';
import { costOf, tokenCost, worstCaseTokenUnits, type TokenUsage } from '../../src/billing/cost.js';
import { Money, unitsToMoney } from '../../src/shared/money.js';

const catalog = new Catalog(catalogFile.parse(defaultCatalog), 1);
function tokenPricesOf(model: string): TokenPrices {
  const prices = catalog.priceOf(model, 'cheap', 'siberia')!;
  if (!('tokens' in prices)) throw new Error(`${model} is not token-priced`);
  return prices.tokens;
}

describe('the shipped catalog carries SPEC.md 4.9 prices', () => {
  it.each([
    ['gen-5.6-luna', '0.016', '0.04', '0.0016', '0.018'],
    ['gen-5.6-terra', '0.12', '0.36', '0.012', '0.128'],
    ['gen-5.6-sol', '0.30', '0.90', '0.030', '0.40'],
    ['delta-4.5', '0.20', '0.20', '0.02', null],
    ['delta-4.6', '0.20', '0.60', null, null],
    ['zeta-5.2', '0.18', '0.18', null, null],
    ['eta-k3', '0.80', '2.00', '0.08', null],
    ['lm-opus-5', '0.35', '0.35', '0.035', '0.40'],
    ['lm-fable-5', '0.30', '1.00', null, null],
    ['lm-fable-5-cache', '0.45', '1.00', '0.045', '0.50'],
    ['lm-sonnet-5', '0.15', '0.75', '0.015', '0.1875'],
  ])('%s', (model, input, output, cacheRead, cacheWrite) => {
    expect(tokenPricesOf(model)).toEqual({ input, output, cacheRead, cacheWrite });
  });

  it('image and video prices', () => {
    expect(catalog.priceOf('img-2-4k-upscaled', 'cheap', 'siberia')).toEqual({ perGeneration: '0.050' });
    expect(catalog.priceOf('alpha-3.0-omni', 'cheap', 'siberia')).toEqual({ perSecond: '0.145' });
    expect(catalog.priceOf('epsilon2.5-01-720', 'cheap', 'siberia')).toEqual({ perGeneration: '0.480' });
  });
});

describe('tokenCost (DESIGN.md Money)', () => {
  it('prices each bucket at its own rate: gen-5.6-luna', () => {
    // 700k uncached x 0.016 + 200k cache reads x 0.0016 + 100k cache writes x 0.018 + 500k output x 0.04, per 1M.
    const cost = tokenCost({ inputTokens: 1_000_000, outputTokens: 500_000, cacheReadTokens: 200_000, cacheWriteTokens: 100_000 }, tokenPricesOf('gen-5.6-luna'));
    expect(cost.toFixed()).toBe('0.03332');
  });

  it('bills cache buckets without a price of their own at the input price: delta-4.6', () => {
    const cost = tokenCost({ inputTokens: 10_000, outputTokens: 1_000, cacheReadTokens: 4_000, cacheWriteTokens: 1_000 }, tokenPricesOf('delta-4.6'));
    // all 10k input at 0.20 + 1k output at 0.60, per 1M
    expect(cost.toFixed()).toBe('0.0026');
  });

  it('a model with a cache-read price but none for writes: delta-4.5', () => {
    const cost = tokenCost({ inputTokens: 10_000, outputTokens: 0, cacheReadTokens: 5_000, cacheWriteTokens: 2_000 }, tokenPricesOf('delta-4.5'));
    // 3k uncached x 0.20 + 5k x 0.02 + 2k (writes at input) x 0.20 = 600 + 100 + 400 = 1100 per 1M
    expect(cost.toFixed()).toBe('0.0011');
  });

  it('unreported cache usage (null) bills every input token as uncached', () => {
    const reportedZero = tokenCost({ inputTokens: 1234, outputTokens: 56, cacheReadTokens: 0, cacheWriteTokens: 0 }, tokenPricesOf('lm-sonnet-5'));
    const unreported = tokenCost({ inputTokens: 1234, outputTokens: 56, cacheReadTokens: null, cacheWriteTokens: null }, tokenPricesOf('lm-sonnet-5'));
    expect(unreported.toFixed()).toBe(reportedZero.toFixed());
    expect(unreported.toFixed()).toBe('0.0002271'); // 1234 x 0.15 + 56 x 0.75 = 185.1 + 42 = 227.1 per 1M
  });

  it('is exact where floats are not, and rounds once to 10 places', () => {
    const prices = { input: '0.1', output: '0.2', cacheRead: null, cacheWrite: null };
    expect(tokenCost({ inputTokens: 3, outputTokens: 0, cacheReadTokens: null, cacheWriteTokens: null }, prices).toFixed()).toBe('0.0000003');
    expect((3 * 0.1) / 1e6).not.toBe(0.0000003);
    const micro = { input: '0.00003', output: '0', cacheRead: null, cacheWrite: null };
    const once = (inputTokens: number) => tokenCost({ inputTokens, outputTokens: 0, cacheReadTokens: null, cacheWriteTokens: null }, micro).toFixed();
    expect(once(1)).toBe('0'); // 0.00000000003 rounds away at 10 places
    expect(once(7)).toBe('0.0000000002'); // 0.00000000021
    expect(once(5)).toBe('0.0000000002'); // 0.00000000015: half to even
    expect(tokenCost({ inputTokens: 1, outputTokens: 0, cacheReadTokens: null, cacheWriteTokens: null }, tokenPricesOf('gen-5.6-luna')).toFixed()).toBe('0.000000016');
  });

  it('costOf handles images, per-second and per-generation video', () => {
    expect(costOf({ perGeneration: '0.015' }, { generations: 1 }).toFixed()).toBe('0.015');
    expect(costOf({ perSecond: '0.14' }, { seconds: 15 }).toFixed()).toBe('2.1');
    expect(() => costOf({ tokens: tokenPricesOf('zeta-5.2') }, {})).toThrow();
  });

  it('the worst case bounds every real cost of the same request', () => {
    const prices = tokenPricesOf('lm-fable-5-cache');
    const worst = worstCaseTokenUnits(prices, 2000, 1000);
    for (const [read, write] of [[null, null], [2000, 0], [0, 2000], [500, 1500]] as const) {
      expect(tokenCost({ inputTokens: 2000, outputTokens: 1000, cacheReadTokens: read, cacheWriteTokens: write }, prices).lte(worst)).toBe(true);
    }
  });
});

describe('pricing plans', () => {
  it('applies a plan multiplier and per-model overrides; private plans are shown as custom', () => {
    const data = catalogFile.parse({
      ...defaultCatalog,
      plans: [
        ...defaultCatalog.plans,
        { id: 'partner-x', label: 'Partner X', public: false, multiplier: '0.5', overrides: { 'zeta-5.2': { tokens: { input: '0.01', output: '0.02' } } } },
      ],
    });
    const withPlans = new Catalog(data, 2);
    expect(withPlans.priceOf('gen-5.6-sol', 'cheap', 'partner-x')).toEqual({ tokens: { input: '0.15', output: '0.45', cacheRead: '0.015', cacheWrite: '0.2' } });
    expect(withPlans.priceOf('zeta-5.2', 'cheap', 'partner-x')).toEqual({ tokens: { input: '0.01', output: '0.02', cacheRead: null, cacheWrite: null } });
    expect(withPlans.publicPlanName('partner-x')).toBe('custom');
    expect(withPlans.publicPlanName('siberia')).toBe('siberia');
  });
});

/** DESIGN.md's formula written plainly in exact decimals: what the integer implementation must equal. */
function referenceCost(usage: TokenUsage, prices: TokenPrices): Decimal {
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  const uncached = Math.max(0, usage.inputTokens - cacheRead - cacheWrite);
  return new Money(prices.input)
    .times(uncached)
    .plus(new Money(prices.cacheRead ?? prices.input).times(cacheRead))
    .plus(new Money(prices.cacheWrite ?? prices.input).times(cacheWrite))
    .plus(new Money(prices.output).times(usage.outputTokens))
    .dividedBy(1_000_000)
    .toDecimalPlaces(10, Decimal.ROUND_HALF_EVEN);
}

describe('token costs in integers equal the exact decimal formula (property)', () => {
  const price = fc.tuple(fc.integer({ min: 0, max: 999_999 }), fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 10 ** 6 })).map(([whole, places, fraction]) =>
    places === 0 ? String(whole) : `${whole}.${String(fraction).padStart(places, '0').slice(0, places)}`,
  );
  const prices = fc.record({ input: price, output: price, cacheRead: fc.option(price), cacheWrite: fc.option(price) });
  const count = fc.integer({ min: 0, max: 50_000_000 });
  const usage = fc.record({ inputTokens: count, outputTokens: count, cacheReadTokens: fc.option(count), cacheWriteTokens: fc.option(count) });

  it('tokenCost rounds half to even at 10 places, exactly like decimal arithmetic', () => {
    fc.assert(
      fc.property(usage, prices, (u, p) => {
        expect(tokenCost(u, p).toFixed()).toBe(referenceCost(u, p).toFixed());
      }),
      { numRuns: 2000 },
    );
  });

  it('the worst case is rounded up and bounds every split of the same prompt', () => {
    fc.assert(
      fc.property(count, count, fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 100 }), prices, (input, output, readShare, writeShare, p) => {
        const worst = unitsToMoney(worstCaseTokenUnits(p, input, output));
        const read = Math.floor((input * readShare) / 100);
        const write = Math.floor(((input - read) * writeShare) / 100);
        expect(worst.gte(referenceCost({ inputTokens: input, outputTokens: output, cacheReadTokens: read, cacheWriteTokens: write }, p))).toBe(true);
        const exact = [p.input, p.cacheRead ?? p.input, p.cacheWrite ?? p.input].map((x) => new Money(x)).reduce((a, b) => Money.max(a, b)).times(input).plus(new Money(p.output).times(output)).dividedBy(1_000_000);
        expect(worst.toFixed()).toBe(exact.toDecimalPlaces(10, Decimal.ROUND_UP).toFixed());
      }),
      { numRuns: 1000 },
    );
  });

  it("an upstream's odd counts bill whole tokens: fractions round up, negatives and non-finite count 0", () => {
    const p = { input: '1', output: '2', cacheRead: null, cacheWrite: null };
    expect(tokenCost({ inputTokens: 1.2, outputTokens: -5, cacheReadTokens: null, cacheWriteTokens: null }, p).toFixed()).toBe('0.000002');
    expect(tokenCost({ inputTokens: Number.POSITIVE_INFINITY, outputTokens: Number.NaN, cacheReadTokens: null, cacheWriteTokens: null }, p).toFixed()).toBe('0');
  });
});
