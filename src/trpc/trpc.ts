import { initTRPC, TRPCError } from '@trpc/server';
import type { z } from 'zod';
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
 * A procedure's input, typed by the zod schema the service validates it with: clients get the
 * schema's input type, and the service gets the input as sent. Nothing is parsed here: the service
 * parses it exactly once (SPEC.md-shaped issues, UNPROCESSABLE_CONTENT through `domainErrors`), so a
 * procedure cannot validate differently from the REST and GraphQL surfaces over the same service.
 */
export function serviceInput<S extends z.ZodType>(_schema: S): (raw: unknown) => z.input<S> {
  return unchecked;
}

/** As `serviceInput`, for services that take an absent input as `{}`. */
export function optionalServiceInput<S extends z.ZodType>(_schema: S): (raw: unknown) => z.input<S> | undefined {
  return unchecked;
}

/** The one place a client's raw input takes the service's input type (the service checks it first thing). */
function unchecked<T>(raw: unknown): T {
  return raw as T;
}
