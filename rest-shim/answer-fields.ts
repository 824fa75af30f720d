import { z } from 'zod';

/**
 * The building blocks of the answer schemas (SPEC.md section 2: decimal amounts are strings,
 * timestamps are ISO strings). The answers' mappers are typed by these schemas, so the interface
 * description (GET /openapi.json) shows exactly what they write.
 */
export const decimal = z.string().describe('A decimal number as a string (exact; never a float)');
export const timestamp = z.iso.datetime().describe('An ISO 8601 time in UTC');

/** SPEC.md Validation error: every 422. */
export const validationErrorAnswer = z
  .object({
    detail: z.array(z.object({ loc: z.array(z.union([z.string(), z.int()])), msg: z.string(), type: z.string() })),
  })
  .meta({ id: 'ValidationError', description: 'SPEC.md Validation error: where (loc: body, query or path, then the field), what, and its type.' });

/** Every other cabinet error: a message and our stable reason code. */
export const cabinetErrorAnswer = z
  .object({ detail: z.string(), code: z.string() })
  .meta({ id: 'Error', description: 'A cabinet error: a message for people and a stable code for programs.' });
