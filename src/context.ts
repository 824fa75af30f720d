import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { parse as parseCookies } from 'cookie';
import DataLoader from 'dataloader';
import type { Services } from './services.js';
import type { Actor, Caller } from './shared/actor.js';
import { DomainError } from './shared/errors.js';
import type { Logger } from './shared/logging.js';

/** Per-request batching loaders: a page of rows that name a key costs one query, not one per row. */
export interface Loaders {
  /** API keys by id (their labels), for usage rows that name the key they were made with. */
  apiKeys: DataLoader<string, { id: string; label: string | null } | null>;
}

/** Sets or clears the browser session cookie; a no-op where the transport has no HTTP response (websockets). */
export interface SessionCookie {
  set(token: string, expiresAt: Date): void;
  clear(): void;
}

/**
 * Everything a transport handler needs, built once per request (or per websocket connection) and
 * shared by the REST shim, GraphQL and tRPC.
 */
export interface RequestContext {
  requestId: string;
  log: Logger;
  actor: Actor | null;
  /** How the actor was identified; cookie-authenticated writes are CSRF-checked. */
  authVia: 'cookie' | 'bearer' | 'connection' | null;
  /** Why a presented credential was not accepted as an actor, when that must be reported as such. */
  authProblem: DomainError | null;
  caller: Caller;
  services: Services;
  loaders: Loaders;
  sessionCookie: SessionCookie;
}

/** Builds a context: the transport supplies identity and caller; the per-request loaders are made here, once. */
export function createRequestContext(
  services: Services,
  parts: Pick<RequestContext, 'requestId' | 'log' | 'actor' | 'authVia' | 'authProblem' | 'caller' | 'sessionCookie'>,
): RequestContext {
  return { ...parts, services, loaders: createLoaders(services) };
}

export function requireActor(ctx: Pick<RequestContext, 'actor' | 'authProblem'>): Actor {
  if (ctx.actor) return ctx.actor;
  throw ctx.authProblem ?? new DomainError('unauthenticated', 'Not signed in');
}

function createLoaders(services: Services): Loaders {
  return {
    apiKeys: new DataLoader(async (ids) => {
      const byId = await services.keys.labels(ids);
      return ids.map((id) => byId.get(id) ?? null);
    }),
  };
}

/** `publicHttps` (PUBLIC_HTTPS): served over HTTPS, where the cookie takes the __Host- prefix. */
export function sessionCookieName(publicHttps: boolean): string {
  return publicHttps ? '__Host-baikal_session' : 'baikal_session';
}

export interface CredentialSource {
  cookieToken: string | null;
  bearerToken: string | null;
}

/** Reads the session token from the cookie or from `Authorization: Bearer`. */
export function credentialsFrom(req: IncomingMessage, publicHttps: boolean): CredentialSource {
  const authorization = req.headers.authorization;
  const bearer = authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1] ?? null;
  return { cookieToken: readCookie(req.headers.cookie, sessionCookieName(publicHttps)), bearerToken: bearer };
}

/** One cookie of a Cookie header (the first of that name, percent-decoded), by the `cookie` package express itself uses. */
export function readCookie(header: string | undefined, name: string): string | null {
  return header ? (parseCookies(header)[name] ?? null) : null;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Cookies ride along on cross-site requests; a state-changing request authenticated by cookie must
 * come from our own origin (Sec-Fetch-Site, or Origin matching Host for older browsers).
 */
export function isCrossSiteWrite(method: string | undefined, headers: IncomingHttpHeaders): boolean {
  if (SAFE_METHODS.has(method ?? 'GET')) return false;
  const site = headers['sec-fetch-site'];
  if (typeof site === 'string') return !(site === 'same-origin' || site === 'none');
  const origin = headers.origin;
  if (!origin) return false; // Not a browser request: no ambient credentials to abuse.
  try {
    return new URL(origin).host !== headers.host;
  } catch {
    return true;
  }
}

/** Resolves the actor for an HTTP request. */
export async function resolveHttpActor(
  req: IncomingMessage,
  publicHttps: boolean,
  services: Services,
): Promise<Pick<RequestContext, 'actor' | 'authVia' | 'authProblem'>> {
  const { cookieToken, bearerToken } = credentialsFrom(req, publicHttps);
  if (bearerToken) {
    const actor = await services.accounts.authenticate(bearerToken);
    return { actor, authVia: actor ? 'bearer' : null, authProblem: null };
  }
  if (cookieToken) {
    const actor = await services.accounts.authenticate(cookieToken);
    if (actor && isCrossSiteWrite(req.method, req.headers)) {
      return {
        actor: null,
        authVia: null,
        authProblem: new DomainError('forbidden', 'Cross-site request refused', { reason: 'cross_site_request' }),
      };
    }
    return { actor, authVia: actor ? 'cookie' : null, authProblem: null };
  }
  return { actor: null, authVia: null, authProblem: null };
}
