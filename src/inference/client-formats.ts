import type { CatalogModel, Endpoint } from '../catalog/catalog.schemas.js';
import { DomainError, type ValidationIssue } from '../shared/errors.js';
import type { CanonicalRequest, CanonicalResponse, CanonicalSource, ResponseIdentity, StreamEncoder } from './canonical.js';
import { MessagesStreamEncoder, parseMessages, renderMessage } from './translate/anthropic-messages.js';
import { parseResponses, renderResponse, ResponsesStreamEncoder, type ResponsesEcho } from './translate/openai-responses.js';
import { chatIdentity, chatToCanonical, ChatStreamEncoder, chatWithheldTools, checkChatCapabilities, parseChatRequest, renderChatCompletion, type ChatRequest } from './translate/openai-chat.js';

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

function responsesEcho(parsed: ParsedRequest): ResponsesEcho {
  const { tools, previous_response_id: previous, store } = parsed.raw;
  return { ...(Array.isArray(tools) ? { tools } : {}), previousResponseId: typeof previous === 'string' ? previous : null, store: store !== false };
}

/** Chat responses are `chatcmpl-…`. */

export const openAiChat: ClientFormat = {
  id: 'openai-chat',
  parse(body) {
    const request = parseChatRequest(body);
    return { canonical: chatToCanonical(request), raw: request, streamUsage: request.stream_options?.include_usage === true, withheldTools: chatWithheldTools(request) };
  },
  // `raw` is the request parse() validated.
  checkCapabilities: (parsed, model) => checkChatCapabilities(parsed.raw as ChatRequest, model),
  render: (response, who) => renderChatCompletion(response, chatIdentity(who)),
  encoder: (who, parsed) => new ChatStreamEncoder(chatIdentity(who), parsed.streamUsage),
};

export const anthropicMessages: ClientFormat = {
  id: 'anthropic-messages',
  // The body as sent is what passes straight through to an Anthropic upstream (validated here first).
  parse: (body) => ({ ...parseMessages(body), raw: body as Record<string, unknown>, streamUsage: true }),
  checkCapabilities: (parsed, model) => checkCanonicalCapabilities(parsed.canonical, model, { messages: 'messages', maxTokens: 'max_tokens' }),
  // Thinking blocks are shown when the request turned thinking on.
  render: (response, who, parsed) => renderMessage(response, who, parsed.canonical),
  encoder: (who, parsed) => new MessagesStreamEncoder(who, parsed.canonical),
};

export const openAiResponses: ClientFormat = {
  id: 'openai-responses',
  parse: (body) => ({ ...parseResponses(body), raw: body as Record<string, unknown>, streamUsage: true }),
  checkCapabilities: (parsed, model) => checkCanonicalCapabilities(parsed.canonical, model, { messages: 'input', maxTokens: 'max_output_tokens' }),
  // Responses echo the request's settings (instructions, the client's own tools, sampling).
  render: (response, who, parsed) => renderResponse(response, who, parsed.canonical, responsesEcho(parsed)),
  encoder: (who, parsed) => new ResponsesStreamEncoder(who, parsed.canonical, responsesEcho(parsed)),
};

export const CLIENT_FORMATS: Record<ClientFormatId, ClientFormat> = {
  'openai-chat': openAiChat,
  'openai-responses': openAiResponses,
  'anthropic-messages': anthropicMessages,
};

/** Which format each endpoint speaks. */
export const FORMAT_OF_ENDPOINT: Partial<Record<Endpoint, ClientFormatId>> = {
  '/v1/chat/completions': 'openai-chat',
  '/v1/bridge/chat/completions': 'openai-chat',
  '/v1/responses': 'openai-responses',
  '/v1/bridge/responses': 'openai-responses',
  '/v1/messages': 'anthropic-messages',
};
