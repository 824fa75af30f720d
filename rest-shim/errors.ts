import type { ErrorRequestHandler, Response } from 'express';
import { DomainError, httpStatusOf } from '../src/shared/errors.js';
import type { Logger } from '../src/shared/logging.js';

/** The HTTP status of each code (the /v1 surface, the cabinet's REST and the traces read the same table). */
export { httpStatusOf };

/** Cabinet error bodies: SPEC.md's validation shape for 422, `{detail, code}` for everything else. */
export function sendDomainError(res: Response, error: DomainError): void {
  const status = httpStatusOf(error.code);
  if (error.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(error.retryAfterSeconds));
  if (error.code === 'validation_failed') {
    res.status(status).json({ detail: error.issues });
    return;
  }
  res.status(status).json({ detail: error.message, code: error.reason });
}

interface BodyParserError extends Error {
  type?: string;
  status?: number;
  body?: string;
}

/** The last handler: domain errors by code, body-parser errors as 422/413, anything else a logged 500 with no details. */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (error instanceof DomainError) {
      sendDomainError(res, error);
      return;
    }
    const parserError = error as BodyParserError;
    if (parserError?.type === 'entity.parse.failed') {
      res.status(422).json({ detail: [{ loc: ['body'], msg: `JSON decode error: ${parserError.message}`, type: 'json_invalid' }] });
      return;
    }
    if (parserError?.type === 'entity.too.large') {
      res.status(413).json({ detail: 'Request body is too large', code: 'payload_too_large' });
      return;
    }
    if (typeof parserError?.status === 'number' && parserError.status >= 400 && parserError.status < 500) {
      res.status(parserError.status).json({ detail: 'Malformed request', code: 'bad_request' });
      return;
    }
    log.error({ err: error, path: req.path }, 'unhandled error');
    res.status(500).json({ detail: 'Internal server error', code: 'internal_error' });
  };
}
