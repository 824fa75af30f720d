import type { Upstream } from './config.js';

/** The Anthropic API version we speak to `anthropic` upstreams. */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * How each upstream kind is authenticated: a Bearer token (OpenAI-compatible chat and Responses, the
 * video jobs API) or Anthropic's `x-api-key` with its version header. Used by every caller of an
 * upstream: the inference providers, the status probes and the video runner.
 */
export function authHeaders(upstream: Upstream): Record<string, string> {
  return upstream.kind === 'anthropic' ? { 'x-api-key': upstream.credential, 'anthropic-version': ANTHROPIC_VERSION } : { authorization: `Bearer ${upstream.credential}` };
}
