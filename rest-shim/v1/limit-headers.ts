import type { ServerResponse } from 'node:http';
import { LIMITED_BY, LimitRefusal, type LimitSubject, type RequestLimiter, type RequestWindow } from '../../src/inference/limits.js';
import type { RateLimitHeaderStyle } from '../../src/inference/formats/client-format.js';
import type { DomainError } from '../../src/shared/errors.js';

/** Where headers go: a node response (or anything with its `setHeader`). */
interface HeaderTarget {
  setHeader(name: string, value: string): unknown;
}

/**
 * The key's request limits as its clients read them (docs/api.md, "Rate-limit headers"):
 * - OpenAI's clients: `x-ratelimit-limit-requests`, `x-ratelimit-remaining-requests` and
 *   `x-ratelimit-reset-requests`, a Go-style duration (`12ms`, `1s`, `6m0s`, `1m26.4s`) as OpenAI sends it;
 * - Anthropic's (`/v1/messages`): `anthropic-ratelimit-requests-limit`, `-remaining` and `-reset`, the
 *   RFC 3339 time at which the window is empty again.
 * Both resets say when the window is fully free, as the providers define them; when the next request is
 * let in after a 429 is `retry-after` (seconds) and `retry-after-ms`, which both official SDKs read first.
 */
export function writeWindow(res: HeaderTarget, style: RateLimitHeaderStyle, window: RequestWindow, now = Date.now()): void {
  if (style === 'anthropic') {
    res.setHeader('anthropic-ratelimit-requests-limit', String(window.limit));
    res.setHeader('anthropic-ratelimit-requests-remaining', String(window.remaining));
    // Whole seconds, rounded up: the time is never earlier than the moment the window frees.
    res.setHeader('anthropic-ratelimit-requests-reset', rfc3339Second(Math.ceil((now + window.resetMs) / 1000)));
    return;
  }
  res.setHeader('x-ratelimit-limit-requests', String(window.limit));
  res.setHeader('x-ratelimit-remaining-requests', String(window.remaining));
  // An admitted request's reset is always the full window: the one string is kept, not rebuilt per request.
  res.setHeader('x-ratelimit-reset-requests', window.resetMs === lastDuration.ms ? lastDuration.text : rememberDuration(window.resetMs));
}

const lastDuration = { ms: -1, text: '' };
function rememberDuration(ms: number): string {
  lastDuration.ms = ms;
  lastDuration.text = goDuration(ms);
  return lastDuration.text;
}

/** A whole second as RFC 3339 in UTC (`2026-11-28T06:01:00Z`); the last one is kept, since requests of one second share it. */
const lastSecond = { second: -1, text: '' };
function rfc3339Second(second: number): string {
  if (second !== lastSecond.second) {
    lastSecond.second = second;
    lastSecond.text = new Date(second * 1000).toISOString().replace('.000Z', 'Z');
  }
  return lastSecond.text;
}

/**
 * The key's window as it stands, on an answer of a /v1 route that counts nothing against it (the model list, a
 * video poll, a stored response, ...): one look at the limiter (in memory, or one Redis round trip), off the
 * inference hot path. Written before the route's own work, so its errors carry the figures too. When the
 * limiter cannot say (Redis down and no local fallback), the answer goes out without them.
 */
export async function writePeekedWindow(res: HeaderTarget, style: RateLimitHeaderStyle, limiter: Pick<RequestLimiter, 'peek'>, subject: LimitSubject): Promise<void> {
  try {
    writeWindow(res, style, await limiter.peek(subject));
  } catch {
    // Nothing to show; the answer itself does not depend on it.
  }
}

/** Whether the key's window is already on the answer (set after admission, before a later refusal). */
export function hasWindow(res: Pick<ServerResponse, 'hasHeader'>, style: RateLimitHeaderStyle): boolean {
  return res.hasHeader(style === 'anthropic' ? 'anthropic-ratelimit-requests-limit' : 'x-ratelimit-limit-requests');
}

/** Which limit refused a request, for a client that must tell its own limit from the gateway's. */
export const LIMITED_BY_HEADER = 'x-ratelimit-limited-by';

/**
 * What a refusal tells a client about waiting: `retry-after` (whole seconds, as HTTP has it) with
 * `retry-after-ms` beside it (the official SDKs read `retry-after-ms` first: openai src/client.ts
 * `retryRequest`, @anthropic-ai/sdk src/client.ts `retryRequest`), which limit refused it, and the
 * key's window as the limiter saw it.
 */
export function writeRefusal(res: HeaderTarget, style: RateLimitHeaderStyle, error: DomainError): void {
  if (error.retryAfterSeconds === undefined) return;
  res.setHeader('retry-after', String(error.retryAfterSeconds));
  res.setHeader('retry-after-ms', String(error instanceof LimitRefusal ? error.retryAfterMs : error.retryAfterSeconds * 1000));
  const limitedBy = LIMITED_BY[error.reason];
  if (limitedBy) res.setHeader(LIMITED_BY_HEADER, limitedBy);
  if (error instanceof LimitRefusal && error.window) writeWindow(res, style, error.window);
}

/**
 * A duration as Go's `time.Duration` prints it, which is what OpenAI's reset headers carry and what
 * clients that read them parse (e.g. go-openai with `time.ParseDuration`): `0s`, `12ms` under a second,
 * else hours, minutes and seconds with up to three decimals (`1s`, `8.64s`, `6m0s`, `1h0m0s`).
 */
export function goDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms));
  if (total === 0) return '0s';
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const seconds = `${Math.floor((total % 60_000) / 1000)}${total % 1000 ? `.${String(total % 1000).padStart(3, '0').replace(/0+$/, '')}` : ''}s`;
  if (hours) return `${hours}h${minutes}m${seconds}`;
  return minutes ? `${minutes}m${seconds}` : seconds;
}
