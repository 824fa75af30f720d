import { DomainError, unreachable, type ErrorCode } from '../../shared/errors.js';
import type { ErrorShape } from './client-format.js';

/** OpenAI's error `type` for each of our codes; `code` carries our own stable reason. */
function openAiTypeOf(code: ErrorCode): string {
  switch (code) {
    case 'validation_failed':
    case 'not_found':
    case 'conflict':
    case 'bad_request':
    case 'payload_too_large':
    case 'unsupported_media_type':
      return 'invalid_request_error';
    case 'unauthenticated':
    case 'invalid_credentials':
      return 'authentication_error';
    case 'forbidden':
      return 'permission_error';
    case 'insufficient_balance':
    case 'spend_cap_reached':
      return 'insufficient_quota';
    case 'rate_limited':
      return 'rate_limit_error';
    case 'unavailable':
    case 'bad_gateway':
      return 'service_unavailable';
    default:
      return unreachable(code);
  }
}

/**
 * The OpenAI error shape, used on every /v1 path but Anthropic's (chat completions and Responses
 * clients read it; so do the paths that speak no client format): `{"error": {"message", "type",
 * "code", "param"}}`. Messages are our own; never upstream text. A 422 also carries SPEC.md's
 * validation shape (`detail: [{loc, msg, type}]`), so both OpenAI clients and clients of the spec read it.
 */
export const OPENAI_ERRORS: ErrorShape = {
  rateLimitHeaders: 'openai',
  refused(error: DomainError): object {
    const first = error.issues[0];
    return {
      error: {
        message: first ? `${error.message}: ${first.loc.join('.')}: ${first.msg}` : error.message,
        type: openAiTypeOf(error.code),
        code: error.reason,
        param: first ? first.loc.join('.') : null,
      },
      ...(error.code === 'validation_failed' ? { detail: error.issues } : {}),
    };
  },
  // SPEC.md's shape, as every other /v1 path answers while the gateway is not serving.
  unavailable: (detail, code) => ({ detail, code }),
  internal: () => ({ error: { message: 'Internal server error', type: 'server_error', code: 'internal_error', param: null } }),
};
