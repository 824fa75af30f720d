import type { Upstream, UpstreamCredential } from './model.js';

/** The Anthropic API version we speak to `anthropic` upstreams. */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * How each upstream kind is authenticated: a Bearer token (OpenAI-compatible chat and Responses, the
 * video jobs API) or Anthropic's `x-api-key` with its version header. Used by every caller of an
 * upstream: the inference providers (with the credential routing chose), the status probes and the
 * video runner (with the pool's first credential).
 */
export function authHeaders(upstream: Pick<Upstream, 'kind' | 'credentials'>, credential: UpstreamCredential = upstream.credentials[0]!): Record<string, string> {
  return upstream.kind === 'anthropic' ? { 'x-api-key': credential.secret, 'anthropic-version': ANTHROPIC_VERSION } : { authorization: `Bearer ${credential.secret}` };
}
