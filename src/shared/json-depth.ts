import { DomainError } from './errors.js';

/**
 * How deeply arrays and objects may nest in any JSON the gateway accepts (REST, GraphQL, tRPC, /v1,
 * webhooks, graphql-ws messages). Real requests stay far below it (a chat request with tool schemas is
 * about 10 deep); past it, recursive code on the way (our own serialisation, tRPC's, the database's)
 * would overflow its stack and turn a client's mistake into a 5xx.
 */
export const MAX_JSON_DEPTH = 64;

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text (UTF-8 bytes) nests deeper than `max`. One pass over the bytes, skipping strings,
 * without parsing; malformed text is left to the parser. Multi-byte UTF-8 never contains these ASCII
 * bytes, so scanning bytes is exact.
 */
export function jsonNestsDeeper(bytes: Uint8Array, max = MAX_JSON_DEPTH): boolean {
  // Fewer openers than the bound cannot nest past it: most bodies end here, with two native searches.
  if (countUpTo(bytes, OPEN_OBJECT, max + 1) + countUpTo(bytes, OPEN_ARRAY, max + 1) <= max) return false;
  let depth = 0;
  for (let i = 0, n = bytes.length; i < n; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      for (i++; i < n; i++) {
        const d = bytes[i];
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}

function countUpTo(bytes: Uint8Array, byte: number, limit: number): number {
  let count = 0;
  for (let at = bytes.indexOf(byte); at !== -1 && count < limit; at = bytes.indexOf(byte, at + 1)) count++;
  return count;
}

/**
 * Where a parsed value first nests past `max`: the keys and indexes down to the first container too
 * deep. Iterative, so it works on values no recursive walk could visit. Null when none does.
 */
export function tooDeepLocation(value: unknown, max = MAX_JSON_DEPTH): (string | number)[] | null {
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  while (stack.length) {
    const { value: item, path } = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (path.length >= max) return path;
    const entries = Array.isArray(item) ? item.map((v, i) => [i, v] as const) : Object.entries(item);
    for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i]![1], path: [...path, entries[i]![0]] });
  }
  return null;
}

/** The 422 for JSON nested too deeply, with the location of the first container past the bound. */
export function tooDeepError(bytes: Uint8Array, where: string = 'body', max = MAX_JSON_DEPTH): DomainError {
  let loc: (string | number)[] = [];
  try {
    loc = tooDeepLocation(JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')), max) ?? [];
  } catch {
    // Malformed as well as deep: the bound is the first problem found, at the top.
  }
  return new DomainError('validation_failed', 'Request validation failed', {
    issues: [{ loc: [where, ...loc], msg: `JSON may nest arrays and objects at most ${max} levels deep`, type: 'json_too_deep' }],
  });
}

/** Throws the 422 when JSON bytes nest too deeply (for every place JSON arrives). */
export function assertJsonDepth(bytes: Uint8Array, where: string = 'body'): void {
  if (jsonNestsDeeper(bytes)) throw tooDeepError(bytes, where);
}
