import { hash32 } from '../upstreams/affinity.js';

/**
 * The cache-affinity key of a request: requests with the same key should reach the same upstream credential
 * (see upstreams/affinity.ts), because a provider's prompt cache lives in one account. Always scoped by our
 * account: two accounts never share a key, whatever they send.
 *
 * In order of preference:
 * 1. what the client names its cache by: `prompt_cache_key` (chat completions and Responses; OpenAI routes
 *    by it), `metadata.user_id` (Messages; Claude Code sends one per session);
 * 2. else, for a long prompt, its leading prefix: a hash of the first AFFINITY_PREFIX_CHARS characters of a
 *    canonical serialization of system/instructions, tools, then messages/input in order. Requests that
 *    repeat a long system prompt, tool list and opening turns get the same key; a short prompt (under about
 *    1024 tokens at ~4 characters a token, which no provider caches) gets none;
 * 3. else null: no affinity, normal weighted routing.
 *
 * Cheap on any body: the serialization stops at the prefix length (a 25 MB body costs what its first 4 KB
 * cost), and nothing is copied but that prefix.
 */

/** ~1024 tokens at ~4 characters a token: the shortest prompt providers cache, and the prefix that is hashed. */
export const AFFINITY_PREFIX_CHARS = 4096;
/** A client's own key longer than this is hashed, so keys stay small whatever a client sends. */
const MAX_VERBATIM_KEY = 256;
/** Nesting beyond this is not serialized (request bodies are depth-checked before this; this only keeps recursion bounded). */
const MAX_DEPTH = 24;

/**
 * How one client format names a prompt cache and reads its prompt (each format has one, in its own
 * directory): the pipeline asks it, never which format it serves.
 */
export interface AffinityRule {
  /** The namespace a client-named key is kept under (`cache`, `user`), so a cache key and a user id never meet. */
  readonly keyScope: string;
  /** What the client names its cache by in this format (any value: only a non-empty string counts). */
  namedKey(body: Record<string, unknown>): unknown;
  /** Writes the prompt in the providers' reading order: system/instructions, tools, then the conversation. */
  writePrompt(body: Record<string, unknown>, out: PromptWriter): void;
}

/** Where a format writes its prompt; everything past AFFINITY_PREFIX_CHARS is ignored (`full` says when). */
export interface PromptWriter {
  readonly full: boolean;
  /** A system prompt or instructions: a string or text blocks. */
  system(value: unknown): void;
  tools(value: unknown): void;
  /** A message or input item. */
  message(value: unknown): void;
}

export function affinityKeyOf(rule: AffinityRule, body: Record<string, unknown>, accountId: string): string | null {
  const named = rule.namedKey(body);
  if (typeof named === 'string' && named !== '') {
    const value = named.length > MAX_VERBATIM_KEY ? `#${hash64(named)}` : named;
    return `${accountId}\u0000${rule.keyScope}\u0000${value}`;
  }
  const prefix = promptPrefix(rule, body);
  return prefix === null ? null : `${accountId}\u0000prefix\u0000${hash64(prefix)}`;
}

/** 64 bits as 16 hex digits: two 32-bit hashes under different seeds. */
function hash64(text: string): string {
  return hash32(text).toString(16).padStart(8, '0') + hash32(text, 0x9e3779b9).toString(16).padStart(8, '0');
}

/**
 * The first AFFINITY_PREFIX_CHARS characters of the prompt's canonical serialization, or null when the whole
 * prompt is shorter. The order is the providers' reading order: system/instructions, tools, the rest.
 */
export function promptPrefix(rule: AffinityRule, body: Record<string, unknown>): string | null {
  const out = new PrefixWriter(AFFINITY_PREFIX_CHARS);
  rule.writePrompt(body, out);
  return out.full ? out.text : null;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** A text part of any format (`text`, `input_text`, `output_text`): rendered as its text alone. */
function textOf(part: unknown): string | undefined {
  return isObject(part) && typeof part.text === 'string' && (part.type === 'text' || part.type === 'input_text' || part.type === 'output_text') ? part.text : undefined;
}

/**
 * Appends a compact, JSON-like rendering of the prompt until `limit` characters, then ignores the rest.
 * Strings go in raw (no escaping pass over a huge string; only the slice that fits is copied). Content is
 * rendered the same whether a client sends a string or text parts, and `cache_control` is left out wherever
 * it appears: clients move those breakpoints from turn to turn, and they are not prompt text.
 */
class PrefixWriter implements PromptWriter {
  text = '';
  constructor(private readonly limit: number) {}

  get full(): boolean {
    return this.text.length >= this.limit;
  }

  /** A system prompt or instructions: a string or text blocks. */
  system(value: unknown): void {
    if (value === undefined || value === null || this.full) return;
    this.add('<system>');
    this.content(value, 0);
  }

  tools(value: unknown): void {
    if (!Array.isArray(value) || !value.length || this.full) return;
    this.add('<tools>');
    this.value(value, 0);
  }

  /** A message or input item: its role and content first, content normalized, then its other fields. */
  message(value: unknown): void {
    if (this.full) return;
    this.add('<message>');
    if (!isObject(value) || value.role === undefined) return this.value(value, 0);
    this.add('{role:');
    this.value(value.role, 1);
    this.add(',content:');
    this.content(value.content, 1);
    for (const key in value) {
      if (this.full) return;
      if (key === 'role' || key === 'content' || key === 'cache_control' || !Object.hasOwn(value, key)) continue;
      if (key === 'type' && value.type === 'message') continue; // Responses items may say it or not
      if (value[key] === undefined) continue;
      this.add(`,${key}:`);
      this.value(value[key], 2);
    }
    this.add('}');
  }

  private add(piece: string): void {
    const room = this.limit - this.text.length;
    if (room > 0) this.text += piece.length > room ? piece.slice(0, room) : piece;
  }

  private string(value: string): void {
    const room = this.limit - this.text.length;
    // Never `"${value}"` of a huge string: only what fits is copied.
    this.add(value.length + 2 > room ? `"${value.slice(0, room)}` : `"${value}"`);
  }

  /** Content as a list: a string is one text part, a text part is its text. */
  private content(value: unknown, depth: number): void {
    if (typeof value === 'string') {
      this.add('[');
      this.string(value);
      return this.add(']');
    }
    if (!Array.isArray(value)) return this.value(value, depth);
    this.add('[');
    for (let i = 0; i < value.length && !this.full; i++) {
      if (i) this.add(',');
      const text = textOf(value[i]);
      if (text === undefined) this.value(value[i], depth + 1);
      else this.string(text);
    }
    this.add(']');
  }

  private value(value: unknown, depth: number): void {
    if (this.full) return;
    if (typeof value === 'string') return this.string(value);
    if (value === null || typeof value !== 'object') return this.add(String(value));
    if (depth >= MAX_DEPTH) return this.add('…');
    if (Array.isArray(value)) {
      this.add('[');
      for (let i = 0; i < value.length && !this.full; i++) {
        if (i) this.add(',');
        this.value(value[i], depth + 1);
      }
      return this.add(']');
    }
    this.add('{');
    let first = true;
    for (const key in value) {
      if (this.full) return;
      const item = (value as Record<string, unknown>)[key];
      if (key === 'cache_control' || item === undefined || !Object.hasOwn(value, key)) continue;
      this.add(first ? `${key}:` : `,${key}:`);
      first = false;
      this.value(item, depth + 1);
    }
    this.add('}');
  }
}
