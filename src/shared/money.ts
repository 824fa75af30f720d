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

/**
 * An amount as a whole number of 10^-MONEY_SCALE USD: the exact integer form the /v1 hot path works in
 * (holds, settlements, costs), where every Decimal operation would cost microseconds. Same precision
 * as the ledger, so converting either way is exact.
 */
export type Units = bigint;

const UNITS_PER_USD = new Money(10).pow(MONEY_SCALE);
/** A plain amount with at most MONEY_SCALE places: converted by string, without a Decimal. */
const PLAIN_AMOUNT = new RegExp(`^(-?)(\\d+)(?:\\.(\\d{1,${MONEY_SCALE}}))?$`);

/** An amount in units; more than MONEY_SCALE places round half to even, like `formatUsd`. */
export function toUnits(value: Decimal.Value | Units): Units {
  if (typeof value === 'bigint') return value;
  const plain = typeof value === 'string' ? PLAIN_AMOUNT.exec(value) : null;
  if (plain) {
    const units = BigInt(plain[2]! + (plain[3] ?? '').padEnd(MONEY_SCALE, '0'));
    return plain[1] ? -units : units;
  }
  return BigInt(money(value).times(UNITS_PER_USD).toDecimalPlaces(0).toFixed());
}

/** Units as `formatUsd` writes an amount: a plain decimal string, no trailing zeros, never `-0`. */
export function formatUnits(units: Units): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(MONEY_SCALE + 1, '0');
  const fraction = digits.slice(-MONEY_SCALE).replace(/0+$/, '');
  return `${negative ? '-' : ''}${digits.slice(0, -MONEY_SCALE)}${fraction ? `.${fraction}` : ''}`;
}

/** Units as Money, for the cold paths that still work in Decimals. */
export function unitsToMoney(units: Units): Decimal {
  return new Money(formatUnits(units));
}

/** `part / whole` to 4 places (half to even), as text without trailing zeros: the usage record's cache hit ratio. */
export function ratioText(part: number, whole: number): string {
  const scaled = part * 10_000;
  let q = Math.floor(scaled / whole);
  const twice = 2 * (scaled - q * whole);
  if (twice > whole || (twice === whole && q % 2 === 1)) q += 1;
  return formatUnits(BigInt(q) * 1_000_000n);
}
