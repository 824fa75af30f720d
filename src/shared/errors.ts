/**
 * The only error type services throw. Each transport maps `code` exhaustively to its own shape
 * (HTTP status + body, GraphQL extensions.code, TRPCError), so adding a code is a compile error
 * in every transport until it is mapped.
 */
export type ErrorCode =
  | 'validation_failed'
  | 'unauthenticated'
  | 'invalid_credentials'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'rate_limited'
  | 'insufficient_balance'
  | 'spend_cap_reached'
  | 'unavailable'
  /** A malformed request the model itself refused (400). */
  | 'bad_request'
  /** A request body over the size limit (413). */
  | 'payload_too_large'
  /** A request body in a content type the endpoint does not read (415). */
  | 'unsupported_media_type'
  /** The route behind the gateway failed (502); never carries the upstream's own words. */
  | 'bad_gateway';

/** One validation problem, in SPEC.md's shape: where (`loc`), what (`msg`), which rule (`type`). */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export interface DomainErrorOptions {
  issues?: ValidationIssue[];
  /** Seconds a throttled caller should wait (rate_limited). */
  retryAfterSeconds?: number;
  /** A stable machine-readable sub-code, e.g. `username_taken`. Defaults to the code. */
  reason?: string;
}

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly issues: ValidationIssue[];
  readonly retryAfterSeconds?: number;
  readonly reason: string;

  constructor(code: ErrorCode, message: string, options: DomainErrorOptions = {}) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
    this.issues = options.issues ?? [];
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.reason = options.reason ?? code;
  }

  /** The same error with every issue location prefixed, e.g. `['body']` for a REST body. */
  withLocPrefix(prefix: (string | number)[]): DomainError {
    return prefix.length === 0 ? this : this.withLocs((loc) => [...prefix, ...loc]);
  }

  /** The same error with every issue location rewritten (a transport naming fields its own way). */
  withLocs(rewrite: (loc: (string | number)[]) => (string | number)[]): DomainError {
    if (this.code !== 'validation_failed') return this;
    return new DomainError(this.code, this.message, {
      issues: this.issues.map((issue) => ({ ...issue, loc: rewrite(issue.loc) })),
      reason: this.reason,
    });
  }
}

export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}

/** Compile-time exhaustiveness guard for switches over unions. */
export function unreachable(value: never): never {
  throw new Error(`unreachable: ${String(value)}`);
}

/**
 * What stops a start and only the operator can fix (the embedded PostgreSQL, a database that cannot be reached or
 * refuses us): entry points print its message as one line starting `baikal:` and exit with code 2.
 */
export class StartupError extends Error {
  override name = 'StartupError';
}

/** The HTTP status a code is answered with on every HTTP surface (REST, /v1) and recorded with in traces. */
export function httpStatusOf(code: ErrorCode): number {
  switch (code) {
    case 'validation_failed':
      return 422;
    case 'unauthenticated':
    case 'invalid_credentials':
      return 401;
    case 'insufficient_balance':
    case 'spend_cap_reached':
      return 402;
    case 'forbidden':
      return 403;
    case 'not_found':
      return 404;
    case 'conflict':
      return 409;
    case 'rate_limited':
      return 429;
    case 'unavailable':
      return 503;
    case 'bad_request':
      return 400;
    case 'payload_too_large':
      return 413;
    case 'unsupported_media_type':
      return 415;
    case 'bad_gateway':
      return 502;
    default:
      return unreachable(code);
  }
}
