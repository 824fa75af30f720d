import { Pool, type Dispatcher } from 'undici';
import type { Cancellation } from '../shared/cancellation.js';
import { DomainError } from '../shared/errors.js';
import type { Upstream } from './upstreams.config.js';

/** Why an upstream call failed, in our own terms; the upstream's words stay in the operator log. */
export type UpstreamFailureKind = 'timeout' | 'connection' | 'rate_limited' | 'server_error' | 'rejected' | 'misconfigured';

/**
 * Every configured upstream credential. Upstreams (and the proxies in front of them) may echo the key
 * they were sent in an error text; failure details go to the operator log, which must hold no credential.
 */
const knownCredentials = new Set<string>();

export function registerUpstreamCredential(credential: string): void {
  if (credential) knownCredentials.add(credential);
}

/** The text with every configured upstream credential replaced by `[redacted]`. */
export function redactCredentials(text: string): string {
  for (const credential of knownCredentials) if (text.includes(credential)) text = text.replaceAll(credential, '[redacted]');
  return text;
}

export class UpstreamFailure extends Error {
  /** Operator-facing detail (status, error code, a short excerpt), scrubbed of credentials. Never sent to a client. */
  readonly detail: string;

  constructor(
    readonly kind: UpstreamFailureKind,
    readonly upstreamId: string,
    detail: string,
    readonly status: number | null = null,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(`upstream ${upstreamId}: ${kind}`);
    this.name = 'UpstreamFailure';
    this.detail = redactCredentials(detail);
  }

  /** Worth trying another route (before any byte reached the client). */
  get retryable(): boolean {
    return this.kind !== 'rejected';
  }
}

export interface UpstreamResponse {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  body: Dispatcher.ResponseData['body'];
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Classifies an error thrown while calling or reading an upstream. */
export function failureOf(error: unknown, upstreamId: string): UpstreamFailure {
  if (error instanceof UpstreamFailure) return error;
  const code = (error as { code?: string })?.code ?? '';
  const message = (error as Error)?.message ?? String(error);
  if (TIMEOUT_CODES.has(code)) return new UpstreamFailure('timeout', upstreamId, `${code}: ${message}`);
  return new UpstreamFailure('connection', upstreamId, `${code || 'error'}: ${message}`);
}

/**
 * HTTP to upstreams: one keep-alive undici pool per upstream, with the upstream's connect,
 * first-byte (headers) and idle (between body chunks) timeouts. Redirects are never followed, and the
 * target is always the configured base URL: nothing in a client request can steer it elsewhere.
 */
export class UpstreamClient {
  private readonly pools = new Map<string, Pool>();
  private readonly bases = new Map<string, { path: string; search: string }>();

  /** The base URL's path (no trailing slash) and query, parsed once per base URL. */
  private baseOf(upstream: Upstream): { path: string; search: string } {
    let base = this.bases.get(upstream.baseUrl);
    if (!base) {
      const url = new URL(upstream.baseUrl);
      base = { path: url.pathname.replace(/\/+$/, ''), search: url.search };
      this.bases.set(upstream.baseUrl, base);
    }
    return base;
  }

  private poolOf(upstream: Upstream): Pool {
    let pool = this.pools.get(upstream.id);
    if (!pool) {
      pool = new Pool(new URL(upstream.baseUrl).origin, {
        connections: 512,
        keepAliveTimeout: 30_000,
        connect: { timeout: upstream.timeouts.connectMs },
        headersTimeout: upstream.timeouts.firstByteMs,
        bodyTimeout: upstream.timeouts.idleMs,
      });
      this.pools.set(upstream.id, pool);
    }
    return pool;
  }

  /** POSTs JSON to `<baseUrl><path>`; resolves when the response headers arrive. */
  async post(upstream: Upstream, path: string, body: string, headers: Record<string, string>, signal: Cancellation | AbortSignal): Promise<UpstreamResponse> {
    const base = this.baseOf(upstream);
    try {
      const response = await this.poolOf(upstream).request({
        method: 'POST',
        path: base.path + path + base.search,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body,
        signal,
      });
      return { status: response.statusCode, headers: response.headers, body: response.body };
    } catch (error) {
      if (signal instanceof AbortSignal ? signal.aborted : signal.cancelled) throw error;
      throw failureOf(error, upstream.id);
    }
  }

  /** GETs `<baseUrl><path>`; resolves when the response headers arrive (the body streams). */
  async get(upstream: Upstream, path: string, headers: Record<string, string>, signal?: AbortSignal): Promise<UpstreamResponse> {
    const base = this.baseOf(upstream);
    try {
      const response = await this.poolOf(upstream).request({ method: 'GET', path: base.path + path, headers, signal });
      return { status: response.statusCode, headers: response.headers, body: response.body };
    } catch (error) {
      if (signal?.aborted) throw error;
      throw failureOf(error, upstream.id);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((pool) => pool.close().catch(() => pool.destroy())));
    this.pools.clear();
  }
}

/** What a failed upstream call becomes for the client: our code and words, never the upstream's. */
export function clientErrorOf(failure: UpstreamFailure): DomainError {
  switch (failure.kind) {
    case 'rate_limited':
      return new DomainError('rate_limited', 'The model is receiving too many requests right now; retry shortly', { retryAfterSeconds: failure.retryAfterSeconds ?? 5, reason: 'upstream_rate_limited' });
    case 'timeout':
      return new DomainError('unavailable', 'The model did not answer in time; retry shortly', { retryAfterSeconds: 5, reason: 'upstream_timeout' });
    case 'rejected':
      return /context_length_exceeded|maximum context length/i.test(failure.detail)
        ? new DomainError('bad_request', "The request is longer than this model's context window", { reason: 'context_length_exceeded' })
        : new DomainError('bad_request', 'The model could not process this request; check its parameters', { reason: 'request_rejected' });
    case 'connection':
    case 'server_error':
    case 'misconfigured':
      return new DomainError('bad_gateway', 'The model route failed; retry shortly', { reason: 'upstream_error' });
  }
}
