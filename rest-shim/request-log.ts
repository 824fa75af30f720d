import type { IncomingMessage, ServerResponse } from 'node:http';
import { loopDelay } from '../src/metrics.js';
import { requestIdFrom } from '../src/shared/ids.js';
import type { Logger } from '../src/shared/logging.js';

const QUIET_PATHS = new Set(['/live', '/health', '/ready']);

/**
 * Gives a request its id (the caller's `x-request-id` when safe, else a new one), echoes it, and logs
 * one line when the response closes; the event-loop delay is sampled while it is open. Shared by express
 * and the plain /v1 inference transport.
 */
export function logRequest(log: Logger, req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers['x-request-id'];
  const requestId = requestIdFrom(typeof given === 'string' ? given : undefined);
  const started = performance.now();
  res.setHeader('x-request-id', requestId);
  // Anthropic's SDK reads its request id from `request-id`; both carry the same value on every response.
  res.setHeader('request-id', requestId);
  loopDelay.started();
  res.on('close', () => {
    loopDelay.ended();
    // The path only: query strings may carry link tokens.
    const path = ((req as { originalUrl?: string }).originalUrl ?? req.url ?? '').split('?')[0]!;
    log[QUIET_PATHS.has(path) ? 'debug' : 'info'](
      { requestId, method: req.method, path, status: res.statusCode, ms: Math.round((performance.now() - started) * 10) / 10, aborted: !res.writableFinished },
      'request',
    );
  });
  return requestId;
}
