import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateImage, generateText, Output, stepCountIs, streamText, tool, type LanguageModel } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { everyCallBilled, startDemoGateway, type ClientsGateway } from '../../helpers/clients-gateway.js';

/**
 * The Vercel AI SDK (`ai` 7.0.173) with its three providers against the built gateway in demo mode:
 * `@ai-sdk/openai` 4.0.118 (`openai(id)` is the Responses API, its default; `openai.chat(id)` is chat
 * completions), `@ai-sdk/anthropic` 4.0.105 (Messages, family-b key) and `@ai-sdk/openai-compatible`
 * 3.0.92 (chat completions). Each: generateText, streamText, a multi-step tool loop, structured output;
 * generateImage where the provider has image models. Every billed request is found in the cabinet.
 */
let demo: ClientsGateway;
const TEXT = 'baikal is the deepest lake on earth and';
const City = z.object({ city: z.string(), population: z.number() });

const weather = () => {
  const calls: unknown[] = [];
  return {
    calls,
    tools: {
      get_weather: tool({
        description: 'Weather of a city',
        inputSchema: z.object({ city: z.string(), unit: z.string().optional() }),
        execute: async (input) => {
          calls.push(input);
          return { temperature: -20, sky: 'clear' };
        },
      }),
    },
  };
};

beforeAll(async () => {
  demo = await startDemoGateway();
});
afterAll(async () => {
  await demo?.close();
});

interface Provider {
  name: string;
  model: () => LanguageModel;
  /** The endpoint the provider calls, as the cabinet records it. */
  endpoint: string;
}

const providers: Provider[] = [
  { name: '@ai-sdk/openai openai(id) (Responses API, the default)', model: () => createOpenAI({ baseURL: `${demo.url}/v1`, apiKey: demo.keys.family_a, fetch: demo.fetch })('gen-5.6-luna'), endpoint: '/v1/responses' },
  { name: '@ai-sdk/openai openai.chat(id) (chat completions)', model: () => createOpenAI({ baseURL: `${demo.url}/v1`, apiKey: demo.keys.family_a, fetch: demo.fetch }).chat('gen-5.6-luna'), endpoint: '/v1/chat/completions' },
  { name: '@ai-sdk/anthropic', model: () => createAnthropic({ baseURL: `${demo.url}/v1`, apiKey: demo.keys.family_b, fetch: demo.fetch })('lm-opus-5'), endpoint: '/v1/messages' },
  {
    name: '@ai-sdk/openai-compatible',
    // The gateway serves json_schema structured outputs, which this provider uses only when told so (docs/clients.md).
    model: () => createOpenAICompatible({ name: 'baikal', baseURL: `${demo.url}/v1`, apiKey: demo.keys.family_a, includeUsage: true, supportsStructuredOutputs: true, fetch: demo.fetch }).chatModel('gen-5.6-luna'),
    endpoint: '/v1/chat/completions',
  },
];

describe.each(providers)('ai 7.0.173 with $name', ({ model, endpoint }) => {
  it('generateText and streamText: the text and its usage, billed', async () => {
    const from = demo.calls.length;
    const generated = await generateText({ model: model(), prompt: 'Tell me about Baikal', maxRetries: 0 });
    expect(generated.text).toBe(TEXT);
    expect(generated.usage.outputTokens).toBe(8);
    const streamed = streamText({ model: model(), prompt: 'Stream it [sim:words=5]', maxRetries: 0 });
    let text = '';
    for await (const delta of streamed.textStream) text += delta;
    expect(text).toBe('baikal is the deepest lake');
    expect((await streamed.usage).outputTokens).toBe(5);
    const events = await everyCallBilled(demo, from);
    expect(events.map((e) => e.endpoint)).toEqual([endpoint, endpoint]);
  });

  it('a multi-step tool loop (stopWhen: stepCountIs(3)): the tool runs, its result goes back, the model answers in text', async () => {
    const from = demo.calls.length;
    const { calls, tools } = weather();
    // Text before the call: the Responses provider then refers to that assistant message by id (item_reference).
    const result = await generateText({ model: model(), tools, stopWhen: stepCountIs(3), prompt: 'Weather in Irkutsk? [sim:tool=get_weather text-first]', maxRetries: 0 });
    expect(calls).toEqual([{ city: 'Irkutsk', unit: 'celsius' }]);
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]!.finishReason).toBe('tool-calls');
    expect(result.text).not.toBe('');
    expect(result.finishReason).toBe('stop');
    expect(await everyCallBilled(demo, from)).toHaveLength(2);
    if (endpoint === '/v1/responses') {
      // With store on (the default), the second step refers to the first step's text item by id.
      expect(demo.calls.at(-1)!.body).toContain('"item_reference"');
    }
  });

  it('the same tool loop streamed', async () => {
    const { calls, tools } = weather();
    const result = streamText({ model: model(), tools, stopWhen: stepCountIs(3), prompt: 'Weather in Irkutsk? [sim:tool=get_weather text-first]', maxRetries: 0 });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(calls).toHaveLength(1);
    expect(await result.steps).toHaveLength(2);
    expect(text.startsWith('Let me check.')).toBe(true);
  });

  it('structured output (Output.object with a zod schema): an object of the schema', async () => {
    const from = demo.calls.length;
    const result = await generateText({ model: model(), output: Output.object({ schema: City }), prompt: 'The largest city on Lake Baikal', maxRetries: 0 });
    expect(City.safeParse(result.output).success).toBe(true);
    await everyCallBilled(demo, from);
  });
});

describe('ai 7.0.173 generateImage', () => {
  it('@ai-sdk/openai openai.image(id): one PNG, billed', async () => {
    const from = demo.calls.length;
    const { image } = await generateImage({ model: createOpenAI({ baseURL: `${demo.url}/v1`, apiKey: demo.keys.family_a, fetch: demo.fetch }).image('img-1.5'), prompt: 'Lake Baikal in winter', size: '1024x1024', maxRetries: 0 });
    expect(Buffer.from(image.uint8Array).subarray(1, 4).toString()).toBe('PNG');
    const [event] = await everyCallBilled(demo, from);
    expect(event!.endpoint).toBe('/v1/images/generations');
  });

  it('@ai-sdk/openai-compatible imageModel(id): one PNG, billed', async () => {
    const from = demo.calls.length;
    const provider = createOpenAICompatible({ name: 'baikal', baseURL: `${demo.url}/v1`, apiKey: demo.keys.family_a, fetch: demo.fetch });
    const { image } = await generateImage({ model: provider.imageModel('img-1.5'), prompt: 'Lake Baikal in summer', size: '1024x1024', maxRetries: 0 });
    expect(Buffer.from(image.uint8Array).subarray(1, 4).toString()).toBe('PNG');
    await everyCallBilled(demo, from);
  });
});
