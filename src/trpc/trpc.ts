import { initTRPC, TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server';
import { requireActor, type RequestContext } from '../context.js';
import { DomainError, unreachable, type ErrorCode } from '../shared/errors.js';

export function trpcCodeOf(code: ErrorCode): TRPC_ERROR_CODE_KEY {
  switch (code) {
    case 'validation_failed':
      return 'UNPROCESSABLE_CONTENT';
    case 'unauthenticated':
    case 'invalid_credentials':
      return 'UNAUTHORIZED';
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
      return 'TOO_MANY_REQUESTS';
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

const t = initTRPC.context<RequestContext>().create({
  errorFormatter({ shape, error, ctx }) {
    const domain = error.cause instanceof DomainError ? error.cause : null;
    if (!domain && error.code === 'INTERNAL_SERVER_ERROR') {
      ctx?.log.error({ err: error.cause ?? error }, 'unhandled tRPC error');
      return { ...shape, message: 'Internal server error', data: { code: shape.data.code, httpStatus: shape.data.httpStatus } };
    }
    return {
      ...shape,
      data: {
        code: shape.data.code,
        httpStatus: shape.data.httpStatus,
        path: shape.data.path,
        reason: domain?.reason ?? null,
        issues: domain?.issues.length ? domain.issues : null,
        retryAfterSeconds: domain?.retryAfterSeconds ?? null,
      },
    };
  },
});

/** Domain errors become TRPCErrors with the mapped code; the original stays as `cause` for the formatter. */
const domainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof DomainError) {
    const cause = result.error.cause;
    throw new TRPCError({ code: trpcCodeOf(cause.code), message: cause.message, cause });
  }
  return result;
});

export const router = t.router;
export const publicProcedure = t.procedure.use(domainErrors);
export const authedProcedure = publicProcedure.use(({ ctx, next }) => next({ ctx: { ...ctx, actor: requireActor(ctx) } }));

/**
 * Input typing without a second validation pass: services validate (and report SPEC.md-shaped
 * issues) themselves; this only gives clients the input type.
 */
export function typedInput<T>() {
  return (raw: unknown) => raw as T;
}
