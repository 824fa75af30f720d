import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens, promptTokensOf, startSimulator, type Simulator } from '../simulator/openai-simulator.js';

const CANARY = 'sk-CANARY-sim-credential';
let sim: Simulator;
let client: OpenAI;

beforeAll(async () => {
  sim = await startSimulator({ apiKey: CANARY, errorDetail: 'node canary.invalid' });
  client = new OpenAI({ apiKey: CANARY, baseURL: `${sim.url}/v1`, maxRetries: 0, timeout: 5000 });
});
afterAll(async () => {
  await sim?.close();
});

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

describe('the OpenAI-compatible upstream simulator, read by the official openai client', () => {
  it('answers JSON completions with exact, predictable usage', async () => {
    const messages = [{ role: 'system' as const, content: 'be brief' }, { role: 'user' as const, content: 'tell me about baikal [sim:words=5 cached=3]' }];
    const completion = await client.chat.completions.create({ model: 'gen-5.6-luna', messages });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]!.message.content).toBe('baikal is the deepest lake');
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject({ prompt_tokens: promptTokensOf(messages), completion_tokens: 5, total_tokens: promptTokensOf(messages) + 5 });
    expect(completion.usage!.prompt_tokens_details!.cached_tokens).toBe(3);
    expect(promptTokensOf(messages)).toBe(2 + 3 + countTokens('tell me about baikal [sim:words=5 cached=3]') + 3);
  });

  it('honours max_tokens with finish_reason length', async () => {
    const completion = await client.chat.completions.create({ model: 'm', max_tokens: 3, messages: [{ role: 'user', content: '[sim:words=10]' }] });
    expect(completion.choices[0]!.message.content).toBe('baikal is the');
    expect(completion.choices[0]!.finish_reason).toBe('length');
    expect(completion.usage!.completion_tokens).toBe(3);
  });

  it('streams chunks, then usage when include_usage is asked, then [DONE]', async () => {
    const stream = await client.chat.completions.create({ model: 'm', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: '[sim:words=4 chunk-delay=5]' }] });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('baikal is the deepest');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ completion_tokens: 4 });
    const noUsage = await client.chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: '[sim:words=2]' }] });
    for await (const chunk of noUsage) expect(chunk.usage ?? null).toBeNull();
  });

  it('calls tools, in JSON and in a stream the SDK reassembles', async () => {
    const completion = await client.chat.completions.create({ model: 'm', tools: [weatherTool], messages: [{ role: 'user', content: 'weather? [sim:tool=get_weather]' }] });
    const call = completion.choices[0]!.message.tool_calls![0]!;
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call.type === 'function' && call.function.name).toBe('get_weather');
    expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ city: 'Irkutsk', unit: 'celsius' });

    const runner = client.chat.completions.stream({ model: 'm', tools: [weatherTool], messages: [{ role: 'user', content: 'weather? [sim:tool=get_weather]' }] });
    const final = await runner.finalChatCompletion();
    const streamed = final.choices[0]!.message.tool_calls![0]!;
    expect(streamed.type === 'function' && JSON.parse(streamed.function.arguments)).toEqual({ city: 'Irkutsk', unit: 'celsius' });
  });

  it('fails like an upstream: errors with status and detail, 429 with retry-after, cuts, hangs, bad keys', async () => {
    await expect(client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: '[sim:status=503]' }] })).rejects.toMatchObject({ status: 503 });
    const limited = (await client.chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: '[sim:status=429]' }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited.status).toBe(429);
    expect(limited.headers?.get('retry-after')).toBe('1');
    expect(limited.message).toContain('canary.invalid');

    const cut = await client.chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: '[sim:words=10 cut-after=3]' }] });
    const received: string[] = [];
    await expect(
      (async () => {
        for await (const chunk of cut) received.push(chunk.choices[0]?.delta.content ?? '');
      })(),
    ).rejects.toThrow();
    expect(received.join('')).toBe('baikal is the');

    const hanging = new OpenAI({ apiKey: CANARY, baseURL: `${sim.url}/v1`, maxRetries: 0, timeout: 200 });
    await expect(hanging.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: '[sim:hang]' }] })).rejects.toThrow(/timed out/i);

    const wrongKey = new OpenAI({ apiKey: 'sk-wrong', baseURL: `${sim.url}/v1`, maxRetries: 0 });
    await expect(wrongKey.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 401 });
  });

  it('records requests, and notices a client that goes away mid-stream', async () => {
    const before = sim.requests.length;
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'm', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: '[sim:words=50 chunk-delay=20]' }] },
      { signal: controller.signal },
    );
    let seen = 0;
    for await (const _chunk of stream) {
      if (++seen === 3) {
        controller.abort();
        break;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    const record = sim.requests[before]!;
    expect(record.body.stream_options).toEqual({ include_usage: true });
    expect(record.headers.authorization).toBe(`Bearer ${CANARY}`);
    expect(record.aborted).toBe(true);
    expect(record.endedAt! - record.startedAt).toBeLessThan(1000);
  });
});
