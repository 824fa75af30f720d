import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;

/**
 * zod schemas as the document's JSON Schemas (2020-12, which OpenAPI 3.1 uses as it is). A schema
 * with an id (`.meta({ id })`) becomes one shared component, referred to wherever it appears; requests
 * are written as zod reads them (`io: 'input'`), answers as the mappers write them (`'output'`).
 */
export class JsonSchemas {
  readonly components: Record<string, JsonSchema> = {};

  of(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const { $schema: _dialect, $defs, ...json } = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any', override: documentPipes(io) });
    for (const [id, definition] of Object.entries($defs ?? {})) this.add(id, toComponentRefs(definition));
    return toComponentRefs(json);
  }

  private add(id: string, definition: JsonSchema): void {
    const known = this.components[id];
    // One id, one shape: an id used for two different schemas (or read both ways) would make one of them lie.
    if (known && !isDeepStrictEqual(known, definition)) throw new Error(`Two different schemas claim the component id ${id}`);
    this.components[id] = definition;
  }
}

/** `#/$defs/X` (zod's place for shared definitions) -> `#/components/schemas/X` (OpenAPI's). */
function toComponentRefs(json: object): JsonSchema {
  return JSON.parse(JSON.stringify(json).replaceAll('"#/$defs/', '"#/components/schemas/'));
}

/** The JSON Schema zod wrote for a schema, as the `override` hook sees it. */
interface OverrideContext {
  zodSchema: z.core.$ZodTypes;
  jsonSchema: z.core.JSONSchema.BaseSchema;
}

/**
 * Requests whose schema first rewrites the input (a pipe from a transform or a `z.custom`) would read as
 * stricter, or looser, than the service is: documented as what the service takes.
 */
function documentPipes(io: 'input' | 'output') {
  return (ctx: OverrideContext) => {
    const def = ctx.zodSchema._zod.def;
    if (io !== 'input' || def.type !== 'pipe') return;
    if (def.in._zod.def.type === 'custom') documentGuardedPipe(ctx, def.out);
    else if (def.in._zod.def.type === 'transform' && !isScalar(def.out)) documentPreprocess(ctx);
  };
}

/**
 * A field that first checks presence with a `z.custom` and then pipes into the real schema (so an absent
 * value reports `missing`, e.g. the invoice amount) would read as "anything": it is documented as the
 * schema it pipes into.
 */
function documentGuardedPipe(ctx: OverrideContext, target: z.core.$ZodType): void {
  const { $schema: _dialect, ...json } = z.toJSONSchema(target, { io: 'input', target: 'draft-2020-12', unrepresentable: 'any' });
  Object.assign(ctx.jsonSchema, json);
}

/**
 * A preprocessed field (`z.preprocess`) also takes the shorthand its preprocessing expands (a string for
 * a list of text blocks, a tool or an item without its `type`): the schema it expands into comes first,
 * and the shorthand is allowed beside it, so a generated client does not refuse what the service takes.
 */
function documentPreprocess(ctx: OverrideContext): void {
  const expanded = { ...ctx.jsonSchema };
  for (const key of Object.keys(ctx.jsonSchema)) delete (ctx.jsonSchema as Record<string, unknown>)[key];
  ctx.jsonSchema.anyOf = [expanded, { description: 'Or a shorthand the service expands into the schema above' }];
}

/** A schema of scalars only: its preprocessing is a coercion (an integer read from a query string), and it already lists what it takes. */
function isScalar(schema: z.core.$ZodType): boolean {
  const { type } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  const types = Array.isArray(type) ? type : [type];
  return types.every((t) => t !== undefined && t !== 'array' && t !== 'object');
}
