import { DomainError } from '../shared/errors.js';
import type { Dispatcher } from 'undici';
import type { CredentialRedactor } from './redactor.js';

/** Why an upstream call failed, in our own terms; the upstream's words stay in the operator log. */
export type UpstreamFailureKind = 'timeout' | 'connection' | 'rate_limited' | 'server_error' | 'rejected' | 'misconfigured';

export class UpstreamFailure extends Error {
  constructor(
    readonly kind: UpstreamFailureKind,
    readonly upstreamId: string,
    /**
     * Operator-facing detail (status, error code, a short excerpt). Never sent to a client; text that
     * came from an upstream is scrubbed of credentials by the `UpstreamClient` before it lands here.
     */
    readonly detail: string,
    readonly status: number | null = null,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(`upstream ${upstreamId}: ${kind}`);
    this.name = 'UpstreamFailure';
  }

  /** Worth trying another route (before any byte reached the client). */
  get retryable(): boolean {
    return this.kind !== 'rejected';
  }
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Classifies an error thrown while calling or reading an upstream. */
export function failureOf(error: unknown, upstreamId: string, redactor: CredentialRedactor): UpstreamFailure {
  if (error instanceof UpstreamFailure) return error;
  const code = (error as { code?: string })?.code ?? '';
  const message = redactor.redact((error as Error)?.message ?? String(error));
  if (TIMEOUT_CODES.has(code)) return new UpstreamFailure('timeout', upstreamId, `${code}: ${message}`);
  return new UpstreamFailure('connection', upstreamId, `${code || 'error'}: ${message}`);
}

/** The most of an upstream error body we read (for the operator log). */
const ERROR_EXCERPT_BYTES = 2_048;

/** Maps a non-200 upstream answer to our failure kinds, keeping its text for the operator only. */
export async function failureFromResponse(upstreamId: string, response: Pick<Dispatcher.ResponseData, 'headers'> & { status: number; body: AsyncIterable<unknown> & { destroy(): void } }, redactor: CredentialRedactor): Promise<UpstreamFailure> {
  let excerpt = '';
  try {
    for await (const chunk of response.body) {
      excerpt += Buffer.from(chunk as Uint8Array).toString('utf8');
      if (excerpt.length >= ERROR_EXCERPT_BYTES) break;
    }
  } catch {
    // The body is only for the log.
  } finally {
    response.body.destroy();
  }
  const detail = redactor.redact(`HTTP ${response.status}: ${excerpt.slice(0, ERROR_EXCERPT_BYTES)}`);
  const status = response.status;
  if (status === 429) {
    const retryAfter = Number(response.headers['retry-after']);
    return new UpstreamFailure('rate_limited', upstreamId, detail, status, Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(Math.ceil(retryAfter), 60) : null);
  }
  if (status === 408 || status === 504) return new UpstreamFailure('timeout', upstreamId, detail, status);
  if (status >= 500) return new UpstreamFailure('server_error', upstreamId, detail, status);
  // A redirect is never followed (upstream URLs come from configuration only): the route is misconfigured, not the request.
  if (status === 401 || status === 403 || status === 404 || (status >= 300 && status < 400)) return new UpstreamFailure('misconfigured', upstreamId, detail, status);
  return new UpstreamFailure('rejected', upstreamId, detail, status);
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
