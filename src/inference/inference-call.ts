import type { Endpoint } from '../catalog/catalog.schemas.js';
import type { KeyPrincipal } from '../keys/keys.service.js';
import type { Cancellation } from '../shared/cancellation.js';
import type { RequestTrace } from '../shared/tracing.js';
import type { RequestWindow } from './limits.js';

/** One /v1 request as the pipeline sees it: who calls, on which endpoint, under which request id. */
export interface InferenceCall {
  principal: KeyPrincipal;
  /** The request id shown to the client (`x-request-id`); the usage event's id is ours. */
  requestId: string;
  endpoint: Endpoint;
  clientSurface: string;
  /** The client's `anthropic-beta` header: forwarded with a Messages request to an `anthropic` upstream. */
  anthropicBeta?: string;
  /** The request's trace (spans for admission, each upstream attempt, settlement); set as the pipeline starts. */
  trace?: RequestTrace;
}

/** Where a response goes. Transports implement it; the pipeline never sees `req`/`res`. */
export interface ResponseSink {
  /** Cancelled when the client goes away. */
  readonly signal: Cancellation;
  sendJson(body: object): void;
  /** `performance.now()` when the first byte went out (the JSON body or the first stream event), for metrics. */
  readonly firstByteAt?: number;
  /** Sets a response header; only before the answer starts. */
  setHeader(name: string, value: string): void;
  /** The key's rate window after this request, written as the headers its clients read; only before the answer starts. */
  limits(window: RequestWindow): void;
  /** Starts a 200 server-sent-events response. */
  startStream(): void;
  /** Nothing when the client can take more now; otherwise a promise that resolves when it can (backpressure) or is gone. */
  write(text: string): Promise<void> | void;
  /** Ends the response, with `last` as its final bytes. */
  end(last?: string): void;
}

/** The response header naming hosted tools a route could not serve and that were withheld from the model. */
export const WITHHELD_TOOLS_HEADER = 'x-withheld-tools';
