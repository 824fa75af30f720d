import type { Endpoint } from '../catalog/catalog.schemas.js';
import { anthropicMessages } from './formats/anthropic-messages/index.js';
import type { ClientFormat } from './formats/client-format.js';
import { openAiChat } from './formats/openai-chat/index.js';
import { openAiResponses } from './formats/openai-responses/index.js';

/**
 * The client formats the gateway speaks: one line each, keyed by the format's id. Everything else of a
 * format is in its own directory (formats/<id>/; docs/architecture.md, "Adding a client format").
 */
export const CLIENT_FORMATS = {
  'openai-chat': openAiChat,
  'openai-responses': openAiResponses,
  'anthropic-messages': anthropicMessages,
} satisfies Record<string, ClientFormat>;

export type ClientFormatId = keyof typeof CLIENT_FORMATS;

/** Which format each endpoint speaks, from each format's own list. */
export const FORMAT_OF_ENDPOINT: Partial<Record<Endpoint, ClientFormat>> = Object.fromEntries(
  Object.values(CLIENT_FORMATS).flatMap((format) => format.endpoints.map((endpoint) => [endpoint, format])),
);
