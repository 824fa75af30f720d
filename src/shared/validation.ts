import { z } from 'zod';
import { DomainError, type ValidationIssue } from './errors.js';

/**
 * Parses `input` with a zod schema; on failure throws a `validation_failed` DomainError whose issues
 * follow SPEC.md's validation shape. Locations are relative to the input; transports add their
 * prefix (`body`, `query`, `path`).
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  throw new DomainError('validation_failed', 'Request validation failed', {
    issues: result.error.issues.flatMap(toValidationIssues),
  });
}

function toValidationIssues(issue: z.core.$ZodIssue): ValidationIssue[] {
  const loc = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({ loc: [...loc, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }));
    case 'invalid_type':
      if (issue.input === undefined) return [{ loc, msg: 'Field required', type: 'missing' }];
      return [{ loc, msg: `Input should be a valid ${describeExpected(issue.expected)}`, type: `${typeName(issue.expected)}_type` }];
    case 'too_small':
      return [{ loc, msg: issue.message, type: issue.origin === 'string' ? 'string_too_short' : issue.origin === 'array' ? 'too_short' : issue.inclusive === false ? 'greater_than' : 'greater_than_equal' }];
    case 'too_big':
      return [{ loc, msg: issue.message, type: issue.origin === 'string' ? 'string_too_long' : issue.origin === 'array' ? 'too_long' : issue.inclusive === false ? 'less_than' : 'less_than_equal' }];
    case 'invalid_format':
      return [{ loc, msg: issue.message, type: issue.format === 'regex' ? 'string_pattern_mismatch' : `${issue.format}_format` }];
    case 'invalid_value':
      return [{ loc, msg: issue.message, type: 'literal_error' }];
    case 'invalid_union':
      return [{ loc, msg: issue.message, type: 'union_error' }];
    case 'custom':
      return [{ loc, msg: issue.message, type: (issue.params?.type as string | undefined) ?? 'value_error' }];
    default:
      return [{ loc, msg: issue.message, type: 'value_error' }];
  }
}

function typeName(expected: string): string {
  switch (expected) {
    // zod reports a non-number as expected `number` whether or not the field is an integer, `int` for a fraction.
    case 'number':
      return 'number';
    case 'int':
      return 'int';
    case 'boolean':
      return 'bool';
    case 'object':
      return 'dict';
    case 'array':
      return 'list';
    default:
      return expected;
  }
}

function describeExpected(expected: string): string {
  switch (expected) {
    case 'int':
      return 'integer';
    case 'object':
      return 'object';
    default:
      return expected;
  }
}

/**
 * An integer parameter that may arrive as a JSON number or as a query-string digit string.
 * A non-numeric string is reported as `int_parsing`, like a typed API would.
 */
export function intParam(min: number, max: number, defaultValue: number) {
  return z
    .preprocess((value) => {
      if (typeof value !== 'string') return value;
      const trimmed = value.trim();
      return /^[+-]?\d{1,15}$/.test(trimmed) ? Number(trimmed) : value;
    }, z.union([z.number(), z.string()]).superRefine((value, ctx) => {
      if (typeof value === 'string' || !Number.isInteger(value)) {
        ctx.addIssue({ code: 'custom', message: 'Input should be a valid integer, unable to parse string as an integer', params: { type: 'int_parsing' } });
        return;
      }
      if (value < min) ctx.addIssue({ code: 'custom', message: `Input should be greater than or equal to ${min}`, params: { type: 'greater_than_equal' } });
      if (value > max) ctx.addIssue({ code: 'custom', message: `Input should be less than or equal to ${max}`, params: { type: 'less_than_equal' } });
    }))
    .optional()
    .transform((value) => (value === undefined ? defaultValue : (value as number)));
}

/** A USD amount from a client: a JSON number or a decimal string (SPEC.md), never exponent notation. */
export const usdAmount = z
  .union([z.number(), z.string()])
  .superRefine((value, ctx) => {
    const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : 'NaN') : value.trim();
    if (!/^-?\d{1,12}(\.\d{1,10})?$/.test(text)) {
      ctx.addIssue({ code: 'custom', message: 'Input should be a decimal number with at most 12 integer and 10 fractional digits', params: { type: 'decimal_parsing' } });
    }
  })
  .transform((value) => (typeof value === 'number' ? String(value) : value.trim()));
