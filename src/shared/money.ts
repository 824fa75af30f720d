import { Decimal } from 'decimal.js';

/** Money is kept at 10 decimal places (DESIGN.md: Money); never a float. */
export const MONEY_SCALE = 10;

export const Money = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_EVEN });
export type Money = Decimal;

export function money(value: Decimal.Value): Decimal {
  // Decimals are immutable, so one of ours can be used as it is (a plain Decimal has a lower precision: convert it).
  return value instanceof Money ? value : new Money(value);
}

/** The canonical wire form of an amount: a plain decimal string with trailing zeros removed, never exponent notation. */
export function formatUsd(value: Decimal.Value): string {
  let amount = money(value);
  if (amount.decimalPlaces() > MONEY_SCALE) amount = amount.toDecimalPlaces(MONEY_SCALE);
  // Without an argument toFixed is unrounded, in normal notation, and (decimals being normalized) without trailing zeros.
  const text = amount.toFixed();
  return text === '-0' ? '0' : text;
}

export function sumUsd(values: Decimal.Value[]): Decimal {
  return values.reduce<Decimal>((acc, value) => acc.plus(value), new Money(0));
}

/** A stored numeric as written by PostgreSQL, in its canonical form: no trailing zeros, never exponent notation, null kept. */
export function plainDecimal(value: string | null): string | null {
  if (value === null) return null;
  return value.includes('.') ? value.replace(/0+$/, '').replace(/\.$/, '') : value;
}
