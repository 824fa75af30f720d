import type { RequestHandler, Response, Router } from 'express';
import type { z } from 'zod';
import type { SpecNames } from './handler.js';

/**
 * Who may call a route: anyone, a signed-in cabinet session (cookie or `Authorization: Bearer <session
 * token>`), either (a session widens the answer), or an API key on /v1 (Bearer; the Messages format's
 * `x-api-key` with `anthropic-version`; optional on the model lists).
 */
export type Access = 'public' | 'session' | 'optional-session' | 'key' | 'messages-key' | 'optional-key';

/** One answer of a route: a JSON body (its zod schema), another media type, or none (204). */
export interface Answer {
  description: string;
  json?: z.ZodType;
  /** Also answered as server-sent events (`stream: true`). */
  stream?: boolean;
  /** A body that is not JSON, e.g. `video/mp4`. */
  media?: string;
}

/** A route as the REST shim serves it and the interface description (GET /openapi.json) shows it: one declaration for both. */
export interface RouteDeclaration {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** The path below the router's mount, in express syntax (`/:key_id`). */
  at: string;
  summary: string;
  access: Access;
  /** The inputs, each the service's own schema under SPEC.md's names. */
  body?: SpecNames;
  query?: SpecNames;
  params?: SpecNames;
  /** Whether the body may be left out (`{}` is then what the service sees). */
  optionalBody?: boolean;
  /** Whether the body may also come as multipart/form-data. */
  multipart?: boolean;
  /** The error shape on /v1: OpenAI's, Anthropic's, or either (chosen by the `anthropic-version` header); the cabinet's when absent. */
  errors?: 'openai' | 'anthropic' | 'either';
  /**
   * Counts against the key's request limits: its answers carry the key's window after it (rest-shim/v1/limit-headers.ts)
   * and it may be a 429; a phrase says when it counts, if only sometimes. Every other route of a key shows the window
   * as it stands (counting nothing).
   */
  rateLimited?: true | string;
  answers: Record<number, Answer>;
}

/** A declared route with its router's mount, its full path in OpenAPI syntax (`/keys/{key_id}`), its group's tag and its operation id. */
export type Route<D extends RouteDeclaration = RouteDeclaration> = D & { mount: string; path: string; tag: string; operationId: string };

/**
 * The routes one router serves below `mount`, by name. Each keeps its exact declaration type: a handler
 * gets the service's own input type from `withInput(…, ROUTES.create.body, …)`, and `reply` holds its
 * answers to the declared schemas.
 */
export function routes<const T extends Record<string, RouteDeclaration>>(mount: string, tag: string, declarations: T): { [K in keyof T]: Route<T[K]> } {
  const full = (at: string) => (mount + (at === '/' ? '' : at)).replace(/:([A-Za-z0-9_]+)/g, '{$1}') || '/';
  return Object.fromEntries(Object.entries(declarations).map(([name, route]) => [name, { ...route, mount, path: full(route.at), tag, operationId: tag + name[0]!.toUpperCase() + name.slice(1) }])) as { [K in keyof T]: Route<T[K]> };
}

/** Registers a declared route's handler on its router (the method and path come from the declaration). */
export function serve(router: Router, route: RouteDeclaration, handler: RequestHandler): void {
  router[route.method](route.at, handler);
}

/** Where a table's router is mounted (the prefix its routes were declared under). */
export function mountOf(table: Record<string, Route>): string {
  const [first] = Object.values(table);
  if (!first) throw new Error('A route table without routes has no mount');
  return first.mount;
}

/** The JSON body a declared answer takes: its schema's type. */
type AnswerBody<A> = A extends { json: infer S extends z.ZodType } ? z.infer<S> : never;

/** Sends a declared JSON answer: the body must be of the type the route declares for that status (as the document shows it). */
export function reply<R extends RouteDeclaration, S extends keyof R['answers'] & number>(res: Response, _route: R, status: S, body: AnswerBody<R['answers'][S]>): void {
  res.status(status).json(body);
}
