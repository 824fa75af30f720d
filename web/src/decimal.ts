/**
 * Exact arithmetic on the API's decimal strings (USD amounts), in BigInt: money is never a JavaScript number
 * here. Only what a page shows beside the API's own figures (the revenue a margin is a share of) is computed.
 */
interface Scaled {
  units: bigint;
  scale: number;
}

function parse(value: string): Scaled | null {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(value.trim());
  if (!match) return null;
  const [, sign, whole, fraction = ''] = match;
  const units = BigInt(`${whole}${fraction}`);
  return { units: sign ? -units : units, scale: fraction.length };
}

function align(a: Scaled, b: Scaled): [bigint, bigint, number] {
  const scale = Math.max(a.scale, b.scale);
  return [a.units * 10n ** BigInt(scale - a.scale), b.units * 10n ** BigInt(scale - b.scale), scale];
}

function format(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** `a + b`, exactly (null when either is not a decimal). */
export function addDecimal(a: string, b: string): string | null {
  const x = parse(a);
  const y = parse(b);
  if (!x || !y) return null;
  const [p, q, scale] = align(x, y);
  return format(p + q, scale);
}

/** `a - b`, exactly (null when either is not a decimal). */
export function subtractDecimal(a: string, b: string): string | null {
  const x = parse(a);
  const y = parse(b);
  if (!x || !y) return null;
  const [p, q, scale] = align(x, y);
  return format(p - q, scale);
}

/**
 * `part / whole` as a percentage rounded to `digits` decimals, for display (a string such as "23.5");
 * null when `whole` is zero or either is not a decimal.
 */
export function percentOf(part: string, whole: string, digits = 1): string | null {
  const x = parse(part);
  const y = parse(whole);
  if (!x || !y) return null;
  const [p, q] = align(x, y);
  if (q === 0n) return null;
  const factor = 10n ** BigInt(digits);
  // Rounded half away from zero: (2·100·factor·p + q) / (2q) on magnitudes.
  const negative = p < 0n !== q < 0n;
  const numerator = 2n * 100n * factor * (p < 0n ? -p : p);
  const denominator = q < 0n ? -q : q;
  const rounded = (numerator + denominator) / (2n * denominator);
  const text = format(rounded, digits);
  return negative && rounded !== 0n ? `-${text}` : text;
}

/** Whether a decimal string is below zero. */
export function isNegative(value: string): boolean {
  return (parse(value)?.units ?? 0n) < 0n;
}
