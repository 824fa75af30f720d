import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billedInCabinet, everyCallBilled, startDemoGateway, startRecordingGateway, type ClientsGateway } from '../../helpers/clients-gateway.js';
import { upstreamCall } from '../../helpers/inference.js';

/**
 * The official `@anthropic-ai/sdk` (1.12.0) against the built gateway in demo mode (family-b key, the
 * simulator's Anthropic side answers), plus one recording-upstream test for what must reach the upstream
 * unchanged (thinking blocks and their signatures in a tool loop).
 *
 * SDK 1.12 sends `apiKey` as `Authorization: Bearer` and `anthropic-version: 2026-10-21`; SPEC.md asks for
 * `x-api-key` and `2023-06-01`, so the working setup sets both headers (docs/clients.md).
 */
let demo: ClientsGateway;
let client: Anthropic;

const tools: Anthropic.Tool[] = [{ name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];

function anthropicFor(gw: ClientsGateway, key: string): Anthropic {
  return new Anthropic({ apiKey: null, baseURL: gw.url, defaultHeaders: { 'x-api-key': key, 'anthropic-version': '2023-06-01' }, maxRetries: 0, timeout: 30_000, fetch: gw.fetch });
}

beforeAll(async () => {
  demo = await startDemoGateway();
  client = anthropicFor(demo, demo.keys.family_b);
});
afterAll(async () => {
  await demo?.close();
});

describe('@anthropic-ai/sdk 1.12.0: messages', () => {
  it('create, and stream whose finalMessage usage equals the non-streamed usage; both billed', async () => {
    const from = demo.calls.length;
    const params = { model: 'lm-opus-5', max_tokens: 100, messages: [{ role: 'user' as const, content: 'Tell me about Baikal [sim:words=6 cached=2]' }] };
    const message = await client.messages.create(params);
    expect(message.content).toEqual([{ type: 'text', text: 'baikal is the deepest lake on' }]);
    expect(message.stop_reason).toBe('end_turn');
    const streamed = await client.messages.stream(params).finalMessage();
    expect(streamed.content).toEqual(message.content);
    expect(streamed.usage.input_tokens).toBe(message.usage.input_tokens);
    expect(streamed.usage.output_tokens).toBe(message.usage.output_tokens);
    expect(streamed.usage.cache_read_input_tokens).toBe(2);
    const events = await everyCallBilled(demo, from);
    expect(events.map((e) => e.endpoint)).toEqual(['/v1/messages', '/v1/messages']);
  });

  it('a tools loop: tool_use, then the tool_result answered in text', async () => {
    const from = demo.calls.length;
    const first = await client.messages.create({ model: 'lm-opus-5', max_tokens: 100, tools, messages: [{ role: 'user', content: 'Weather in Irkutsk? [sim:tool=get_weather text-first]' }] });
    expect(first.stop_reason).toBe('tool_use');
    const call = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
    expect(call).toMatchObject({ name: 'get_weather', input: { city: 'Irkutsk' } });
    const second = await client.messages.create({
      model: 'lm-opus-5',
      max_tokens: 100,
      tools,
      messages: [
        { role: 'user', content: 'Weather in Irkutsk?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '-20C' }] },
      ],
    });
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content[0]).toMatchObject({ type: 'text' });
    expect(await everyCallBilled(demo, from)).toHaveLength(2);
  });

  it('request ids: _request_id is the request-id header, and the cabinet knows the request by it', async () => {
    const { data: message, response } = await client.messages.create({ model: 'lm-opus-5', max_tokens: 20, messages: [{ role: 'user', content: 'hi [sim:words=2]' }] }).withResponse();
    // The SDK adds `_request_id` to what it returns (typed on its internal WithRequestID, not on Message).
    const data = message as typeof message & { _request_id?: string | null };
    expect(data._request_id).toBeTruthy();
    expect(response.headers.get('request-id')).toBe(data._request_id);
    expect(response.headers.get('x-request-id')).toBe(data._request_id);
    const event = await billedInCabinet(demo, data._request_id!);
    expect(event).toMatchObject({ endpoint: '/v1/messages', model: 'lm-opus-5' });
  });

  it('messages.countTokens answers input_tokens', async () => {
    const counted = await client.messages.countTokens({ model: 'lm-opus-5', messages: [{ role: 'user', content: 'How deep is Lake Baikal?' }] });
    expect(counted.input_tokens).toBeGreaterThan(0);
  });
});

describe('@anthropic-ai/sdk 1.12.0: models', () => {
  it('models.list and models.retrieve answer the Anthropic model shape', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) {
      expect(model).toMatchObject({ type: 'model', id: expect.any(String), display_name: expect.any(String), created_at: expect.any(String) });
      ids.push(model.id);
    }
    expect(ids).toContain('lm-opus-5');
    const one = await client.models.retrieve('lm-opus-5');
    expect(one).toMatchObject({ type: 'model', id: 'lm-opus-5', display_name: expect.any(String), created_at: expect.any(String) });
    const missing = await client.models.retrieve('no-such-model').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
    expect((missing as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });
});

describe('@anthropic-ai/sdk 1.12.0: the documented minimal setup', () => {
  it('apiKey alone (sent as Authorization: Bearer by SDK 1.12) is refused with a 401 that names x-api-key (SPEC.md: the Messages API takes x-api-key)', async () => {
    const plain = new Anthropic({ apiKey: demo.keys.family_b, baseURL: demo.url, defaultHeaders: { 'anthropic-version': '2023-06-01' }, maxRetries: 0 });
    const refused = await plain.messages.create({ model: 'lm-opus-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(JSON.stringify((refused as InstanceType<typeof Anthropic.APIError>).error)).toContain('x-api-key');
  });
});

describe('@anthropic-ai/sdk 1.12.0: thinking in a tool loop (recording upstream)', () => {
  it('thinking blocks and their signatures reach the client and go back to the upstream unchanged', async () => {
    const rec = await startRecordingGateway();
    try {
      const anthropic = anthropicFor(rec, rec.keys.family_b);
      const thinking = { type: 'enabled' as const, budget_tokens: 1024 };
      const first = await anthropic.messages.stream({ model: 'lm-opus-5', max_tokens: 2048, thinking, tools, messages: [{ role: 'user', content: 'Weather in Irkutsk? [sim:tool=get_weather thinking]' }] }).finalMessage();
      const block = first.content.find((b): b is Anthropic.ThinkingBlock => b.type === 'thinking');
      expect(block, JSON.stringify(first.content)).toBeDefined();
      expect(block!.signature).toBeTruthy();
      const call = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
      expect(call).toBeDefined();
      const second = await anthropic.messages.create({
        model: 'lm-opus-5',
        max_tokens: 2048,
        thinking,
        tools,
        messages: [
          { role: 'user', content: 'Weather in Irkutsk?' },
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '-20C' }] },
        ],
      });
      const sent = upstreamCall(rec.upstream, second._request_id!).body;
      expect(sent.thinking).toEqual(thinking);
      expect(sent.messages[1].content[0]).toEqual({ type: 'thinking', thinking: block!.thinking, signature: block!.signature });
      await everyCallBilled(rec, 0);
    } finally {
      await rec.close();
    }
  });
});
