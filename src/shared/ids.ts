import { hash, randomBytes, randomFillSync, randomUUID, timingSafeEqual } from 'node:crypto';

export const newId = (): string => randomUUID();

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

/** Random bytes for request ids, drawn 4 KiB at a time: one system call per 341 requests instead of one each. */
const idEntropy = Buffer.alloc(4096);
let idEntropyUsed = idEntropy.length;

/** Keeps a caller-supplied request id only when it is safe to log and echo; otherwise mints one. */
/** Whether a text could be one of our request ids (a client's own id that passed, or one we issued). */
export function isRequestId(value: string): boolean {
  return REQUEST_ID_PATTERN.test(value);
}

export function requestIdFrom(incoming: string | undefined): string {
  if (incoming && REQUEST_ID_PATTERN.test(incoming)) return incoming;
  if (idEntropyUsed + 12 > idEntropy.length) {
    randomFillSync(idEntropy);
    idEntropyUsed = 0;
  }
  idEntropyUsed += 12;
  return `req_${idEntropy.toString('base64url', idEntropyUsed - 12, idEntropyUsed)}`;
}
