import type { CatalogModel } from '../../catalog/catalog.schemas.js';
import { DomainError, type ValidationIssue } from '../../shared/errors.js';
import type { CanonicalRequest, CanonicalResponse, CanonicalSource, ResponseIdentity, StreamEncoder } from '../canonical.js';

/** The client formats are the wire formats the hub knows (a provider kind names the one it speaks by the same id). */
export type ClientFormatId = CanonicalSource;

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

/** One client wire format, as the inference pipeline uses it. */
export interface ClientFormat {
  id: ClientFormatId;
  parse(body: unknown): ParsedRequest;
  /** 422 when the request asks for what the catalog says the model cannot do. */
  checkCapabilities(parsed: ParsedRequest, model: CatalogModel): void;
  render(response: CanonicalResponse, who: ResponseIdentity, parsed: ParsedRequest): object;
  encoder(who: ResponseIdentity, parsed: ParsedRequest): StreamEncoder;
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
