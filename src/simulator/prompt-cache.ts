/**
 * The providers' prompt cache, per credential (a cache lives in one provider account: a request sent with
 * another key of the pool finds nothing), modelled on OpenAI's automatic caching:
 * - only prompts of at least `minTokens` tokens are cached;
 * - the prompt is cached in blocks of `blockTokens` tokens: what a later prompt can reuse is its longest
 *   block-aligned prefix identical to one seen before (same credential, same model), and a reuse shorter
 *   than `minTokens` counts nothing (OpenAI reports 0, or 1024 + a multiple of 128);
 * - an entry lives `ttlMs` after its last use (5 minutes by default: Anthropic's ephemeral cache; OpenAI
 *   keeps 5-10 minutes of inactivity).
 * Anthropic caches only up to the `cache_control` breakpoints a request marks; the simulator caches
 * automatically on every route instead, so a gateway's affinity shows the same way on all three.
 *
 * The prompt is read as the route counts its tokens (one token a word, plus each message's role framing),
 * so cached counts never exceed the prompt tokens the same response reports. Tool definitions count no
 * tokens (the routes' usage leaves them out) but are part of the prefix: changing them changes every
 * block after them.
 *
 * Memory: one Map entry per cached block. The Map's order is the order of last use and every entry has the
 * same lifetime, so the expired entries are always at its front: pruning is a walk from the front that
 * stops at the first live entry, done on each use. `maxEntries` bounds it further (least recently used out).
 */

/** A piece of a prompt, in the order the model reads it. */
export type PromptPart =
  /** Text counted as words, after `framing` tokens of role framing (`tag`, e.g. the role, tells framings apart). */
  | { text: string; framing: number; tag?: string }
  /** Content that counts no tokens but is part of the prefix (tool definitions). */
  | { opaque: string };

export interface CacheUse {
  /** Prompt tokens read from the cache. */
  cached: number;
  /** Prompt tokens this request wrote to the cache (beyond what it read). */
  written: number;
}

export interface PromptCacheOptions {
  minTokens: number;
  blockTokens: number;
  ttlMs: number;
  maxEntries: number;
}

/** Two FNV-1a lanes with different primes: 53 bits of the pair key a block (collisions are negligible at 10^5 entries). */
const PRIME_A = 0x01000193;
const PRIME_B = 0x01000197;

/** Whitespace as the regular expression `\s` has it, so words split exactly as `countTokens` splits them. */
function isSpace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff
  );
}

export class PromptCache {
  /** Block key → expiry (ms since the epoch); insertion order is the order of last use. */
  private readonly entries = new Map<number, number>();

  constructor(
    private readonly options: PromptCacheOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /** Cached blocks held now (expired ones included until the next use prunes them). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * What `credential` has cached of this prompt for `model`; then the prompt's blocks are (re)written for it.
   * Call it only for a request that is answered (a refused or failed request caches nothing).
   */
  use(credential: number, model: string, parts: readonly PromptPart[]): CacheUse {
    const { minTokens, blockTokens, ttlMs } = this.options;
    const now = this.now();
    this.prune(now);
    const blocks = blockKeys(`${credential}\u0000${model}`, parts, blockTokens, minTokens);
    if (!blocks) return { cached: 0, written: 0 };
    let hits = 0;
    while (hits < blocks.length && this.entries.has(blocks[hits]!)) hits++;
    const cached = hits * blockTokens >= minTokens ? hits * blockTokens : 0;
    // Every block is renewed: a hit extends its life, as a provider's does.
    const expiresAt = now + ttlMs;
    for (const key of blocks) {
      this.entries.delete(key);
      this.entries.set(key, expiresAt);
    }
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.options.maxEntries) break;
      this.entries.delete(key);
    }
    return { cached, written: blocks.length * blockTokens - cached };
  }

  private prune(now: number): void {
    for (const [key, expiresAt] of this.entries) {
      if (expiresAt > now) break;
      this.entries.delete(key);
    }
  }
}

/**
 * The keys of the prompt's whole blocks: key i stands for every token up to the end of block i (a chained
 * hash, seeded with the credential and model). Null when the prompt is shorter than `minTokens`.
 */
function blockKeys(seed: string, parts: readonly PromptPart[], blockTokens: number, minTokens: number): number[] | null {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  const mix = (text: string) => {
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      a = Math.imul(a ^ code, PRIME_A);
      b = Math.imul(b ^ code, PRIME_B);
    }
  };
  mix(seed);
  const keys: number[] = [];
  let tokens = 0;
  const endToken = () => {
    // A separator that no character of a word can be: `ab c` and `a bc` differ.
    a = Math.imul(a ^ 0xffff_0001, PRIME_A);
    b = Math.imul(b ^ 0xffff_0001, PRIME_B);
    if (++tokens % blockTokens === 0) keys.push((a >>> 0) * 0x20_0000 + (b >>> 11));
  };
  for (const part of parts) {
    if ('opaque' in part) {
      mix('\u0000tools\u0000');
      mix(part.opaque);
      continue;
    }
    for (let f = 0; f < part.framing; f++) {
      mix(f === 0 ? `\u0000${part.tag ?? ''}\u0000` : '\u0000');
      endToken();
    }
    const text = part.text;
    let inWord = false;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (isSpace(code)) {
        if (inWord) endToken();
        inWord = false;
        continue;
      }
      a = Math.imul(a ^ code, PRIME_A);
      b = Math.imul(b ^ code, PRIME_B);
      inWord = true;
    }
    if (inWord) endToken();
  }
  return tokens >= minTokens ? keys : null;
}
