import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { requireActor, type RequestContext } from '../src/context.js';
import type { Actor } from '../src/shared/actor.js';
import { DomainError } from '../src/shared/errors.js';

export function contextOf(res: Response): RequestContext {
  return res.locals.ctx as RequestContext;
}

/** Where an input came from, so validation issues carry SPEC.md's `loc` prefix. */
export type InputSource = 'body' | 'query' | 'path';

/** Runs a service call, prefixing validation locations with the input's source. */
export async function from<T>(source: InputSource, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw error instanceof DomainError ? error.withLocPrefix([source]) : error;
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
