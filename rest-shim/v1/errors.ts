import type { ServerResponse } from 'node:http';
import { httpStatusOf } from '../errors.js';
import type { DomainError } from '../../src/shared/errors.js';
import { CLIENT_FORMATS } from '../../src/inference/client-formats.js';
import type { ErrorShape } from '../../src/inference/formats/client-format.js';
import { OPENAI_ERRORS } from '../../src/inference/formats/openai-errors.js';
import { writeRefusal } from './limit-headers.js';

/** Writes a JSON answer on a plain node response (express's `res.json` is not needed on /v1). */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(body));
}

/**
 * A refused request in the shape its clients read, with its status, and when it has one its wait
 * (`retry-after`, `retry-after-ms`), the limit that refused it and the key's window (limit-headers.ts).
 */
export function sendError(res: ServerResponse, shape: ErrorShape, error: DomainError): void {
  writeRefusal(res, shape.rateLimitHeaders, error);
  sendJson(res, httpStatusOf(error.code), shape.refused(error));
}

/** A refused request in OpenAI's shape (the paths that speak no client format of their own). */
export function sendOpenAiError(res: ServerResponse, error: DomainError): void {
  sendError(res, OPENAI_ERRORS, error);
}

/**
 * The error shape of a /v1 path: that of the client format whose endpoint it is or lies under (every
 * error of Anthropic's surface, 404s of its sub-paths included, is in its own shape), else OpenAI's.
 */
export function errorShapeOfPath(path: string): ErrorShape {
  for (const format of Object.values(CLIENT_FORMATS)) {
    if (format.endpoints.some((endpoint) => path === endpoint || path.startsWith(`${endpoint}/`))) return format.errors;
  }
  return OPENAI_ERRORS;
}
