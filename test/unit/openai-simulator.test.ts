import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crc32, inflateSync } from 'node:zlib';
import { countTokens, PNG_1X1, promptTokensOf, startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';

const CANARY = 'sk-CANARY-sim-credential';
let sim: Simulator;
let client: OpenAI;

beforeAll(async () => {
  sim = await startSimulator({ apiKey: CANARY, errorDetail: 'node canary.invalid', name: 'primary' });
  client = new OpenAI({ apiKey: CANARY, baseURL: `${sim.url}/v1`, maxRetries: 0, timeout: 5000 });
});
afterAll(async () => {
  await sim?.close();
});

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

const timeTool = {
  type: 'function' as const,
  function: { name: 'get_time', description: 'Local time in a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};
const TOOL_ARGUMENTS = { city: 'Irkutsk', unit: 'celsius' };

/** A PNG's chunks, each checked against its CRC, and its pixels inflated: proof the image is really valid. */
function pngChunks(png: Buffer): string[] {
  expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  const chunks: string[] = [];
  for (let offset = 8; offset < png.length; ) {
    const length = png.readUInt32BE(offset);
    const typeAndData = png.subarray(offset + 4, offset + 8 + length);
    expect(crc32(typeAndData)).toBe(png.readUInt32BE(offset + 8 + length));
    const type = typeAndData.subarray(0, 4).toString('ascii');
    if (type === 'IDAT') expect(inflateSync(typeAndData.subarray(4)).length).toBeGreaterThan(0);
    chunks.push(type);
    offset += 12 + length;
  }
  return chunks;
}

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

describe('the OpenAI simulator: several tool calls in one answer', () => {
  it('answers JSON with every call in order, optionally after a short text', async () => {
    const completion = await client.chat.completions.create({ model: 'm', tools: [weatherTool, timeTool], messages: [{ role: 'user', content: '[sim:tools=get_time,get_weather]' }] });
    const message = completion.choices[0]!.message;
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    expect(message.content).toBeNull();
    expect(message.tool_calls!.map((call) => call.type === 'function' && call.function.name)).toEqual(['get_time', 'get_weather']);
    expect(new Set(message.tool_calls!.map((call) => call.id)).size).toBe(2);
    for (const call of message.tool_calls!) expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual(TOOL_ARGUMENTS);
    expect(completion.usage!.completion_tokens).toBe(2 * (countTokens(JSON.stringify(TOOL_ARGUMENTS)) + 2));

    const withText = await client.chat.completions.create({ model: 'm', tools: [weatherTool], messages: [{ role: 'user', content: '[sim:tool=get_weather text-first]' }] });
    expect(withText.choices[0]!.message.content).toBe('Let me check.');
    expect(withText.choices[0]!.message.tool_calls).toHaveLength(1);
    expect(withText.usage!.completion_tokens).toBe(3 + countTokens(JSON.stringify(TOOL_ARGUMENTS)) + 2);
  });

  it('streams each call under its own index: id and name first, then argument fragments', async () => {
    const stream = await client.chat.completions.create({
      model: 'm',
      stream: true,
      tools: [weatherTool, timeTool],
      messages: [{ role: 'user', content: '[sim:tools=get_weather,get_time text-first]' }],
    });
    let text = '';
    const calls = new Map<number, { id?: string; name?: string; fragments: string[]; firstDelta: OpenAI.ChatCompletionChunk.Choice.Delta.ToolCall }>();
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (delta?.content) {
        expect(calls.size).toBe(0); // the text comes before any call
        text += delta.content;
      }
      for (const part of delta?.tool_calls ?? []) {
        const call = calls.get(part.index) ?? { fragments: [], firstDelta: part };
        calls.set(part.index, call);
        call.id ??= part.id;
        call.name ??= part.function?.name;
        if (part.function?.arguments) call.fragments.push(part.function.arguments);
      }
    }
    expect(text).toBe('Let me check.');
    expect([...calls.keys()]).toEqual([0, 1]);
    expect([...calls.values()].map((call) => call.name)).toEqual(['get_weather', 'get_time']);
    for (const call of calls.values()) {
      expect(call.firstDelta).toMatchObject({ id: expect.stringMatching(/^call_/), type: 'function', function: { name: call.name, arguments: '' } });
      expect(call.fragments.length).toBeGreaterThan(1);
      expect(JSON.parse(call.fragments.join(''))).toEqual(TOOL_ARGUMENTS);
    }

    const final = await client.chat.completions.stream({ model: 'm', tools: [weatherTool, timeTool], messages: [{ role: 'user', content: '[sim:tools=get_weather,get_time]' }] }).finalChatCompletion();
    const assembled = final.choices[0]!.message.tool_calls!;
    expect(assembled.map((call) => call.type === 'function' && [call.function.name, JSON.parse(call.function.arguments)])).toEqual([
      ['get_weather', TOOL_ARGUMENTS],
      ['get_time', TOOL_ARGUMENTS],
    ]);
  });
});

describe('the OpenAI simulator: image generation', () => {
  it('answers GPT-image style: base64 PNGs with the effective settings and token usage', async () => {
    const response = await client.images.generate({ model: 'img-2', prompt: 'a clear cold lake', n: 2, size: '1024x1536', quality: 'low' });
    expect(response.created).toBeGreaterThan(1_700_000_000);
    expect(response.data).toHaveLength(2);
    for (const image of response.data!) {
      expect(Object.keys(image)).toEqual(['b64_json']);
      expect(pngChunks(Buffer.from(image.b64_json!, 'base64'))).toEqual(['IHDR', 'IDAT', 'IEND']);
    }
    expect(response).toMatchObject({ background: 'opaque', output_format: 'png', quality: 'low', size: '1024x1536' });
    expect(response.usage).toEqual({ input_tokens: 4, input_tokens_details: { text_tokens: 4, image_tokens: 0 }, output_tokens: 2 * 272, total_tokens: 4 + 2 * 272 });
    expect(sim.requests.at(-1)).toMatchObject({ path: '/v1/images/generations', body: { model: 'img-2', n: 2 } });

    const defaults = await client.images.generate({ model: 'img-2', prompt: 'lake' });
    expect(defaults).toMatchObject({ quality: 'medium', size: '1024x1024' });
    expect(defaults.data).toHaveLength(1);
    // Real GPT image models refuse the legacy response_format parameter.
    await expect(client.images.generate({ model: 'gpt-image-2', prompt: 'lake', response_format: 'b64_json' })).rejects.toMatchObject({ status: 400, param: 'response_format', code: 'unknown_parameter' });
  });

  it('answers legacy dall-e style: url by default, b64_json on request, revised_prompt for dall-e-3, no usage', async () => {
    const byUrl = await client.images.generate({ model: 'dall-e-2', prompt: 'lake' });
    expect(byUrl.usage).toBeUndefined();
    const fetched = await fetch(byUrl.data![0]!.url!);
    expect(fetched.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await fetched.arrayBuffer())).toEqual(PNG_1X1);

    const inline = await client.images.generate({ model: 'dall-e-3', prompt: 'lake', response_format: 'b64_json' });
    expect(inline.data![0]!.b64_json).toBe(PNG_1X1.toString('base64'));
    expect(inline.data![0]!.revised_prompt).toContain('lake');
  });

  it('honours status, latency, hang and down from the prompt, and checks the key and the body', async () => {
    const limited = (await client.images.generate({ model: 'img-2', prompt: 'lake [sim:status=429]' }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited.headers?.get('retry-after')).toBe('1');
    expect(limited.message).toContain('canary.invalid');
    await expect(client.images.generate({ model: 'img-2', prompt: 'lake [sim:down=primary]' })).rejects.toMatchObject({ status: 503 });
    expect((await client.images.generate({ model: 'img-2', prompt: 'lake [sim:down=backup]' })).data).toHaveLength(1);

    const started = Date.now();
    await client.images.generate({ model: 'img-2', prompt: 'lake [sim:latency=150]' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    const hanging = new OpenAI({ apiKey: CANARY, baseURL: `${sim.url}/v1`, maxRetries: 0, timeout: 200 });
    await expect(hanging.images.generate({ model: 'img-2', prompt: 'lake [sim:hang]' })).rejects.toThrow(/timed out/i);

    const wrongKey = new OpenAI({ apiKey: 'sk-wrong', baseURL: `${sim.url}/v1`, maxRetries: 0 });
    await expect(wrongKey.images.generate({ model: 'img-2', prompt: 'lake' })).rejects.toMatchObject({ status: 401 });
    await expect(client.images.generate({ model: 'img-2', prompt: '' })).rejects.toMatchObject({ status: 400, param: 'prompt' });
    await expect(client.images.generate({ model: 'img-2', prompt: 'lake', n: 11 })).rejects.toMatchObject({ status: 400, param: 'n' });
  });
});
