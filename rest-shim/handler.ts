import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { requireActor, type RequestContext } from '../src/context.js';
import type { Actor } from '../src/shared/actor.js';
import { DomainError } from '../src/shared/errors.js';

export function contextOf(res: Response): RequestContext {
  return res.locals.ctx as RequestContext;
}

/** Where an input came from, so validation issues carry SPEC.md's `loc` prefix. */
export type InputSource = 'body' | 'query' | 'path';

/**
 * SPEC.md names fields in snake_case; domain inputs are camelCase. A surface's multi-word names, mapped
 * exactly both ways: a client's SPEC names become the domain's on the way in, and issue locations go
 * back to SPEC names on the way out. A domain (camelCase) name sent here is refused as the unknown field
 * it is on this surface, never taken as its SPEC twin.
 */
export class SpecNames {
  private readonly camelOf: Map<string, string>;
  private readonly snakeOf: Map<string, string>;

  constructor(snakeNames: string[]) {
    this.camelOf = new Map(snakeNames.map((name) => [name, name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())]));
    this.snakeOf = new Map([...this.camelOf].map(([snake, camel]) => [camel, snake]));
  }

  /** The client's object (a body or query) with the domain's names; call it before `from`, whose locations it needs none of. */
  in(source: InputSource, raw: unknown): unknown {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return raw;
    const twins = Object.keys(raw).filter((key) => this.snakeOf.has(key));
    if (twins.length) {
      throw new DomainError('validation_failed', 'Request validation failed', {
        issues: twins.map((key) => ({ loc: [source, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' })),
      });
    }
    return Object.fromEntries(Object.entries(raw).map(([key, value]) => [this.camelOf.get(key) ?? key, value]));
  }

  /** An issue location in SPEC names. */
  loc(loc: (string | number)[]): (string | number)[] {
    return loc.map((part) => (typeof part === 'string' ? (this.snakeOf.get(part) ?? part) : part));
  }
}

const NO_NAMES = new SpecNames([]);

/** Runs a service call, prefixing validation locations with the input's source (in SPEC names). */
export async function from<T>(source: InputSource, call: () => Promise<T>, names: SpecNames = NO_NAMES): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw error instanceof DomainError ? error.withLocs((loc) => [source, ...names.loc(loc)]) : error;
  }
}

type Handler = (ctx: RequestContext, req: Request, res: Response) => Promise<void>;
type ActorHandler = (actor: Actor, ctx: RequestContext, req: Request, res: Response) => Promise<void>;

/** An express handler over the request context; errors go to the error handler. */
export function handle(fn: Handler): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    fn(contextOf(res), req, res).catch(next);
  };
}

/** As `handle`, for signed-in callers only (401 otherwise). */
export function authed(fn: ActorHandler): RequestHandler {
  return handle((ctx, req, res) => fn(requireActor(ctx), ctx, req, res));
}
