import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { costOf, costUnitsOf } from '../../src/billing/cost.js';
import { formatUnits, formatUsd, Money, ratioText, toUnits, unitsToMoney } from '../../src/shared/money.js';

/**
 * The hot path keeps money as integer units of 1e-10 USD instead of Decimals. These hold the integer
 * forms to the Decimal ones they replace, digit for digit.
 */
const digits = (max: number) => fc.stringMatching(new RegExp(`^[0-9]{1,${max}}$`));
/** Plain decimal strings as catalogs, keys and PostgreSQL write them: up to 12 whole digits and 14 places. */
const amount = fc.tuple(fc.boolean(), digits(12), fc.option(digits(14), { nil: undefined })).map(([negative, whole, fraction]) => `${negative ? '-' : ''}${whole}${fraction === undefined ? '' : `.${fraction}`}`);

describe('money in units', () => {
  it('toUnits is the amount x 1e10, rounded half to even like formatUsd, and formatUnits writes what formatUsd writes', () => {
    fc.assert(
      fc.property(amount, (text) => {
        const units = toUnits(text);
        expect(units.toString()).toBe(new Money(text).times(1e10).toDecimalPlaces(0).toFixed());
        expect(formatUnits(units)).toBe(formatUsd(text));
        expect(unitsToMoney(units).equals(new Money(formatUsd(text)))).toBe(true);
        // Decimals and numbers take the same road.
        expect(toUnits(new Money(text))).toBe(units);
      }),
      { numRuns: 3000 },
    );
    expect(toUnits('0.00000000005')).toBe(0n); // half to even: down to 0
    expect(toUnits('0.00000000015')).toBe(2n); // and up to 2
    expect(toUnits(12.5)).toBe(125_000_000_000n);
    expect(toUnits(7n)).toBe(7n);
    expect(formatUnits(0n)).toBe('0');
    expect(formatUnits(-1n)).toBe('-0.0000000001');
    expect(formatUnits(30_000_000_000n)).toBe('3');
  });

  it('sums in units equal sums in Decimals', () => {
    fc.assert(
      fc.property(fc.array(amount, { maxLength: 30 }), (texts) => {
        const units = texts.reduce((sum, text) => sum + toUnits(text), 0n);
        const decimals = texts.reduce((sum, text) => sum.plus(new Money(text).toDecimalPlaces(10)), new Money(0));
        expect(formatUnits(units)).toBe(formatUsd(decimals));
      }),
      { numRuns: 1000 },
    );
  });

  it('ratioText is part / whole to 4 places, half to even, as the Decimal form wrote it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5_000_000 }), fc.integer({ min: 1, max: 5_000_000 }), (part, whole) => {
        expect(ratioText(part, whole)).toBe(new Money(part).dividedBy(whole).toDecimalPlaces(4).toFixed());
      }),
      { numRuns: 3000 },
    );
    expect(ratioText(1, 20_000)).toBe('0'); // 0.00005: half to even, down
    expect(ratioText(3, 20_000)).toBe('0.0002'); // 0.00015: up
    expect(ratioText(7, 7)).toBe('1');
  });

  it('per-generation and per-second costs multiply exactly before rounding once, also for 12-place prices', () => {
    fc.assert(
      fc.property(digits(6), digits(12), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 120 }), (whole, fraction, generations, seconds) => {
        const price = `${whole}.${fraction}`;
        const exact = (times: number) => new Money(price).times(times).toDecimalPlaces(10, Decimal.ROUND_HALF_EVEN);
        expect(formatUnits(costUnitsOf({ perGeneration: price }, { generations }))).toBe(formatUsd(exact(generations)));
        expect(costOf({ perSecond: price }, { seconds }).equals(exact(seconds))).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
