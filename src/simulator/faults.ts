import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendAnthropicError } from './anthropic-messages.js';
import { readJson, sendStatusError, type RouteContext } from './common.js';

/**
 * A fault of the whole simulator, set from outside the requests (`Simulator.setFault`) for reliability
 * tests: unlike the `[sim:...]` directives it needs no cooperation from the prompt, so it also reaches
 * status probes, retries and requests a gateway makes on its own.
 *   hang    accept the connection and read the request, never answer
 *   status  every request answers that HTTP error in its provider's shape, with `retry-after` when given
 *   reset   read the request, then reset the connection (the caller sees ECONNRESET before any header)
 *   refuse  stop listening: new connections are refused, open ones are closed (see startSimulator)
 */
export type SimulatorFault =
  | { mode: 'hang' }
  | { mode: 'status'; status: number; retryAfterSeconds?: number }
  | { mode: 'reset' }
  | { mode: 'refuse' };

/**
 * Answers a request as `fault` says. The request is read first (as the real failures happen after the upload)
 * and recorded with its `fault`, so a test can count the attempts that met the fault and see each one's
 * credential; status probes are kept apart as usual (the caller has recorded them).
 * Hung responses are added to `hung` until they close, so clearing the fault can end them.
 */
export async function answerFault(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  probe: boolean,
  fault: Exclude<SimulatorFault, { mode: 'refuse' }>,
  ctx: RouteContext,
  hung: Set<ServerResponse>,
): Promise<void> {
  let body: unknown;
  try {
    body = await readJson(req);
  } catch {
    body = undefined; // a GET, or a body that is not JSON: still an attempt
  }
  if (!probe) ctx.record(req, res, path, body).fault = fault.mode;
  if (fault.mode === 'hang') {
    hung.add(res);
    res.on('close', () => hung.delete(res));
    return;
  }
  if (fault.mode === 'reset') {
    res.socket?.resetAndDestroy();
    return;
  }
  const message = `Simulated ${fault.status} from upstream ${ctx.options.name ?? ''} ${ctx.detail}`;
  // The Anthropic shape where Anthropic answers: its routes, and the model list asked Anthropic's way.
  const anthropic = path.startsWith('/v1/messages') || (probe && req.headers['x-api-key'] !== undefined);
  const retryAfter = fault.retryAfterSeconds ?? null;
  if (anthropic) sendAnthropicError(res, fault.status, message, retryAfter);
  else sendStatusError(res, fault.status, message, retryAfter);
}
