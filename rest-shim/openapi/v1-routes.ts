import { z } from 'zod';
import { countTokensBody } from '../../src/inference/count-tokens.js';
import { messagesRequestSchema } from '../../src/inference/formats/anthropic-messages/request.js';
import { chatRequestSchema } from '../../src/inference/formats/openai-chat/schema.js';
import { imageRequestSchema } from '../../src/inference/openai-images.js';
import { responsesRequestSchema } from '../../src/inference/formats/openai-responses/schema.js';
import { SpecNames } from '../handler.js';
import { routes, type Answer } from '../route.js';
import { MP4_ANSWERS } from '../videos.router.js';
import { keyStatusAnswer, videoCreatedAnswer, videoPollAnswer } from '../v1/answers.js';
import { anthropicModelAnswer, anthropicModelListAnswer, openAiModelAnswer, openAiModelListAnswer } from '../v1/models.js';
import { inputItemsQuery } from '../v1/responses.router.js';
import { chatCompletionAnswer, imageAnswer, inputItemsAnswer, messageAnswer, responseAnswer, responseDeletedAnswer, tokenCountAnswer, videoRequest } from './v1-wire.js';

/**
 * The /v1 surface as the interface description shows it. Its requests are the schemas the formats
 * validate with; /v1 is served by rest-shim/v1 (and the inference hot path, inference-endpoints.ts),
 * whose routes these describe (test/integration/openapi.test.ts calls them through a generated client).
 */

// Named (a copy with an id: the formats' schemas stay as they are) so /v1 and the bridge share one component each.
const chatBody = new SpecNames(chatRequestSchema.meta({ id: 'ChatCompletionRequest' }));
const responsesBody = new SpecNames(responsesRequestSchema.meta({ id: 'ResponseRequest' }));
const modelPath = new SpecNames(z.object({ model_id: z.string() }));
const responsePath = new SpecNames(z.object({ id: z.string().describe('resp_…') }));
const taskPath = new SpecNames(z.object({ task_id: z.string() }));

const modelList: Answer = { description: 'OpenAI’s list, or Anthropic’s (paginated) when anthropic-version is sent', json: z.union([openAiModelListAnswer, anthropicModelListAnswer]) };
const oneModel: Answer = { description: 'The model, in Anthropic’s shape when anthropic-version is sent', json: z.union([openAiModelAnswer, anthropicModelAnswer]) };
/** Anthropic's list paging (limit 1-1000, default 20; after_id, before_id), read only with anthropic-version. */
const anthropicPaging = new SpecNames(z.object({ limit: z.string().optional(), after_id: z.string().optional(), before_id: z.string().optional() }));

export const V1_ROUTES = routes('/v1', 'inference', {
  models: { method: 'get', at: '/models', summary: 'Public models with groups and prices (a key adds its private scopes)', access: 'optional-key', errors: 'either', query: anthropicPaging, answers: { 200: modelList } },
  model: { method: 'get', at: '/models/:model_id', summary: 'One model', access: 'optional-key', errors: 'either', params: modelPath, answers: { 200: oneModel } },
  me: { method: 'get', at: '/me', summary: 'The key: its scope, this month’s spend and whether it can spend now', access: 'key', errors: 'openai', answers: { 200: { description: 'Key status', json: keyStatusAnswer } } },
  chat: {
    method: 'post',
    at: '/chat/completions',
    summary: 'Chat completions (OpenAI’s format); `stream: true` answers with server-sent events',
    access: 'key',
    errors: 'openai',
    rateLimited: true,
    body: chatBody,
    answers: { 200: { description: 'Completion object', json: chatCompletionAnswer, stream: true } },
  },
  responses: {
    method: 'post',
    at: '/responses',
    summary: 'Responses (OpenAI’s Responses format); `stream: true` answers with server-sent events',
    access: 'key',
    errors: 'openai',
    rateLimited: true,
    body: responsesBody,
    answers: { 200: { description: 'Response', json: responseAnswer, stream: true } },
  },
  response: { method: 'get', at: '/responses/:id', summary: 'A stored response', access: 'key', errors: 'openai', params: responsePath, answers: { 200: { description: 'Response', json: responseAnswer } } },
  deleteResponse: { method: 'delete', at: '/responses/:id', summary: 'Delete a stored response', access: 'key', errors: 'openai', params: responsePath, answers: { 200: { description: 'Deleted', json: responseDeletedAnswer } } },
  responseInputItems: {
    method: 'get',
    at: '/responses/:id/input_items',
    summary: 'The input items of a stored response',
    access: 'key',
    errors: 'openai',
    params: responsePath,
    query: new SpecNames(inputItemsQuery),
    answers: { 200: { description: 'A page of input items', json: inputItemsAnswer } },
  },
  messages: {
    method: 'post',
    at: '/messages',
    summary: 'Messages (Anthropic’s format); `stream: true` answers with server-sent events',
    access: 'messages-key',
    errors: 'anthropic',
    rateLimited: true,
    body: new SpecNames(messagesRequestSchema.meta({ id: 'MessageRequest' })),
    answers: { 200: { description: 'Message', json: messageAnswer, stream: true } },
  },
  countTokens: {
    method: 'post',
    at: '/messages/count_tokens',
    summary: 'Count a Messages request’s input tokens (never billed)',
    access: 'messages-key',
    errors: 'anthropic',
    rateLimited: 'forwarded to an upstream',
    body: new SpecNames(countTokensBody),
    answers: { 200: { description: 'Input tokens', json: tokenCountAnswer } },
  },
  images: {
    method: 'post',
    at: '/images/generations',
    summary: 'Generate one image',
    access: 'key',
    errors: 'openai',
    rateLimited: true,
    body: new SpecNames(imageRequestSchema),
    answers: { 200: { description: 'The image', json: imageAnswer } },
  },
  videos: {
    method: 'post',
    at: '/videos',
    summary: 'Submit a video task (the cost is held until it completes or fails)',
    access: 'key',
    errors: 'openai',
    body: new SpecNames(videoRequest),
    multipart: true,
    answers: { 201: { description: 'Queued', json: videoCreatedAnswer } },
  },
  video: { method: 'get', at: '/videos/:task_id', summary: 'Poll a video task', access: 'key', errors: 'openai', params: taskPath, answers: { 200: { description: 'Video task', json: videoPollAnswer } } },
  videoContent: { method: 'get', at: '/videos/:task_id/content', summary: 'The finished MP4 (HTTP Range)', access: 'key', errors: 'openai', params: taskPath, answers: MP4_ANSWERS },
});

/** The editor-integration bridge (SPEC.md 4.6 rule 1): its own models only, with a key of the family-b scope. */
export const BRIDGE_ROUTES = routes('/v1/bridge', 'bridge', {
  models: { method: 'get', at: '/models', summary: 'The bridge’s models', access: 'optional-key', errors: 'either', query: anthropicPaging, answers: { 200: modelList } },
  model: { method: 'get', at: '/models/:model_id', summary: 'One bridge model', access: 'optional-key', errors: 'either', params: modelPath, answers: { 200: oneModel } },
  chat: {
    method: 'post',
    at: '/chat/completions',
    summary: 'Chat completions on the bridge',
    access: 'key',
    errors: 'openai',
    rateLimited: true,
    body: chatBody,
    answers: { 200: { description: 'Completion object', json: chatCompletionAnswer, stream: true } },
  },
  responses: {
    method: 'post',
    at: '/responses',
    summary: 'Responses on the bridge',
    access: 'key',
    errors: 'openai',
    rateLimited: true,
    body: responsesBody,
    answers: { 200: { description: 'Response', json: responseAnswer, stream: true } },
  },
});
