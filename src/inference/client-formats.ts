import type { Endpoint } from '../catalog/catalog.schemas.js';
import { anthropicMessages } from './formats/anthropic-messages/index.js';
import type { ClientFormat, ClientFormatId } from './formats/client-format.js';
import { openAiChat } from './formats/openai-chat/index.js';
import { openAiResponses } from './formats/openai-responses/index.js';

/** The client formats the gateway speaks, one line each (each format's own files are in formats/<id>/). */
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
