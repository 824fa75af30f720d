import type { CatalogModel, Endpoint } from '../../catalog/catalog.schemas.js';
import { DomainError, type ValidationIssue } from '../../shared/errors.js';
import type { Logger } from '../../shared/logging.js';
import type { TracedOperation } from '../../shared/tracing.js';
import type { AffinityRule } from '../affinity-key.js';
import type { CanonicalRequest, CanonicalResponse, CanonicalUsage, ResponseIdentity, StreamEncoder } from '../canonical.js';
import type { PreparedResponsesRequest, ResponsesStorage } from '../responses-state.js';
import type { SameFormatStream } from '../same-format.js';

/**
 * What the inference pipeline knows of a client wire format: everything it does differently for one
 * format is a field or method here, so no stage asks which format it is serving. Each format is one
 * directory under formats/ and one line in the registry (client-formats.ts).
 */
export interface ClientFormat {
  /** The registry's key for it; a provider kind names the formats it takes as they are by this id. */
  id: string;
  /** The endpoints that speak it (the registry maps each endpoint to its format from these lists). */
  endpoints: readonly Endpoint[];
  /** The GenAI operation its requests are traced as. */
  operation: TracedOperation;
  /**
   * Runs before `parse` for a format that keeps conversations for its clients (Responses' `store`):
   * expands the body's references to stored state, and says how to keep the answer.
   */
  prepare?(body: unknown, state: StoredState): Promise<PreparedResponsesRequest>;
  parse(body: unknown): ParsedRequest;
  /** 422 when the request asks for what the catalog says the model cannot do. */
  checkCapabilities(parsed: ParsedRequest, model: CatalogModel): void;
  /** A canonical answer (through the hub) as this format's JSON body. */
  render(response: CanonicalResponse, who: ResponseIdentity, parsed: ParsedRequest): object;
  /** Canonical stream events (through the hub) as this format's stream. */
  encoder(who: ResponseIdentity, parsed: ParsedRequest): StreamEncoder;
  /** The answer of an upstream that speaks this format itself, rewritten where it must be. */
  sameFormat: SameFormat;
  /** What its clients name a prompt cache by, and its prompt in reading order, for cache affinity. */
  affinity: AffinityRule;
  /** Errors in the shape its clients read. */
  errors: ErrorShape;
}

/** A request as one client format sent it: the canonical form, and the body itself for passing straight through. */
export interface ParsedRequest {
  canonical: CanonicalRequest;
  raw: Record<string, unknown>;
  /** Whether the client asked to see usage at the end of a stream (chat's `include_usage`; other formats always do). */
  streamUsage: boolean;
  /**
   * Hosted/server tools the client offered that only an upstream of its own format serves (tool
   * types, e.g. `web_search`, `web_search_20250305`), left out of `canonical.tools`. Empty when none.
   * The pipeline names them in a response header when the request is translated, or refuses them by
   * operator setting; a request passed straight through carries them in `raw` as they are.
   */
  withheldTools: string[];
}

/** What `prepare` may read: the stored conversations (when the gateway keeps them) of the caller. */
export interface StoredState {
  /** Stored Responses (`store`, `previous_response_id`, `item_reference`); without it they are refused. */
  responses?: ResponsesStorage;
  log: Logger;
  owner: { userId: string; keyId: string };
}

/**
 * When the client and the upstream speak the same wire format, the upstream's own answer goes to the
 * client, rewritten only where it must be (same-format.ts): one rewriter for JSON answers and one for
 * streams.
 */
export interface SameFormat {
  json(body: any, who: ResponseIdentity, parsed: ParsedRequest): RewrittenAnswer;
  stream(who: ResponseIdentity, parsed: ParsedRequest): SameFormatStream;
}

export interface RewrittenAnswer {
  body: object;
  /** Usage the upstream reported; null when it reported none (the pipeline then bills an estimate). */
  usage: CanonicalUsage | null;
  /** The text the answer delivers, for that estimate. */
  deliveredText: string;
}

/** Whose rate-limit headers a format's clients read: OpenAI's `x-ratelimit-*` or Anthropic's `anthropic-ratelimit-*`. */
export type RateLimitHeaderStyle = 'openai' | 'anthropic';

/** The error bodies a format's clients read: their SDKs understand errors in their own shape only. */
export interface ErrorShape {
  /** The names its clients read the key's request limits under (on every answer, refusals included). */
  rateLimitHeaders: RateLimitHeaderStyle;
  /** A refused request: our own words and stable code (the error's reason); on a 422 also SPEC.md's `detail`. */
  refused(error: DomainError): object;
  /** The gateway is not serving yet or any more (starting, restarting): `detail` and `code` say which. */
  unavailable(detail: string, code: string): object;
  /** A failure of ours that no error code describes (500). */
  internal(): object;
}

/** The capability check every format shares, locating problems at the format's own field names. */
export function checkCanonicalCapabilities(request: CanonicalRequest, model: CatalogModel, fields: { messages: string; maxTokens: string }): void {
  const issues: ValidationIssue[] = [];
  if (request.tools.length && !model.capabilities.tools) issues.push({ loc: ['tools'], msg: `The model ${model.id} does not support tools`, type: 'value_error' });
  if (request.stream && !model.capabilities.streaming) issues.push({ loc: ['stream'], msg: `The model ${model.id} does not support streaming`, type: 'value_error' });
  if (!model.capabilities.vision && request.messages.some((m) => m.parts.some((p) => p.type === 'image'))) {
    issues.push({ loc: [fields.messages], msg: `The model ${model.id} does not accept images`, type: 'value_error' });
  }
  if (request.maxOutputTokens !== null && model.maxOutputTokens !== null && request.maxOutputTokens > model.maxOutputTokens) {
    issues.push({ loc: [fields.maxTokens], msg: `Input should be less than or equal to ${model.maxOutputTokens}`, type: 'less_than_equal' });
  }
  if (issues.length) throw new DomainError('validation_failed', 'Request validation failed', { issues });
}
