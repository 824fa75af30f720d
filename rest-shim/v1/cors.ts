import type { IncomingMessage, ServerResponse } from 'node:http';

/** Headers a page may read from an answer: ours (the request id, when to retry, the key's limits), as the providers' APIs expose theirs. */
const EXPOSED_HEADERS = [
  'x-request-id',
  'request-id',
  'retry-after',
  'retry-after-ms',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
  'x-ratelimit-limited-by',
  'anthropic-ratelimit-requests-limit',
  'anthropic-ratelimit-requests-remaining',
  'anthropic-ratelimit-requests-reset',
].join(', ');

const isApiPath = (url: string) => url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?');

/**
 * CORS for the API surface (`/v1`): a page may call it with a key, as it may OpenAI's and Anthropic's APIs (the
 * official SDKs' `dangerouslyAllowBrowser`, the AI SDK in a browser). Any origin and never credentials: `/v1` reads
 * no cookie, only the key the page itself sends, so allowing every origin gives no page anything it does not already
 * hold. The cabinet's paths (cookie sessions) stay same-origin. Answers a preflight itself (true), else only adds
 * the headers to the answer to come (false).
 */
export function apiCors(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.headers.origin === undefined || !isApiPath(req.url ?? '')) return false;
  res.setHeader('access-control-allow-origin', '*');
  if (req.method !== 'OPTIONS' || req.headers['access-control-request-method'] === undefined) {
    res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
    return false;
  }
  res.setHeader('access-control-allow-methods', 'GET, POST, DELETE, OPTIONS');
  // Whatever headers the client's SDK sends (authorization, x-api-key, anthropic-*, x-stainless-*, ...).
  const requested = req.headers['access-control-request-headers'];
  if (requested) res.setHeader('access-control-allow-headers', requested);
  res.setHeader('access-control-max-age', '86400');
  res.setHeader('vary', 'access-control-request-headers');
  res.statusCode = 204;
  res.end();
  return true;
}
