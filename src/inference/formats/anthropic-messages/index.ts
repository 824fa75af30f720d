import { checkCanonicalCapabilities, type ClientFormat } from '../client-format.js';
import { renderMessage } from './answer.js';
import { parseMessages } from './request.js';
import { MessagesStreamEncoder } from './stream.js';

/** Anthropic Messages (`/v1/messages`). */
export const anthropicMessages: ClientFormat = {
  id: 'anthropic-messages',
  // The body as sent is what passes straight through to an Anthropic upstream (validated here first).
  parse: (body) => ({ ...parseMessages(body), raw: body as Record<string, unknown>, streamUsage: true }),
  checkCapabilities: (parsed, model) => checkCanonicalCapabilities(parsed.canonical, model, { messages: 'messages', maxTokens: 'max_tokens' }),
  // Thinking blocks are shown when the request turned thinking on.
  render: (response, who, parsed) => renderMessage(response, who, parsed.canonical),
  encoder: (who, parsed) => new MessagesStreamEncoder(who, parsed.canonical),
};
