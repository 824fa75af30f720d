/**
 * A deterministic value valid for a JSON Schema: what a model constrained by structured outputs would
 * produce. Covers what zod, pydantic and the SDK helpers emit: types (and type lists), enum, const,
 * anyOf/oneOf/allOf, $ref into #/$defs or #/definitions, properties/required, items, min/max bounds,
 * string formats. Optional properties are filled too (a strict schema requires every one).
 */
export function schemaInstance(schema: unknown): unknown {
  return instanceOf(schema, schema, '', 0);
}

type Schema = Record<string, any>;

const FORMATS: Record<string, string> = {
  'date-time': '2026-11-23T12:00:00Z',
  date: '2026-11-23',
  time: '12:00:00',
  email: 'baikal@example.com',
  uri: 'https://example.com/baikal',
  url: 'https://example.com/baikal',
  uuid: '3f1e5a4c-2b7d-4c9e-8f10-6a2b3c4d5e6f',
};

function resolve(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return {};
  let node: any = root;
  for (const segment of ref.slice(1).split('/').filter(Boolean)) node = node?.[segment.replaceAll('~1', '/').replaceAll('~0', '~')];
  return node ?? {};
}

function instanceOf(raw: unknown, root: unknown, name: string, depth: number): unknown {
  if (raw === true || raw === undefined || raw === null) return name || 'baikal';
  if (typeof raw !== 'object') return null;
  const schema = raw as Schema;
  if (depth > 12) return null;
  if (typeof schema.$ref === 'string') return instanceOf(resolve(root, schema.$ref), root, name, depth + 1);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf']) {
    if (Array.isArray(schema[key]) && schema[key].length) {
      // Prefer a branch that is not null, as a model answering a question would.
      const branch = schema[key].find((b: any) => b?.type !== 'null') ?? schema[key][0];
      return instanceOf(branch, root, name, depth + 1);
    }
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length) {
    const merged = schema.allOf.reduce((all: Schema, part: Schema) => {
      const resolved = (typeof part?.$ref === 'string' ? resolve(root, part.$ref) : part) as Schema;
      return { ...all, ...resolved, properties: { ...all.properties, ...resolved?.properties }, required: [...(all.required ?? []), ...(resolved?.required ?? [])] };
    }, {});
    return instanceOf(merged, root, name, depth + 1);
  }
  const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : schema.properties ? ['object'] : schema.items ? ['array'] : ['string'];
  const type = types.find((t) => t !== 'null') ?? 'null';
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, sub] of Object.entries((schema.properties ?? {}) as Record<string, unknown>)) out[key] = instanceOf(sub, root, key, depth + 1);
      return out;
    }
    case 'array': {
      // One item shows the shape; deeper down only what the schema requires, so recursive schemas end.
      const count = depth >= 4 ? (schema.minItems ?? 0) : Math.max(schema.minItems ?? 1, Math.min(1, schema.maxItems ?? 1));
      const items = Array.isArray(schema.prefixItems) ? schema.prefixItems : null;
      if (items) return items.map((item: unknown, i: number) => instanceOf(item, root, `${name}${i}`, depth + 1));
      return Array.from({ length: count }, (_, i) => instanceOf(schema.items, root, `${name}${i}`, depth + 1));
    }
    case 'integer':
    case 'number': {
      const low = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : undefined);
      const high = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : undefined);
      let value = low ?? (high !== undefined ? Math.min(high, 1) : 1);
      if (type === 'integer') value = Math.ceil(value);
      return value;
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    default: {
      if (typeof schema.format === 'string' && FORMATS[schema.format]) return FORMATS[schema.format];
      let text = name || 'baikal';
      if (schema.minLength && text.length < schema.minLength) text = text.padEnd(schema.minLength, 'x');
      if (schema.maxLength && text.length > schema.maxLength) text = text.slice(0, schema.maxLength);
      return text;
    }
  }
}

/**
 * A JSON Schema written into the prompt, as clients do for JSON mode without native structured outputs
 * ("JSON schema: {...} You MUST answer with a JSON object that matches..."): the first JSON object in the
 * texts that looks like a schema. A model in JSON mode follows it; so does the simulator.
 */
export function schemaInPrompt(texts: string[]): unknown {
  for (const text of texts) {
    for (let start = text.indexOf('{'); start !== -1; start = text.indexOf('{', start + 1)) {
      const end = matchingBrace(text, start);
      if (end === -1) continue;
      try {
        const value = JSON.parse(text.slice(start, end + 1));
        if (value && typeof value === 'object' && (value.type === 'object' || value.properties || value.$schema)) return value;
      } catch {
        // not JSON; keep looking
      }
    }
  }
  return undefined;
}

function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i;
  }
  return -1;
}

/** The tool a request forces (tool_choice naming one, or "any"/"required" with tools), if any. */
export function forcedTool<T extends { name: string }>(tools: T[], choice: unknown): T | undefined {
  if (!tools.length || !choice) return undefined;
  if (choice === 'required' || (typeof choice === 'object' && (choice as any).type === 'any')) return tools[0];
  if (typeof choice !== 'object') return undefined;
  const c = choice as any;
  const name = c.type === 'tool' ? c.name : c.type === 'function' ? (c.function?.name ?? c.name) : undefined;
  return tools.find((t) => t.name === name);
}
