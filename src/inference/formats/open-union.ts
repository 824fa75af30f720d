import { z } from 'zod';

/**
 * A union on `type` that also accepts types it does not know: a known type is validated by its own
 * schema (its issues located exactly, as a discriminated union would), any other is kept as it is.
 * Client formats grow new block and item types faster than any translator: a request passed straight
 * through must not be refused for one, and a translated request refuses it by name instead.
 */
export function openUnion<const K extends Record<string, z.ZodType>>(known: K) {
  type Known = z.output<K[keyof K]>;
  return z.looseObject({ type: z.string().min(1) }).transform((value, ctx): Known | { type: string; [key: string]: unknown } => {
    const schema = Object.hasOwn(known, value.type) ? known[value.type] : undefined;
    if (!schema) return value;
    const result = schema.safeParse(value, { reportInput: true });
    if (result.success) return result.data as Known;
    for (const issue of result.error.issues) ctx.addIssue(issue as Parameters<typeof ctx.addIssue>[0]);
    return z.NEVER;
  });
}
