import { Pool, type Dispatcher } from 'undici';
import type { Cancellation } from '../shared/cancellation.js';
import type { Upstream } from './config.js';
import { failureFromResponse, failureOf, UpstreamFailure, type UpstreamFailureKind } from './failures.js';
import { CredentialRedactor } from './redactor.js';
import { dispatchHandler, type UpstreamAnswer } from './upstream-body.js';

export interface UpstreamResponse {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  body: Dispatcher.ResponseData['body'];
}

/**
 * HTTP to upstreams: one keep-alive undici pool per upstream, with the upstream's connect, first-byte
 * (headers) and idle (between body chunks) timeouts and how long an idle connection is kept. Redirects
 * are never followed, and the target is always the configured base URL: nothing in a client request can
 * steer it elsewhere.
 */
export class UpstreamClient {
  constructor(readonly redactor: CredentialRedactor = new CredentialRedactor([])) {}

  /** One pool per upstream id, with the settings it was made for: an admin's edit of them gets a new pool. */
  private readonly pools = new Map<string, { signature: string; pool: Pool }>();
  private readonly signatures = new WeakMap<Upstream, string>();
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
    let signature = this.signatures.get(upstream);
    if (signature === undefined) {
      const { connectMs, firstByteMs, idleMs, keepAliveMs } = upstream.timeouts;
      signature = `${new URL(upstream.baseUrl).origin} ${connectMs} ${firstByteMs} ${idleMs} ${keepAliveMs}`;
      this.signatures.set(upstream, signature);
    }
    const known = this.pools.get(upstream.id);
    if (known?.signature === signature) return known.pool;
    const pool = new Pool(new URL(upstream.baseUrl).origin, {
      connections: 512,
      keepAliveTimeout: upstream.timeouts.keepAliveMs,
      connect: { timeout: upstream.timeouts.connectMs },
      headersTimeout: upstream.timeouts.firstByteMs,
      bodyTimeout: upstream.timeouts.idleMs,
    });
    this.pools.set(upstream.id, { signature, pool });
    // The old settings' pool ends once the requests it still carries are done.
    if (known) known.pool.close().catch(() => known.pool.destroy());
    return pool;
  }

  /**
   * POSTs JSON to `<baseUrl><path>`; resolves when the response headers arrive. The body is read
   * through `UpstreamBody` (whole or iterated), not a node stream.
   */
  async post(upstream: Upstream, path: string, body: string, headers: Record<string, string>, signal: Cancellation | AbortSignal): Promise<UpstreamAnswer> {
    const base = this.baseOf(upstream);
    try {
      return await new Promise<UpstreamAnswer>((resolve, reject) => {
        this.poolOf(upstream).dispatch(
          {
            method: 'POST',
            path: base.path + path + base.search,
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
            body,
          },
          dispatchHandler(signal, resolve, reject),
        );
      });
    } catch (error) {
      if (signal instanceof AbortSignal ? signal.aborted : signal.cancelled) throw error;
      throw this.failureOf(error, upstream.id);
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
      throw this.failureOf(error, upstream.id);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map(({ pool }) => pool.close().catch(() => pool.destroy())));
    this.pools.clear();
  }

  /** Classifies an error thrown while calling or reading an upstream (its text scrubbed of credentials). */
  failureOf(error: unknown, upstreamId: string): UpstreamFailure {
    return failureOf(error, upstreamId, this.redactor);
  }

  /** Classifies a non-200 answer, keeping an excerpt of its body (scrubbed of credentials) for the operator log. */
  failureFrom(upstreamId: string, response: UpstreamResponse | UpstreamAnswer): Promise<UpstreamFailure> {
    return failureFromResponse(upstreamId, response, this.redactor);
  }

  /** A failure whose detail quotes the upstream (an in-band stream error): scrubbed of credentials. */
  failure(kind: UpstreamFailureKind, upstreamId: string, upstreamWords: string): UpstreamFailure {
    return new UpstreamFailure(kind, upstreamId, this.redactor.redact(upstreamWords));
  }
}
