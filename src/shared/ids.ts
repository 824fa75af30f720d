import { hash, randomBytes, randomFillSync, randomUUID, timingSafeEqual } from 'node:crypto';

export const newId = (): string => randomUUID();

/** Random bytes for minted ids, drawn 4 KiB at a time: one system call per few hundred ids instead of one each. */
const entropy = Buffer.alloc(4096);
let entropyUsed = entropy.length;

function randomSlice(bytes: number): number {
  if (entropyUsed + bytes > entropy.length) {
    randomFillSync(entropy);
    entropyUsed = 0;
  }
  entropyUsed += bytes;
  return entropyUsed - bytes;
}

/** The current Unix time in milliseconds as 12 hex digits: 48 bits, in byte order as in text order. */
const millisHex = (): string => Date.now().toString(16).padStart(12, '0');

/**
 * A UUIDv7 (RFC 9562): the Unix time in milliseconds, then 74 random bits. For rows written at every
 * request (usage events, their ledger rows): a B-tree on a random key takes each insert on a random
 * leaf, so the index's whole width is written to and kept in cache; on a time-ordered key the inserts
 * land on the rightmost leaves and the index grows at its end.
 */
export function newTimeOrderedId(): string {
  const at = randomSlice(10);
  const random = entropy.toString('hex', at, at + 10);
  const time = millisHex();
  // Version 7 in the 13th digit, the variant (binary 10) in the top bits of the 17th.
  const variant = ((entropy[at + 1]! & 0x3) | 0x8).toString(16);
  return `${time.slice(0, 8)}-${time.slice(8)}-7${random.slice(0, 3)}-${variant}${random.slice(5, 8)}-${random.slice(8, 20)}`;
}

/** A UUID in PostgreSQL's canonical text form (8-4-4-4-12 hex digits): safe to bind as a `uuid` parameter. */
export const isUuid = (value: unknown): value is string => typeof value === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);

/** A random URL-safe secret with `bytes` bytes of entropy (base64url, no padding). */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** SHA-256 hex digest. Used for high-entropy secrets (session tokens, API keys), never for passwords. */
export function sha256Hex(value: string): string {
  // The one-shot form: no Hash object per call (every /v1 request hashes its key).
  return hash('sha256', value, 'hex');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{8,128}$/;

/** Whether a text could be one of our request ids (a client's own id that passed, or one we issued). */
export function isRequestId(value: string): boolean {
  return REQUEST_ID_PATTERN.test(value);
}

/**
 * Keeps a caller-supplied request id only when it is safe to log and echo; otherwise mints one: the time
 * in milliseconds (hex, so the ids sort by time as text, for the usage events' index on them), then 72
 * random bits.
 */
export function requestIdFrom(incoming: string | undefined): string {
  if (incoming && REQUEST_ID_PATTERN.test(incoming)) return incoming;
  const at = randomSlice(9);
  return `req_${millisHex()}${entropy.toString('base64url', at, at + 9)}`;
}
