import type { ClientFormat } from '../client-format.js';
import { chatIdentity, renderChatCompletion } from './answer.js';
import { chatToCanonical, chatWithheldTools, checkChatCapabilities, parseChatRequest } from './request.js';
import type { ChatRequest } from './schema.js';
import { ChatStreamEncoder } from './stream.js';

/** OpenAI chat completions (`/v1/chat/completions`, the bridge's too). Chat responses are `chatcmpl-…`. */
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
