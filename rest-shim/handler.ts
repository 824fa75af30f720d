import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { requireActor, type RequestContext } from '../src/context.js';
import type { Actor } from '../src/shared/actor.js';
import { DomainError } from '../src/shared/errors.js';
import { z } from 'zod';

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
 *
 * The names come from the service's own input schema (its camelCase fields), so the REST names, the
 * interface description and the service's validation cannot disagree.
 */
export class SpecNames<S extends z.ZodObject = z.ZodObject> {
  private readonly camelOf: Map<string, string>;
  private readonly snakeOf: Map<string, string>;

  constructor(readonly schema: S) {
    const multiWord = Object.keys(schema.shape).filter((name) => /[A-Z]/.test(name));
    this.snakeOf = new Map(multiWord.map((camel) => [camel, snakeCase(camel)]));
    this.camelOf = new Map([...this.snakeOf].map(([camel, snake]) => [snake, camel]));
  }

  /**
   * The client's object (a body, query or path parameters) with the domain's names, as the service's
   * input type; its own issues are located already (`withInput` calls it outside `from`). Nothing is checked here
   * beyond the twins: the service validates (exactly once, with SPEC.md's 422 shape).
   */
  in(source: InputSource, raw: unknown): z.input<S> {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return unchecked<S>(raw);
    const twins = Object.keys(raw).filter((key) => this.snakeOf.has(key));
    if (twins.length) {
      throw new DomainError('validation_failed', 'Request validation failed', {
        issues: twins.map((key) => ({ loc: [source, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' })),
      });
    }
    return unchecked<S>(Object.fromEntries(Object.entries(raw).map(([key, value]) => [this.camelOf.get(key) ?? key, value])));
  }

  /** An issue location in SPEC names. */
  loc(loc: (string | number)[]): (string | number)[] {
    return loc.map((part) => (typeof part === 'string' ? (this.snakeOf.get(part) ?? part) : part));
  }

  /** The service's schema as a client of this surface writes it: the same fields under SPEC names (for the interface description). */
  spec(): z.ZodObject {
    if (this.snakeOf.size === 0) return this.schema;
    const renamed = z.object(Object.fromEntries(Object.entries(this.schema.shape).map(([name, field]) => [this.snakeOf.get(name) ?? name, field])));
    const catchall = this.schema._zod.def.catchall;
    return catchall ? renamed.catchall(catchall) : renamed;
  }
}

/** `providerFamily` -> `provider_family`; a name that would not map back exactly is refused at startup. */
function snakeCase(camel: string): string {
  const snake = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  if (snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()) !== camel) throw new Error(`No exact SPEC name for the field ${camel}`);
  return snake;
}

/**
 * The one place a client's raw input takes the service's input type: the service parses it with that
 * schema first thing, so the type is what the service asks for, not a claim that it was checked.
 */
function unchecked<S extends z.ZodType>(raw: unknown): z.input<S> {
  return raw as z.input<S>;
}

/** Runs a service call, prefixing validation locations with the input's source (in SPEC names). */
async function from<T>(source: InputSource, call: () => Promise<T>, names: SpecNames): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw error instanceof DomainError ? error.withLocs((loc) => [source, ...names.loc(loc)]) : error;
  }
}

/**
 * Hands a client's input to a service call under the service's names, and reports the service's issues
 * located under `source` in SPEC names: the REST side of every input, typed as the service's own.
 */
export async function withInput<S extends z.ZodObject, T>(source: InputSource, names: SpecNames<S>, raw: unknown, call: (input: z.input<S>) => Promise<T>): Promise<T> {
  const input = names.in(source, raw);
  return from(source, () => call(input), names);
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
