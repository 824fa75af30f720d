import type { ServerResponse } from 'node:http';
import { httpStatusOf } from '../errors.js';
import { DomainError, unreachable, type ErrorCode } from '../../src/shared/errors.js';
import { MESSAGES_ERROR_TYPE } from '../../src/inference/formats/anthropic-messages/errors.js';

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
 * The OpenAI error shape used on every /v1 path except /v1/messages:
 * `{"error": {"message", "type", "code", "param"}}`. Messages are our own; never upstream text.
 * A 422 also carries SPEC.md's validation shape (`detail: [{loc, msg, type}]`), so both OpenAI
 * clients and clients of the spec read it.
 */
export function openAiErrorBody(error: DomainError): object {
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
}

/** Writes a JSON answer on a plain node response (express's `res.json` is not needed on /v1). */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(body));
}

export function sendOpenAiError(res: ServerResponse, error: DomainError): void {
  if (error.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(error.retryAfterSeconds));
  sendJson(res, httpStatusOf(error.code), openAiErrorBody(error));
}

/**
 * The Messages-format error shape used on /v1/messages: `{"type": "error", "error": {"type", "message"}}`,
 * plus our stable `code` beside them (and SPEC.md's `detail` on a 422).
 */
export function sendAnthropicError(res: ServerResponse, error: DomainError): void {
  if (error.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(error.retryAfterSeconds));
  const first = error.issues[0];
  sendJson(res, httpStatusOf(error.code), {
    type: 'error',
    error: { type: MESSAGES_ERROR_TYPE[error.code], message: first ? `${error.message}: ${first.loc.join('.')}: ${first.msg}` : error.message, code: error.reason },
    ...(error.code === 'validation_failed' ? { detail: error.issues } : {}),
  });
}
