import { z } from 'zod';
import { MAX_PROMPT_CHARS } from '../../src/video/video-request.js';

/**
 * The /v1 bodies that no zod schema of ours produces or parses whole: the inference answers are written
 * by the client formats (src/inference), and the video request is parsed field by field against its
 * model (src/video/video-request.ts). These name what SPEC.md 4.6 and 4.7 name, and leave the rest
 * open; the requests and the answers /v1 builds itself have their own schemas.
 */

const usage = z.looseObject({ prompt_tokens: z.int(), completion_tokens: z.int(), total_tokens: z.int() });

export const chatCompletionAnswer = z
  .looseObject({
    id: z.string().describe('chatcmpl-…'),
    object: z.literal('chat.completion'),
    created: z.int(),
    model: z.string(),
    choices: z.array(z.looseObject({ index: z.int(), message: z.looseObject({ role: z.literal('assistant'), content: z.string().nullable() }), finish_reason: z.string().nullable() })),
    usage,
  })
  .meta({ id: 'ChatCompletion', description: 'SPEC.md 4.6 completion object (OpenAI’s chat-completions format).' });

export const responseAnswer = z
  .looseObject({ id: z.string().describe('resp_…'), object: z.literal('response'), created_at: z.int(), model: z.string(), status: z.string(), output: z.array(z.looseObject({ type: z.string() })) })
  .meta({ id: 'Response', description: 'A Responses-format result (OpenAI’s Responses API); stored when `store` is not false.' });

export const messageAnswer = z
  .looseObject({
    id: z.string().describe('msg_…'),
    type: z.literal('message'),
    role: z.literal('assistant'),
    model: z.string(),
    content: z.array(z.looseObject({ type: z.string() })),
    stop_reason: z.string().nullable(),
    usage: z.looseObject({ input_tokens: z.int(), output_tokens: z.int() }),
  })
  .meta({ id: 'Message', description: 'A messages-format result (Anthropic’s Messages API).' });

export const imageAnswer = z
  .looseObject({ created: z.int(), data: z.array(z.looseObject({ b64_json: z.string(), revised_prompt: z.string().optional() })).length(1) })
  .meta({ id: 'ImageGeneration', description: 'One image per request, inline as base64 in data[0].b64_json.' });

export const tokenCountAnswer = z.object({ input_tokens: z.int() }).meta({ id: 'TokenCount' });

export const responseDeletedAnswer = z.object({ id: z.string(), object: z.literal('response'), deleted: z.literal(true) });

export const inputItemsAnswer = z
  .looseObject({ object: z.literal('list'), data: z.array(z.looseObject({ type: z.string() })), first_id: z.string().nullable(), last_id: z.string().nullable(), has_more: z.boolean() })
  .meta({ id: 'ResponseInputItems', description: 'The input items of a stored response, a page at a time.' });

const reference = z.object({
  type: z.enum(['image', 'video', 'audio']),
  role: z.enum(['first_frame', 'last_frame', 'reference']).optional(),
  url: z.string().describe('An http(s) URL or a data: URL'),
  duration: z.number().optional(),
});

export const videoRequest = z
  .object({
    model: z.string().describe('A video model of the catalog'),
    prompt: z.string().max(MAX_PROMPT_CHARS).optional().describe('Required for text-to-video'),
    seconds: z.union([z.int(), z.string()]).optional().describe('Within the model’s range (an integer string too)'),
    size: z.string().optional().describe('480p, 720p, 768p, 1080p, or exact dimensions such as 1280x720'),
    resolution: z.string().optional().describe('As size'),
    aspect_ratio: z.string().optional().describe('16:9, 9:16, 1:1, 3:4, 4:3 or 21:9 (the model’s subset)'),
    ratio: z.string().optional().describe('As aspect_ratio'),
    settings: z.object({ audio: z.enum(['native', 'off']).optional(), multi_shot: z.boolean().optional() }).optional(),
    references: z.array(reference).optional(),
    prompt_extend: z.boolean().optional(),
    input_reference: z.union([z.string(), z.object({ image_url: z.string().optional(), file_id: z.string().optional() })]).optional().describe('OpenAI’s image to start from'),
  })
  .meta({ id: 'VideoRequest', description: 'SPEC.md 4.7; JSON, or multipart/form-data as OpenAI’s client sends it (input_reference as a file). Each model’s ranges are in the catalog (4.8).' });

/** OpenAI's error shape (every /v1 path but the Messages format's); a 422 also carries SPEC.md's `detail`. */
export const openAiErrorAnswer = z
  .object({
    error: z.object({ message: z.string(), type: z.string(), code: z.string(), param: z.string().nullable() }),
    detail: z.array(z.object({ loc: z.array(z.union([z.string(), z.int()])), msg: z.string(), type: z.string() })).optional(),
  })
  .meta({ id: 'OpenAIError', description: 'OpenAI’s error shape; `code` is our stable reason. A 422 also carries SPEC.md’s validation detail.' });

/** Anthropic's error shape (/v1/messages, and the model lists asked with anthropic-version), with our `code`. */
export const anthropicErrorAnswer = z
  .object({
    type: z.literal('error'),
    error: z.object({ type: z.string(), message: z.string(), code: z.string() }),
    detail: z.array(z.object({ loc: z.array(z.union([z.string(), z.int()])), msg: z.string(), type: z.string() })).optional(),
  })
  .meta({ id: 'AnthropicError', description: 'Anthropic’s error shape plus our stable `code`; a 422 also carries SPEC.md’s validation detail.' });
