import type { DomainError, ErrorCode } from '../../../shared/errors.js';
import type { ErrorShape } from '../client-format.js';

/** Errors as Messages clients read them: Anthropic's error types and body. */

export type MessagesErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'timeout_error'
  | 'api_error'
  | 'overloaded_error';

/** Which Anthropic error type each of our error codes is shown as (exhaustive: a new code must be mapped). */
export const MESSAGES_ERROR_TYPE: Record<ErrorCode, MessagesErrorType> = {
  validation_failed: 'invalid_request_error',
  bad_request: 'invalid_request_error',
  unauthenticated: 'authentication_error',
  invalid_credentials: 'authentication_error',
  forbidden: 'permission_error',
  not_found: 'not_found_error',
  conflict: 'invalid_request_error',
  rate_limited: 'rate_limit_error',
  insufficient_balance: 'billing_error',
  spend_cap_reached: 'billing_error',
  unavailable: 'overloaded_error',
  payload_too_large: 'request_too_large',
  unsupported_media_type: 'invalid_request_error',
  bad_gateway: 'api_error',
};

/** The Messages API error body. */
export function errorBody(type: MessagesErrorType, message: string): { type: 'error'; error: { type: MessagesErrorType; message: string } } {
  return { type: 'error', error: { type, message } };
}

/**
 * The Messages-format error shape: `{"type": "error", "error": {"type", "message"}}`, plus our stable
 * `code` beside them (and SPEC.md's `detail` on a 422). Messages clients read errors only in this shape.
 */
export const MESSAGES_ERRORS: ErrorShape = {
  rateLimitHeaders: 'anthropic',
  refused(error: DomainError): object {
    const first = error.issues[0];
    return {
      type: 'error',
      error: { type: MESSAGES_ERROR_TYPE[error.code], message: first ? `${error.message}: ${first.loc.join('.')}: ${first.msg}` : error.message, code: error.reason },
      ...(error.code === 'validation_failed' ? { detail: error.issues } : {}),
    };
  },
  // The SDKs retry an overloaded_error.
  unavailable: (detail, code) => ({ type: 'error', error: { type: 'overloaded_error', message: detail, code } }),
  internal: () => ({ type: 'error', error: { type: 'api_error', message: 'Internal server error', code: 'internal_error' } }),
};
