import type { AffinityRule } from '../../affinity-key.js';
import { checkCanonicalCapabilities, type ClientFormat } from '../client-format.js';
import { renderMessage } from './answer.js';
import { MESSAGES_ERRORS } from './errors.js';
import { parseMessages } from './request.js';
import { messagesSameFormat } from './same-format.js';
import { MessagesStreamEncoder } from './stream.js';

/** Messages name their cache by `metadata.user_id` (Claude Code sends one per session). */
const messagesAffinity: AffinityRule = {
  keyScope: 'user',
  namedKey: (body) => (body.metadata !== null && typeof body.metadata === 'object' ? (body.metadata as Record<string, unknown>).user_id : undefined),
  writePrompt(body, out) {
    out.system(body.system);
    out.tools(body.tools);
    const messages = Array.isArray(body.messages) ? body.messages : [];
    for (let i = 0; i < messages.length && !out.full; i++) out.message(messages[i]);
  },
};

/** Anthropic Messages. */
export const anthropicMessages: ClientFormat = {
  id: 'anthropic-messages',
  endpoints: ['/v1/messages'],
  operation: 'messages',
  // The body as sent is what passes straight through to an Anthropic upstream (validated here first).
  parse: (body) => ({ ...parseMessages(body), raw: body as Record<string, unknown>, streamUsage: true }),
  checkCapabilities: (parsed, model) => checkCanonicalCapabilities(parsed.canonical, model, { messages: 'messages', maxTokens: 'max_tokens' }),
  // Thinking blocks are shown when the request turned thinking on.
  render: (response, who, parsed) => renderMessage(response, who, parsed.canonical),
  encoder: (who, parsed) => new MessagesStreamEncoder(who, parsed.canonical),
  sameFormat: messagesSameFormat,
  affinity: messagesAffinity,
  errors: MESSAGES_ERRORS,
};
