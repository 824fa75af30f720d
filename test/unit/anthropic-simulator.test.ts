import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens, PNG_1X1, promptTokensOf, startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';

const CANARY = 'sk-ant-CANARY-sim-credential';
let sim: Simulator;
let client: Anthropic;

beforeAll(async () => {
  sim = await startSimulator({ apiKey: CANARY, errorDetail: 'node canary.invalid', name: 'primary' });
  // The SDK appends `/v1/messages` to the base URL itself.
  client = new Anthropic({ apiKey: CANARY, baseURL: sim.url, maxRetries: 0, timeout: 5000 });
});
afterAll(async () => {
  await sim?.close();
});

const weatherTool = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };
const timeTool = { name: 'get_time', description: 'Local time in a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } };
const TOOL_INPUT = { city: 'Irkutsk', unit: 'celsius' };

/** A raw request, for what the SDK would not send (other versions, missing fields, the x-api-key header). */
function post(body: object, headers: Record<string, string> = { 'x-api-key': CANARY, 'anthropic-version': '2023-06-01' }) {
  return fetch(`${sim.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

const bodyOf = (response: Response): Promise<any> => response.json();

describe('the Anthropic Messages simulator, read by the official @anthropic-ai/sdk', () => {
  it('answers JSON messages with usage that excludes cache reads and writes from input_tokens', async () => {
    const messages = [{ role: 'user' as const, content: 'tell me about baikal [sim:words=5 cached=4 cache-write=2]' }];
    const message = await client.messages.create({ model: 'claude-sim', max_tokens: 100, system: 'be brief', messages });
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: 'claude-sim', stop_reason: 'end_turn', stop_sequence: null });
    expect(message.id).toMatch(/^msg_/);
    expect(message.content).toEqual([{ type: 'text', text: 'baikal is the deepest lake' }]);
    const total = countTokens('be brief') + promptTokensOf(messages);
    expect(total).toBe(2 + countTokens(messages[0]!.content) + 3);
    expect(message.usage).toMatchObject({ input_tokens: total - 4 - 2, cache_read_input_tokens: 4, cache_creation_input_tokens: 2, output_tokens: 5 });

    // System as text blocks, and tool results, count like text; cache tokens never exceed the prompt.
    const blocks = await client.messages.create({
      model: 'claude-sim',
      max_tokens: 100,
      system: [{ type: 'text', text: 'one two three' }],
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: TOOL_INPUT }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'minus five' }, { type: 'text', text: '[sim:words=2 cached=1000]' }] },
      ],
    });
    expect(blocks.usage).toMatchObject({ input_tokens: 0, cache_read_input_tokens: 3 + (1 + 3) + (0 + 3) + (2 + 2 + 3), output_tokens: 2 });
  });

  it('caps the answer at max_tokens with stop_reason max_tokens', async () => {
    const message = await client.messages.create({ model: 'm', max_tokens: 3, messages: [{ role: 'user', content: '[sim:words=10]' }] });
    expect(message.content).toEqual([{ type: 'text', text: 'baikal is the' }]);
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage.output_tokens).toBe(3);
  });

  it('streams named events in the real order, which the SDK assembles into the same message', async () => {
    const stream = client.messages.stream({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: '[sim:words=4 chunk-delay=5 cached=2]' }] });
    const deltas: string[] = [];
    const events: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    stream.on('streamEvent', (event) => events.push(event.type));
    const final = await stream.finalMessage();
    expect(deltas).toEqual(['baikal', ' is', ' the', ' deepest']);
    expect(events).toEqual(['message_start', 'content_block_start', ...Array(4).fill('content_block_delta'), 'content_block_stop', 'message_delta', 'message_stop']);
    expect(final.content).toMatchObject([{ type: 'text', text: 'baikal is the deepest' }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({ output_tokens: 4, cache_read_input_tokens: 2, input_tokens: promptTokensOf([{ content: '[sim:words=4 chunk-delay=5 cached=2]' }]) - 2 });
  });

  it('puts every frame on the wire as `event: T` with data.type T, a ping after the first block start', async () => {
    const response = await post({ model: 'm', max_tokens: 100, stream: true, messages: [{ role: 'user', content: '[sim:words=2]' }] });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const frames = (await response.text()).trim().split('\n\n').map((frame) => {
      const [event, data] = frame.split('\n');
      return { event: event!.replace('event: ', ''), data: JSON.parse(data!.replace('data: ', '')) };
    });
    for (const frame of frames) expect(frame.data.type).toBe(frame.event);
    expect(frames.map((f) => f.event)).toEqual(['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(frames[0]!.data.message).toMatchObject({ content: [], stop_reason: null, usage: { output_tokens: 1 } });
    expect(frames[1]!.data).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    expect(frames[3]!.data.delta).toEqual({ type: 'text_delta', text: 'baikal' });
    expect(frames[6]!.data).toEqual({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } });
  });

  it('calls one tool, or several in order, in JSON and in streams whose input_json the SDK reassembles', async () => {
    const one = await client.messages.create({ model: 'm', max_tokens: 100, tools: [weatherTool], messages: [{ role: 'user', content: 'weather? [sim:tool=get_weather]' }] });
    expect(one.stop_reason).toBe('tool_use');
    expect(one.content).toHaveLength(1);
    expect(one.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: TOOL_INPUT });
    expect((one.content[0] as Anthropic.ToolUseBlock).id).toMatch(/^toolu_/);
    expect(one.usage.output_tokens).toBe(countTokens(JSON.stringify(TOOL_INPUT)) + 2);

    const two = await client.messages.create({ model: 'm', max_tokens: 100, tools: [weatherTool, timeTool], messages: [{ role: 'user', content: '[sim:tools=get_time,get_weather text-first]' }] });
    expect(two.content.map((block) => (block.type === 'tool_use' ? block.name : block.type === 'text' ? block.text : block.type))).toEqual(['Let me check.', 'get_time', 'get_weather']);
    expect(two.usage.output_tokens).toBe(3 + 2 * (countTokens(JSON.stringify(TOOL_INPUT)) + 2));

    const stream = client.messages.stream({ model: 'm', max_tokens: 100, tools: [weatherTool, timeTool], messages: [{ role: 'user', content: '[sim:tools=get_weather,get_time text-first chunk-delay=1]' }] });
    const partials: string[] = [];
    stream.on('inputJson', (partial) => partials.push(partial));
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content.map((block) => block.type)).toEqual(['text', 'tool_use', 'tool_use']);
    expect(final.content[0]).toMatchObject({ text: 'Let me check.' });
    expect(final.content.slice(1)).toEqual([expect.objectContaining({ name: 'get_weather', input: TOOL_INPUT }), expect.objectContaining({ name: 'get_time', input: TOOL_INPUT })]);
    expect(partials.length).toBeGreaterThan(4); // fragments, not one piece
    expect(partials.join('')).toBe(JSON.stringify(TOOL_INPUT).repeat(2));

    // A tool the request does not offer is not called.
    const unknown = await client.messages.create({ model: 'm', max_tokens: 100, tools: [weatherTool], messages: [{ role: 'user', content: '[sim:tool=launch_rocket words=2]' }] });
    expect(unknown.content).toEqual([{ type: 'text', text: 'baikal is' }]);
  });

  it('accepts image blocks (they cost no words) and rejects malformed ones', async () => {
    const data = PNG_1X1.toString('base64');
    const message = await client.messages.create({
      model: 'm',
      max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }, { type: 'text', text: 'what is this? [sim:words=3]' }] }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'baikal is the' }]);
    expect(message.usage.input_tokens).toBe(countTokens('what is this? [sim:words=3]') + 3);
    const record = sim.requests.at(-1)!;
    expect(record.path).toBe('/v1/messages');
    expect(record.body.messages[0].content[0].source.data).toBe(data);

    const bad = await post({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data } }] }] });
    expect(bad.status).toBe(400);
    expect((await bodyOf(bad)).error.type).toBe('invalid_request_error');
  });

  it('fails like Anthropic: typed error bodies with the canary, 401, 429 with retry-after, 529 for down', async () => {
    const limited = (await client.messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: '[sim:status=429]' }] }).catch((e: unknown) => e)) as InstanceType<
      typeof Anthropic.APIError
    >;
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect(limited.status).toBe(429);
    expect(limited.headers?.get('retry-after')).toBe('1');
    expect(limited.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect(limited.message).toContain('canary.invalid');
    expect(limited.requestID).toMatch(/^req_/);

    const wrongKey = new Anthropic({ apiKey: 'sk-ant-wrong', baseURL: sim.url, maxRetries: 0 });
    const denied = (await wrongKey.messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    expect(denied).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(denied.error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });

    const statuses: [number, string][] = [
      [400, 'invalid_request_error'],
      [403, 'permission_error'],
      [404, 'not_found_error'],
      [500, 'api_error'],
      [529, 'overloaded_error'],
    ];
    for (const [status, type] of statuses) {
      const response = await post({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: `[sim:status=${status}]` }] });
      expect(response.status).toBe(status);
      const body = await bodyOf(response);
      expect(body).toMatchObject({ type: 'error', error: { type } });
      expect(body.error.message).toContain('canary.invalid');
    }
    const down = await post({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: '[sim:down=primary]' }] });
    expect(down.status).toBe(529);
    expect(await down.json()).toMatchObject({ error: { type: 'overloaded_error' } });

    const hanging = new Anthropic({ apiKey: CANARY, baseURL: sim.url, maxRetries: 0, timeout: 200 });
    await expect(hanging.messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: '[sim:hang]' }] })).rejects.toThrow(/timed out/i);
  });

  it('checks headers and body as the API does: x-api-key or Bearer, the version, max_tokens, removed sampling params', async () => {
    expect((await post({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: '[sim:words=1]' }] })).status).toBe(200);
    expect(sim.requests.at(-1)!.headers['x-api-key']).toBe(CANARY);

    const noVersion = await post({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, { 'x-api-key': CANARY });
    expect(noVersion.status).toBe(400);
    expect(await noVersion.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('anthropic-version: header is required') } });
    expect((await post({ model: 'm', max_tokens: 5, messages: [] }, { 'x-api-key': CANARY, 'anthropic-version': '2024-10-22' })).status).toBe(400);
    expect((await post({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, { 'anthropic-version': '2023-06-01' })).status).toBe(401);

    const noMax = await post({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(noMax.status).toBe(400);
    const noMaxBody = await bodyOf(noMax);
    expect(noMaxBody.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining('max_tokens') });
    expect(noMaxBody.error.message).toContain('canary.invalid');

    // temperature is fine on 2023-06-01 and rejected on 2026-10-21, the version the SDK sends.
    expect((await post({ model: 'm', max_tokens: 5, temperature: 0.2, messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    await expect(client.messages.create({ model: 'm', max_tokens: 5, temperature: 0.2, messages: [{ role: 'user', content: 'hi' }] } as Anthropic.MessageCreateParamsNonStreaming)).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('temperature: Extra inputs are not permitted'),
    });
    expect(sim.requests.at(-1)!.headers).toMatchObject({ authorization: `Bearer ${CANARY}`, 'anthropic-version': '2026-10-21' });
  });

  it('cuts a stream after K content deltas, and records a client that goes away', async () => {
    const cut = client.messages.stream({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: '[sim:words=10 cut-after=3]' }] });
    const received: string[] = [];
    cut.on('text', (delta) => received.push(delta));
    cut.on('error', () => {}); // the rejection of finalMessage() is what we check
    await expect(cut.finalMessage()).rejects.toThrow();
    expect(received.join('')).toBe('baikal is the');

    const before = sim.requests.length;
    const controller = new AbortController();
    const stream = await client.messages.create({ model: 'm', max_tokens: 100, stream: true, messages: [{ role: 'user', content: '[sim:words=50 chunk-delay=20]' }] }, { signal: controller.signal });
    let seen = 0;
    for await (const _event of stream) {
      if (++seen === 5) {
        controller.abort();
        break;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    const record = sim.requests[before]!;
    expect(record.path).toBe('/v1/messages');
    expect(record.aborted).toBe(true);
    expect(record.endedAt! - record.startedAt).toBeLessThan(1000);
  });
});
