import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CanonicalResponse } from '../../src/inference/canonical.js';
import { renderMessage } from '../../src/inference/formats/anthropic-messages/answer.js';
import { fromAnthropicResponse } from '../../src/inference/providers/anthropic/answer.js';
import { fixture, TOOL_USAGE, who } from '../helpers/anthropic-messages.js';
import { startCannedServer, type CannedServer } from '../helpers/canned-server.js';

/** Messages answers as JSON: an upstream's message read into canonical form, and a canonical response rendered for the client. */

describe('Anthropic Messages upstream answers', () => {
  it('reads a text message, keeping its thinking with the signature; zero cache counts stay zero', () => {
    const thinking = JSON.parse(fixture('message-text.json')).content[0];
    expect(fromAnthropicResponse(JSON.parse(fixture('message-text.json')))).toEqual<CanonicalResponse>({
      parts: [
        { type: 'reasoning', text: thinking.thinking, summary: [], opaque: { family: 'anthropic', signature: thinking.signature } },
        { type: 'text', text: 'Lake Baikal is the deepest lake in the world: 1,642 m at its deepest point.' },
      ],
      stopReason: 'end',
      usage: { inputTokens: 21, outputTokens: 58, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: null },
    });
  });

  it('reads tool calls and counts cache reads and writes into input', () => {
    expect(fromAnthropicResponse(JSON.parse(fixture('message-tool-use.json')))).toEqual<CanonicalResponse>({
      parts: [
        { type: 'text', text: "I'll check the weather in both cities." },
        { type: 'tool_call', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', arguments: '{"city":"Irkutsk","unit":"celsius"}' },
        { type: 'tool_call', id: 'toolu_01B7kTQmrsVc4Wf2nZb8hX3p', name: 'get_weather', arguments: '{"city":"Ulan-Ude","unit":"celsius"}' },
      ],
      stopReason: 'tool_use',
      usage: TOOL_USAGE,
    });
  });

  it('leaves cache buckets null when not reported, and reads junk as nothing', () => {
    const body = { content: [{ type: 'text', text: 'hi' }], stop_reason: 'model_context_window_exceeded', usage: { input_tokens: 3, output_tokens: 1 } };
    expect(fromAnthropicResponse(body).usage).toEqual({ inputTokens: 3, outputTokens: 1, cacheReadTokens: null, cacheWriteTokens: null, reasoningTokens: null });
    expect(fromAnthropicResponse(body).stopReason).toBe('max_tokens');
    expect(fromAnthropicResponse('nonsense')).toEqual({ parts: [], stopReason: null, usage: null });
  });
});

describe('Anthropic Messages responses and streams, read by the official SDK', () => {
  let server: CannedServer;
  let client: Anthropic;

  beforeAll(async () => {
    server = await startCannedServer();
    client = new Anthropic({ apiKey: 'x', baseURL: server.url, maxRetries: 0, timeout: 5000 });
  });
  afterAll(() => server.close());

  const params = { model: 'gen-5.6-luna', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'Weather in Irkutsk and Ulan-Ude?' }] };

  it('renders a message the SDK reads: our id, public model, tool inputs as objects, Anthropic-style usage', async () => {
    server.answer({ json: renderMessage(fromAnthropicResponse(JSON.parse(fixture('message-tool-use.json'))), who) });
    const message = await client.messages.create(params);
    expect(server.received.at(-1)!.body).toMatchObject({ model: 'gen-5.6-luna', max_tokens: 1024 });
    expect(message).toEqual({
      id: 'msg_ours123',
      type: 'message',
      role: 'assistant',
      model: 'gen-5.6-luna',
      content: [
        { type: 'text', text: "I'll check the weather in both cities." },
        { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { city: 'Irkutsk', unit: 'celsius' } },
        { type: 'tool_use', id: 'toolu_01B7kTQmrsVc4Wf2nZb8hX3p', name: 'get_weather', input: { city: 'Ulan-Ude', unit: 'celsius' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 37, output_tokens: 89, cache_read_input_tokens: 2048, cache_creation_input_tokens: 512 },
    });
  });

  it('renders unreported cache buckets as null and unparseable tool arguments as {}', () => {
    const response: CanonicalResponse = {
      parts: [{ type: 'tool_call', id: 'c', name: 'f', arguments: '{"cut off' }],
      stopReason: 'max_tokens',
      usage: { inputTokens: 9, outputTokens: 2, cacheReadTokens: null, cacheWriteTokens: null, reasoningTokens: null },
    };
    expect(renderMessage(response, who)).toMatchObject({
      content: [{ type: 'tool_use', id: 'c', name: 'f', input: {} }],
      stop_reason: 'max_tokens',
      usage: { input_tokens: 9, output_tokens: 2, cache_read_input_tokens: null, cache_creation_input_tokens: null },
    });
  });
});

describe('Anthropic Messages round trip', () => {
  it('a rendered message reads back as the response it came from', () => {
    const response = fromAnthropicResponse(JSON.parse(fixture('message-tool-use.json')));
    expect(fromAnthropicResponse(JSON.parse(JSON.stringify(renderMessage(response, who))))).toEqual(response);
  });
});
