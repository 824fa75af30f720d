import OpenAI from 'openai';
import type { Response as SdkResponse } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CanonicalResponse } from '../../src/inference/canonical.js';
import { renderResponse, type ResponsesResponse } from '../../src/inference/formats/openai-responses/answer.js';
import { parseResponsesRequest } from '../../src/inference/formats/openai-responses/request.js';
import { startCannedServer, type CannedServer } from '../helpers/canned-server.js';
import { json, who } from '../helpers/openai-responses.js';

/** Responses answers as JSON: canonical responses rendered as the `response` object. */

// Compile-time faithfulness: our response object has every field the SDK's `Response` type requires
// (`output_text` is computed by the SDK; `error.code` is our own vocabulary, wider than OpenAI's).
type WireResponse = Omit<SdkResponse, 'output_text' | 'error'>;
const _typeCheck = (r: ResponsesResponse): WireResponse => r;
void _typeCheck;

describe('Responses rendering', () => {
  const usage = { inputTokens: 9, outputTokens: 3, cacheReadTokens: null, cacheWriteTokens: null, reasoningTokens: null };

  it('renders text as one message item, with neutral settings and required usage numbers', () => {
    expect(renderResponse({ parts: [{ type: 'text', text: 'Hi there' }], stopReason: 'end', usage }, who)).toEqual({
      id: 'resp_ours1',
      object: 'response',
      created_at: who.created,
      status: 'completed',
      error: null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: null,
      model: 'gen-5.6-luna',
      output: [{ id: 'msg_ours1_0', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hi there', annotations: [] }] }],
      parallel_tool_calls: true,
      temperature: null,
      tool_choice: 'auto',
      tools: [],
      top_p: null,
      metadata: {},
      previous_response_id: null,
      store: true,
      access_programs: null,
      text: { format: { type: 'text' } },
      usage: { input_tokens: 9, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 12 },
    });
  });

  it('renders text and two tool calls as items in part order, echoing the request settings', () => {
    const request = parseResponsesRequest(json('request-conversation.json'));
    const out = renderResponse(json<CanonicalResponse>('canonical-response-tool-calls.json'), who, request);
    expect(out.output).toEqual([
      { id: 'msg_ours1_0', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Checking both cities.', annotations: [] }] },
      { id: 'fc_ours1_1', type: 'function_call', status: 'completed', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Irkutsk"}' },
      { id: 'fc_ours1_2', type: 'function_call', status: 'completed', call_id: 'call_b', name: 'get_weather', arguments: '{"city":"Listvyanka"}' },
    ]);
    expect(out).toMatchObject({
      status: 'completed',
      instructions: request.system,
      max_output_tokens: 512,
      temperature: 0.2,
      top_p: 0.9,
      tool_choice: { type: 'function', name: 'get_weather' },
      tools: [
        { type: 'function', name: 'get_weather', description: 'Current weather for a city', parameters: request.tools[0]!.parameters, strict: true },
        { type: 'function', name: 'now', description: null, parameters: { type: 'object', properties: {} }, strict: false },
      ],
      usage: { input_tokens: 120, input_tokens_details: { cached_tokens: 100, cache_write_tokens: 0 }, output_tokens: 40, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 160 },
    });
  });

  it('marks a response cut by the token limit incomplete, and the item that was cut', () => {
    const out = renderResponse({ parts: [{ type: 'text', text: 'The lake is the deepest in' }], stopReason: 'max_tokens', usage: null }, who);
    expect(out).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [{ status: 'incomplete' }] });
    expect(out).not.toHaveProperty('usage');
  });
});

describe('the official openai client against our output', () => {
  let server: CannedServer;
  let client: OpenAI;

  beforeAll(async () => {
    server = await startCannedServer();
    client = new OpenAI({ apiKey: 'x', baseURL: `${server.url}/v1`, maxRetries: 0 });
  });
  afterAll(() => server.close());

  it('responses.create (non-streaming) parses renderResponse output, output_text included', async () => {
    const rendered = renderResponse({ parts: [{ type: 'text', text: 'Hi ' }, { type: 'text', text: 'there' }], stopReason: 'end', usage: null }, who);
    server.answer({ json: rendered });
    const response = await client.responses.create({ model: 'gen-5.6-luna', input: 'hello' });
    expect(server.received.at(-1)).toEqual({ path: '/v1/responses', body: { model: 'gen-5.6-luna', input: 'hello' } });
    expect(response.output_text).toBe('Hi there');
    expect(response.id).toBe('resp_ours1');
  });
});
