import { ChatAnthropic } from '@langchain/anthropic';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { AIMessageChunk } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { everyCallBilled, startDemoGateway, type ClientsGateway } from '../../helpers/clients-gateway.js';

/**
 * LangChain against the built gateway in demo mode: `@langchain/openai` 1.6.0 ChatOpenAI (chat
 * completions, and `useResponsesApi: true`) and `@langchain/anthropic` 1.5.11 ChatAnthropic (Messages;
 * it carries its own @anthropic-ai/sdk 0.122, which sends the key as x-api-key), on `@langchain/core`
 * 1.4.0: invoke, stream (the streamed usage_metadata equals the non-streamed one for the same prompt),
 * bindTools, withStructuredOutput (default method). Every billed request is found in the cabinet.
 */
let demo: ClientsGateway;
const TEXT = 'baikal is the deepest lake on earth and';
const City = z.object({ city: z.string(), population: z.number() });
const getWeather = tool(async ({ city }) => `-20C in ${city}`, { name: 'get_weather', description: 'Weather of a city', schema: z.object({ city: z.string(), unit: z.string().optional() }) });

beforeAll(async () => {
  demo = await startDemoGateway();
});
afterAll(async () => {
  await demo?.close();
});

interface Flavour {
  name: string;
  model: () => BaseChatModel;
  endpoint: string;
}

const flavours: Flavour[] = [
  { name: '@langchain/openai ChatOpenAI (chat completions)', model: () => new ChatOpenAI({ model: 'gen-5.6-luna', apiKey: demo.keys.family_a, maxRetries: 0, configuration: { baseURL: `${demo.url}/v1`, fetch: demo.fetch } }), endpoint: '/v1/chat/completions' },
  {
    name: '@langchain/openai ChatOpenAI (useResponsesApi: true)',
    model: () => new ChatOpenAI({ model: 'gen-5.6-luna', apiKey: demo.keys.family_a, maxRetries: 0, useResponsesApi: true, configuration: { baseURL: `${demo.url}/v1`, fetch: demo.fetch } }),
    endpoint: '/v1/responses',
  },
  { name: '@langchain/anthropic ChatAnthropic', model: () => new ChatAnthropic({ model: 'lm-opus-5', apiKey: demo.keys.family_b, anthropicApiUrl: demo.url, maxRetries: 0, clientOptions: { fetch: demo.fetch } }), endpoint: '/v1/messages' },
];

const text = (content: unknown): string => (typeof content === 'string' ? content : (content as { type: string; text?: string }[]).filter((p) => p.type === 'text').map((p) => p.text).join(''));

describe.each(flavours)('$name', ({ model, endpoint }) => {
  it('invoke, and stream: the same text, and the streamed usage_metadata equals the non-streamed one; both billed', async () => {
    const from = demo.calls.length;
    const prompt = 'Tell me about Baikal [sim:words=6 cached=2]';
    const invoked = await model().invoke(prompt);
    expect(text(invoked.content)).toBe('baikal is the deepest lake on');
    expect(invoked.usage_metadata!.output_tokens).toBe(6);
    let streamed: AIMessageChunk | undefined;
    for await (const chunk of await model().stream(prompt)) streamed = streamed ? streamed.concat(chunk) : chunk;
    expect(text(streamed!.content)).toBe('baikal is the deepest lake on');
    // The counts are compared (merging chunks may add empty detail objects the JSON answer has not).
    const counts = (usage: typeof invoked.usage_metadata) => ({ input: usage!.input_tokens, output: usage!.output_tokens, total: usage!.total_tokens, cacheRead: usage!.input_token_details?.cache_read ?? 0 });
    expect(counts(streamed!.usage_metadata)).toEqual(counts(invoked.usage_metadata));
    expect(invoked.usage_metadata!.input_token_details?.cache_read).toBe(2);
    const events = await everyCallBilled(demo, from);
    expect(events.map((e) => e.endpoint)).toEqual([endpoint, endpoint]);
  });

  it('bindTools: the model calls the tool with its arguments', async () => {
    const from = demo.calls.length;
    const bound = model().bindTools!([getWeather]);
    const answer = await bound.invoke('Weather in Irkutsk? [sim:tool=get_weather]');
    expect(answer.tool_calls).toMatchObject([{ name: 'get_weather', args: { city: 'Irkutsk', unit: 'celsius' } }]);
    await everyCallBilled(demo, from);
  });

  it('withStructuredOutput (default method): an object of the schema', async () => {
    const from = demo.calls.length;
    const structured = model().withStructuredOutput(City);
    const city = await structured.invoke('The largest city on Lake Baikal');
    expect(City.safeParse(city).success).toBe(true);
    await everyCallBilled(demo, from);
  });
});

describe('@langchain/openai ChatOpenAI: a tool round trip', () => {
  it('the tool result goes back as a ToolMessage and the model answers in text', async () => {
    const model = new ChatOpenAI({ model: 'gen-5.6-luna', apiKey: demo.keys.family_a, maxRetries: 0, configuration: { baseURL: `${demo.url}/v1`, fetch: demo.fetch } }).bindTools([getWeather]);
    const question = { role: 'user', content: 'Weather in Irkutsk? [sim:tool=get_weather]' };
    const call = await model.invoke([question]);
    const result = await getWeather.invoke(call.tool_calls![0]!);
    const answer = await model.invoke([question, call, result]);
    expect(answer.content).toBe(TEXT);
  });
});
