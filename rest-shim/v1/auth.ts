import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestLimiter } from '../../src/inference/limits.js';
import type { KeyPrincipal, KeysService } from '../../src/keys/keys.service.js';
import { DomainError } from '../../src/shared/errors.js';
import { MESSAGES_API_VERSION } from '../../src/inference/formats/anthropic-messages/request.js';
import { writePeekedWindow } from './limit-headers.js';

/** One request header as a string (the first, if sent several times). */
export function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The key of a chat-completions-style request: `Authorization: Bearer` only (SPEC.md section 5).
 * Whatever follows the scheme is the presented key, spaces included: a malformed key is refused as
 * an invalid one (the same 401 as an unknown key), not mistaken for a missing one.
 */
export function bearerKeyOf(req: IncomingMessage): string | null {
  return headerOf(req, 'authorization')?.match(/^Bearer\s+(.*\S)\s*$/i)?.[1] ?? null;
}

/**
 * Authenticates an API key. Every failure is one of three 401s with our own wording: no key, a key in
 * the wrong header, or a key that is malformed, unknown or revoked (indistinguishable on purpose).
 */
export async function requireKey(req: IncomingMessage, keys: KeysService): Promise<KeyPrincipal> {
  const raw = bearerKeyOf(req);
  if (!raw) {
    if (headerOf(req, 'x-api-key')) {
      throw new DomainError('unauthenticated', 'Send the API key as "Authorization: Bearer <key>" on this endpoint', { reason: 'wrong_auth_header' });
    }
    throw new DomainError('unauthenticated', 'Missing API key: send "Authorization: Bearer <key>"', { reason: 'missing_api_key' });
  }
  const principal = await keys.authenticate(raw);
  if (!principal) throw new DomainError('unauthenticated', 'Invalid API key', { reason: 'invalid_api_key' });
  keys.markUsed(principal.keyId);
  return principal;
}

/**
 * `requireKey` for a /v1 route that counts nothing against the key's limits (OpenAI-style: /v1/me, video polls and
 * content, stored responses): its answer, errors included, carries the key's window as it stands (limit-headers.ts).
 */
export async function requireKeyShowingWindow(req: IncomingMessage, res: ServerResponse, services: { keys: KeysService; limiter: RequestLimiter }): Promise<KeyPrincipal> {
  const principal = await requireKey(req, services.keys);
  await writePeekedWindow(res, 'openai', services.limiter, principal);
  return principal;
}

/**
 * An optional key (GET /v1/models): absent is fine, but a presented key must be valid. Anthropic-style
 * callers may send it as `x-api-key` together with `anthropic-version`; `x-api-key` alone is the wrong header.
 */
export async function optionalKey(req: IncomingMessage, keys: KeysService): Promise<KeyPrincipal | null> {
  const headerKey = headerOf(req, 'x-api-key');
  if (!bearerKeyOf(req) && headerKey && headerOf(req, 'anthropic-version')) {
    const principal = await keys.authenticate(headerKey);
    if (!principal) throw new DomainError('unauthenticated', 'Invalid API key', { reason: 'invalid_api_key' });
    return principal;
  }
  return bearerKeyOf(req) || headerKey ? requireKey(req, keys) : null;
}

/**
 * The key of a Messages-format request: `x-api-key` plus `anthropic-version: 2023-06-01` (SPEC.md
 * section 5). A key in the Bearer header is the wrong header (401); a missing version is a 400.
 */
export async function requireMessagesKey(req: IncomingMessage, keys: KeysService): Promise<KeyPrincipal> {
  const raw = headerOf(req, 'x-api-key')?.trim();
  if (!raw) {
    if (bearerKeyOf(req)) throw new DomainError('unauthenticated', 'Send the API key as "x-api-key: <key>" on this endpoint', { reason: 'wrong_auth_header' });
    throw new DomainError('unauthenticated', 'Missing API key: send "x-api-key: <key>"', { reason: 'missing_api_key' });
  }
  const principal = await keys.authenticate(raw);
  if (!principal) throw new DomainError('unauthenticated', 'Invalid API key', { reason: 'invalid_api_key' });
  const version = headerOf(req, 'anthropic-version');
  if (version !== MESSAGES_API_VERSION) {
    throw new DomainError('bad_request', version ? `Unsupported anthropic-version ${JSON.stringify(version)}; use ${MESSAGES_API_VERSION}` : `The header "anthropic-version: ${MESSAGES_API_VERSION}" is required`, {
      reason: 'invalid_version_header',
    });
  }
  keys.markUsed(principal.keyId);
  return principal;
}
