import type { AffinityRule } from '../../affinity-key.js';
import type { ClientFormat } from '../client-format.js';
import { OPENAI_ERRORS } from '../openai-errors.js';
import { chatIdentity, renderChatCompletion } from './answer.js';
import { chatToCanonical, chatWithheldTools, checkChatCapabilities, parseChatRequest } from './request.js';
import { chatSameFormat } from './same-format.js';
import type { ChatRequest } from './schema.js';
import { ChatStreamEncoder } from './stream.js';

const isSystemMessage = (message: unknown): boolean =>
  message !== null && typeof message === 'object' && !Array.isArray(message) && ((message as { role?: unknown }).role === 'system' || (message as { role?: unknown }).role === 'developer');

/** Chat names its cache `prompt_cache_key` (OpenAI routes by it) and carries its system prompt as the leading system/developer messages. */
const chatAffinity: AffinityRule = {
  keyScope: 'cache',
  namedKey: (body) => body.prompt_cache_key,
  writePrompt(body, out) {
    const messages = Array.isArray(body.messages) ? body.messages : [];
    let leading = 0;
    while (leading < messages.length && !out.full && isSystemMessage(messages[leading])) out.message(messages[leading++]);
    out.tools(body.tools);
    for (let i = leading; i < messages.length && !out.full; i++) out.message(messages[i]);
  },
};

/** OpenAI chat completions. Chat responses are `chatcmpl-…`. */
export const openAiChat: ClientFormat = {
  id: 'openai-chat',
  endpoints: ['/v1/chat/completions', '/v1/bridge/chat/completions'],
  operation: 'chat',
  parse(body) {
    const request = parseChatRequest(body);
    return { canonical: chatToCanonical(request), raw: request, streamUsage: request.stream_options?.include_usage === true, withheldTools: chatWithheldTools(request) };
  },
  // `raw` is the request parse() validated.
  checkCapabilities: (parsed, model) => checkChatCapabilities(parsed.raw as ChatRequest, model),
  render: (response, who) => renderChatCompletion(response, chatIdentity(who)),
  encoder: (who, parsed) => new ChatStreamEncoder(chatIdentity(who), parsed.streamUsage),
  sameFormat: chatSameFormat,
  affinity: chatAffinity,
  errors: OPENAI_ERRORS,
};
