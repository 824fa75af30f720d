import type { GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { DomainError, unreachable, type ErrorCode } from '../src/shared/errors.js';
import type { Logger } from '../src/shared/logging.js';

export function graphqlCodeOf(code: ErrorCode): string {
  switch (code) {
    case 'validation_failed':
      return 'BAD_USER_INPUT';
    case 'unauthenticated':
    case 'invalid_credentials':
      return 'UNAUTHENTICATED';
    case 'insufficient_balance':
    case 'spend_cap_reached':
      return 'PAYMENT_REQUIRED';
    case 'forbidden':
      return 'FORBIDDEN';
    case 'not_found':
      return 'NOT_FOUND';
    case 'conflict':
      return 'CONFLICT';
    case 'rate_limited':
      return 'RATE_LIMITED';
    case 'unavailable':
      return 'SERVICE_UNAVAILABLE';
    case 'bad_request':
      return 'BAD_REQUEST';
    case 'payload_too_large':
      return 'PAYLOAD_TOO_LARGE';
    case 'unsupported_media_type':
      return 'UNSUPPORTED_MEDIA_TYPE';
    case 'bad_gateway':
      return 'BAD_GATEWAY';
    default:
      return unreachable(code);
  }
}

/** Apollo's codes for errors it raises itself (parse, validation, bad variables); safe to pass on. */
const CLIENT_ERROR_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'OPERATION_RESOLUTION_FAILURE',
  'BAD_REQUEST',
]);

/**
 * Domain errors keep their message and gain a stable `extensions.code`; validation issues use
 * SPEC.md's shape under `extensions.issues`. Anything unexpected is logged and masked.
 */
export function formatGraphQLError(log: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = unwrapResolverError(error);
    if (original instanceof DomainError) {
      return {
        message: original.message,
        locations: formatted.locations,
        path: formatted.path,
        extensions: {
          code: graphqlCodeOf(original.code),
          reason: original.reason,
          ...(original.issues.length ? { issues: original.issues } : {}),
          ...(original.retryAfterSeconds !== undefined ? { retryAfterSeconds: original.retryAfterSeconds } : {}),
        },
      };
    }
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && CLIENT_ERROR_CODES.has(code)) {
      return { message: formatted.message, locations: formatted.locations, path: formatted.path, extensions: { code } };
    }
    log.error({ err: original, path: formatted.path }, 'unhandled GraphQL error');
    return { message: 'Internal server error', path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
  };
}
