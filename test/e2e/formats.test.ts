import Anthropic from '@anthropic-ai/sdk';
import { Decimal } from 'decimal.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerBalance } from '../helpers/accounts.js';
import { http } from '../helpers/clients.js';
import { usageDebitOf } from '../helpers/ledger.js';
import {
  ANTHROPIC_SERVED,
  anthropicClient,
  apiAccount,
  openaiClient,
  processAdmin,
  requestId,
  startInferenceStack,
  TRANSLATED_FAMILY_B,
  upstreamCall,
  usageEventOf,
  withId,
  type ApiAccount,
  type InferenceStack,
} from '../helpers/inference.js';

/** Cheap-group prices of the shipped catalog (SPEC.md 4.9). */
const OPUS = { input: '0.35', output: '0.35', cacheRead: '0.035', cacheWrite: '0.40' };

/** The DESIGN.md cost formula written out: uncached input, cache reads, cache writes and output, per 1M tokens. */
function cost(prices: typeof OPUS, event: Record<string, any>): Decimal {
  const read = event.cache_read_tokens ?? 0;
  const write = event.cache_write_tokens ?? 0;
  return new Decimal(event.prompt_tokens - read - write)
    .times(prices.input)
    .plus(new Decimal(read).times(prices.cacheRead))
    .plus(new Decimal(write).times(prices.cacheWrite))
    .plus(new Decimal(event.completion_tokens).times(prices.output))
    .dividedBy(1_000_000)
    .toDecimalPlaces(10, Decimal.ROUND_HALF_EVEN);
}

async function billedExactly(stack: InferenceStack, rid: string, prices: typeof OPUS) {
  const event = await usageEventOf(stack, rid);
  expect(event.status).toBe('success');
  expect(new Decimal(event.amount_usd).equals(cost(prices, event))).toBe(true);
  // Charged once: the event names the batch debit that covers it, which is exactly minus the events it covers.
  expect(await usageDebitOf(stack.db, event.id)).toMatchObject({ kind: 'usage' });
  return event;
}

const tools = [
  { name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } },
  { name: 'get_time', description: 'Local time of a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } },
];
const openAiTools: OpenAI.ChatCompletionTool[] = tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.input_schema } }));
const IRKUTSK = { city: 'Irkutsk', unit: 'celsius' };

let stack: InferenceStack;
let admin: { token: string; userId: string };
let familyB: ApiAccount;
let familyA: ApiAccount;

beforeAll(async () => {
  stack = await startInferenceStack();
  admin = await processAdmin(stack);
  familyB = await apiAccount(stack, admin, '5', { provider_family: 'family_b' });
  familyA = await apiAccount(stack, admin, '5');
});

afterAll(async () => {
  await stack?.close();
});

describe('POST /v1/messages with the official Anthropic client', () => {
  it('answers a Messages request from the Anthropic-kind upstream, with cache usage billed in its own buckets', async () => {
    const rid = requestId('messages');
    const client = anthropicClient(stack, familyB.key);
    const message = await client.messages.create(
      { model: 'lm-opus-5', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Tell me about Baikal [sim:words=6 cached=3 cache-write=2]' }] },
      { headers: { 'x-request-id': rid } },
    );
    expect(message.model).toBe('lm-opus-5');
    expect(message.id).toMatch(/^msg_/);
    expect(message.content).toEqual([{ type: 'text', text: 'baikal is the deepest lake on' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({ output_tokens: 6, cache_read_input_tokens: 3, cache_creation_input_tokens: 2 });

    const upstream = upstreamCall(stack.primary, rid);
    expect(upstream.path).toBe('/v1/messages');
    expect(upstream.body.model).toBe(`${stack.canaries.upstreamModelPrefix}lm-opus-5`);
    expect(upstream.headers['x-api-key']).toBe(stack.canaries.credential);
    expect(upstream.body.system).toBe('Be brief.'); // same format both sides: passed straight through

    const event = await billedExactly(stack, rid, OPUS);
    expect(event).toMatchObject({ endpoint: '/v1/messages', provider_family: 'family_b', cache_read_tokens: 3, cache_write_tokens: 2, completion_tokens: 6 });
    expect(event.prompt_tokens).toBe(message.usage.input_tokens + 3 + 2);
  });

  it('streams text and two tool calls with the full event sequence; the SDK assembles them', async () => {
    const rid = requestId('messages-stream');
    const client = anthropicClient(stack, familyB.key);
    const stream = client.messages.stream(
      { model: 'lm-opus-5', max_tokens: 200, tools, messages: [{ role: 'user', content: 'Weather and time in Irkutsk? [sim:tools=get_weather,get_time text-first]' }] },
      { headers: { 'x-request-id': rid } },
    );
    const types: string[] = [];
    stream.on('streamEvent', (event) => types.push(event.type));
    const final = await stream.finalMessage();
    expect(final.content.map((b) => b.type)).toEqual(['text', 'tool_use', 'tool_use']);
    expect(final.content[0]).toMatchObject({ type: 'text', text: 'Let me check.' });
    expect(final.content.slice(1)).toMatchObject([
      { type: 'tool_use', name: 'get_weather', input: IRKUTSK },
      { type: 'tool_use', name: 'get_time', input: IRKUTSK },
    ]);
    expect(final.stop_reason).toBe('tool_use');
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
    expect(types).toContain('content_block_stop');
    expect(types.filter((t) => t === 'content_block_start')).toHaveLength(3);
    await billedExactly(stack, rid, OPUS);

    // The tool results go back and are forwarded as tool_result blocks.
    const [weather, time] = final.content.slice(1) as Anthropic.ToolUseBlock[];
    const answer = await client.messages.create({
      model: 'lm-opus-5',
      max_tokens: 50,
      tools,
      messages: [
        { role: 'user', content: 'Weather and time in Irkutsk?' },
        { role: 'assistant', content: final.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: weather!.id, content: '-20C' }, { type: 'tool_result', tool_use_id: time!.id, content: '09:00' }, { type: 'text', text: 'Summarise [sim:words=3]' }] },
      ],
    });
    expect(answer.content).toEqual([{ type: 'text', text: 'baikal is the' }]);
  });

  it('accepts image blocks (vision)', async () => {
    const client = anthropicClient(stack, familyB.key);
    const png = Buffer.from('89504e470d0a1a0a', 'hex').toString('base64');
    const message = await client.messages.create({
      model: 'lm-fable-5',
      max_tokens: 20,
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }, { type: 'text', text: 'What is it? [sim:words=2]' }] }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'baikal is' }]);
    expect(upstreamCall(stack.primary, message._request_id!).body.messages[0].content[0]).toMatchObject({ type: 'image', source: { type: 'base64', data: png } });
  });

  it('serves a Messages client from an OpenAI-compatible upstream (translated both ways, streaming and tools)', async () => {
    const rid = requestId('messages-translated');
    const client = anthropicClient(stack, familyB.key);
    const final = await client.messages
      .stream({ model: TRANSLATED_FAMILY_B, max_tokens: 100, system: 'Be brief.', tools, messages: [{ role: 'user', content: 'Check both [sim:tools=get_weather,get_time text-first cached=2]' }] }, { headers: { 'x-request-id': rid } })
      .finalMessage();
    expect(final.content).toMatchObject([
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', name: 'get_weather', input: IRKUTSK },
      { type: 'tool_use', name: 'get_time', input: IRKUTSK },
    ]);
    expect(final.stop_reason).toBe('tool_use');
    const upstream = upstreamCall(stack.primary, rid);
    expect(upstream.path).toBe('/v1/chat/completions');
    expect(upstream.body.messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
    expect(upstream.body.tools.map((t: any) => t.function.name)).toEqual(['get_weather', 'get_time']);
    expect(upstream.body.stream_options).toEqual({ include_usage: true });
    const event = await billedExactly(stack, rid, { input: '0.15', output: '0.75', cacheRead: '0.015', cacheWrite: '0.1875' });
    expect(event).toMatchObject({ cache_read_tokens: 2, cache_write_tokens: null });
    expect(final.usage).toMatchObject({ cache_read_input_tokens: 2, input_tokens: event.prompt_tokens - 2, output_tokens: event.completion_tokens });
  });

  it('serves a non-streamed Messages request from an OpenAI-compatible upstream with a tool call', async () => {
    const rid = requestId('messages-translated-json');
    const message = await anthropicClient(stack, familyB.key).messages.create(
      { model: TRANSLATED_FAMILY_B, max_tokens: 100, tools, messages: [{ role: 'user', content: 'Weather? [sim:tool=get_weather]' }] },
      { headers: { 'x-request-id': rid } },
    );
    expect(message.content).toMatchObject([{ type: 'tool_use', name: 'get_weather', input: IRKUTSK }]);
    expect(message.stop_reason).toBe('tool_use');
    const event = await billedExactly(stack, rid, { input: '0.15', output: '0.75', cacheRead: '0.015', cacheWrite: '0.1875' });
    expect(message.usage).toMatchObject({ input_tokens: event.prompt_tokens, output_tokens: event.completion_tokens });
  });

  it('refuses in the Messages error shape: key in the Bearer header 401, no version 400, scope 403, unknown model 404', async () => {
    const body: Anthropic.MessageCreateParamsNonStreaming = { model: 'lm-opus-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
    const bearer = await http(stack.url, 'POST', '/v1/messages', { token: familyB.key, headers: { 'anthropic-version': '2023-06-01' }, body });
    expect(bearer.status).toBe(401);
    expect(bearer.body).toMatchObject({ type: 'error', error: { type: 'authentication_error', code: 'wrong_auth_header' } });
    const noVersion = await http(stack.url, 'POST', '/v1/messages', { headers: { 'x-api-key': familyB.key }, body });
    expect(noVersion.status).toBe(400);
    expect(noVersion.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_version_header' });
    expect(noVersion.body.error.message).toContain('anthropic-version');

    const wrongFamily = anthropicClient(stack, familyA.key);
    const denied = await wrongFamily.messages.create(body).catch((e: unknown) => e as InstanceType<typeof Anthropic.APIError>);
    expect(denied).toBeInstanceOf(Anthropic.APIError);
    expect((denied as InstanceType<typeof Anthropic.APIError>).status).toBe(403);
    expect((denied as any).error).toMatchObject({ type: 'error', error: { type: 'permission_error', code: 'key_scope_denied' } });

    const unknown = await http(stack.url, 'POST', '/v1/messages', { headers: { 'x-api-key': familyB.key, 'anthropic-version': '2023-06-01' }, body: { ...body, model: 'no-such-model' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ type: 'not_found_error', code: 'model_not_found' });
    const invalid = await http(stack.url, 'POST', '/v1/messages', { headers: { 'x-api-key': familyB.key, 'anthropic-version': '2023-06-01' }, body: { model: 'lm-opus-5', messages: [] } });
    expect(invalid.status).toBe(422);
    expect(invalid.body.detail.map((d: any) => d.loc.join('.')).sort()).toEqual(['body.max_tokens', 'body.messages']);
  });
});

describe('the bridge (/v1/bridge) with the official OpenAI client', () => {
  it('lists only bridge-opus-5', async () => {
    const models = await openaiClient(stack, familyB.key, { base: '/v1/bridge' }).models.list();
    expect(models.data.map((m) => m.id)).toEqual(['bridge-opus-5']);
  });

  it('serves chat completions from the family-b Anthropic upstream: JSON, streaming, two tool calls', async () => {
    const bridge = openaiClient(stack, familyB.key, { base: '/v1/bridge' });
    const rid = requestId('bridge-json');
    const json = await bridge.chat.completions.create({ model: 'bridge-opus-5', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hello [sim:words=4 cached=2]' }] }, { headers: { 'x-request-id': rid } });
    expect(json.choices[0]!.message.content).toBe('baikal is the deepest');
    expect(json.model).toBe('bridge-opus-5');
    const upstream = upstreamCall(stack.primary, rid);
    expect(upstream.path).toBe('/v1/messages');
    expect(upstream.body.system).toBe('Be brief.');
    const event = await billedExactly(stack, rid, OPUS);
    expect(event).toMatchObject({ client_surface: 'bridge', endpoint: '/v1/bridge/chat/completions', cache_read_tokens: 2 });
    expect(json.usage).toMatchObject({ prompt_tokens: event.prompt_tokens, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 2 } });

    const stream = await bridge.chat.completions.create({ model: 'bridge-opus-5', messages: [{ role: 'user', content: 'both [sim:tools=get_weather,get_time]' }], tools: openAiTools, stream: true, stream_options: { include_usage: true } });
    const calls: { id: string; name: string; args: string }[] = [];
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        calls[delta.index] ??= { id: '', name: '', args: '' };
        calls[delta.index]!.id += delta.id ?? '';
        calls[delta.index]!.name += delta.function?.name ?? '';
        calls[delta.index]!.args += delta.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(calls.map((c) => c.name)).toEqual(['get_weather', 'get_time']);
    expect(calls.map((c) => JSON.parse(c.args))).toEqual([IRKUTSK, IRKUTSK]);
    expect(calls.every((c) => c.id.startsWith('toolu_'))).toBe(true);
    expect(finish).toBe('tool_calls');
    expect(usage!.completion_tokens).toBeGreaterThan(0);
  });

  it('refuses every other model and keys outside family b', async () => {
    const bridge = openaiClient(stack, familyB.key, { base: '/v1/bridge' });
    const other = await bridge.chat.completions.create({ model: 'lm-opus-5', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(other).toMatchObject({ status: 400, code: 'bridge_model_only' });
    const outsider = openaiClient(stack, familyA.key, { base: '/v1/bridge' });
    const denied = await outsider.chat.completions.create({ model: 'bridge-opus-5', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(denied).toMatchObject({ status: 403, code: 'key_scope_denied' });
    // And the bridge model is not reachable on the plain endpoints.
    const plain = await http(stack.url, 'POST', '/v1/messages', { headers: { 'x-api-key': familyB.key, 'anthropic-version': '2023-06-01' }, body: { model: 'bridge-opus-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] } });
    expect(plain.status).toBe(400);
    expect(plain.body.error.code).toBe('endpoint_not_supported_for_model');
  });
});

describe('POST /v1/responses with the official OpenAI client', () => {
  const LUNA = { input: '0.016', output: '0.04', cacheRead: '0.0016', cacheWrite: '0.018' };

  it('answers from an OpenAI-compatible upstream (translated to chat completions), JSON and streamed', async () => {
    const client = openaiClient(stack, familyA.key);
    const rid = requestId('responses');
    const response = await client.responses.create({ model: 'gen-5.6-luna', instructions: 'Be brief.', input: 'Tell me about Baikal [sim:words=5 cached=2]' }, { headers: { 'x-request-id': rid } });
    expect(response.output_text).toBe('baikal is the deepest lake');
    expect(response.status).toBe('completed');
    expect(response.model).toBe('gen-5.6-luna');
    const upstream = upstreamCall(stack.primary, rid);
    expect(upstream.path).toBe('/v1/chat/completions');
    expect(upstream.body.messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
    const event = await billedExactly(stack, rid, LUNA);
    expect(event).toMatchObject({ endpoint: '/v1/responses', cache_read_tokens: 2 });
    expect(response.usage).toMatchObject({ input_tokens: event.prompt_tokens, output_tokens: 5, input_tokens_details: { cached_tokens: 2 } });

    const streamed = client.responses.stream({ model: 'gen-5.6-luna', input: 'Stream it [sim:words=7]' });
    let deltas = '';
    streamed.on('response.output_text.delta', (e) => (deltas += e.delta));
    const final = await streamed.finalResponse();
    expect(deltas).toBe('baikal is the deepest lake on earth');
    expect(final.output_text).toBe(deltas);
    expect(final.usage!.output_tokens).toBe(7);
  });

  it('passes function tools and their outputs both ways, streaming two calls', async () => {
    const client = openaiClient(stack, familyA.key);
    const responseTools: OpenAI.Responses.FunctionTool[] = tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.input_schema, strict: false }));
    const stream = client.responses.stream({ model: 'gen-5.6-luna', tools: responseTools, input: 'Both please [sim:tools=get_weather,get_time]' });
    const final = await stream.finalResponse();
    const calls = final.output.flatMap((o) => (o.type === 'function_call' ? [o] : []));
    expect(calls.map((c) => c.name)).toEqual(['get_weather', 'get_time']);
    expect(calls.map((c) => JSON.parse(c.arguments))).toEqual([IRKUTSK, IRKUTSK]);

    const followUp = await client.responses.create({
      model: 'gen-5.6-luna',
      tools: responseTools,
      input: [
        { role: 'user', content: 'Both please' },
        ...calls.map((c) => ({ type: 'function_call' as const, call_id: c.call_id, name: c.name, arguments: c.arguments })),
        ...calls.map((c) => ({ type: 'function_call_output' as const, call_id: c.call_id, output: '-20C' })),
        { role: 'user', content: 'Summarise [sim:words=2]' },
      ],
    });
    expect(followUp.output_text).toBe('baikal is');
    const sent = upstreamCall(stack.primary, followUp._request_id!).body.messages;
    expect(sent.filter((m: any) => m.role === 'tool').map((m: any) => m.tool_call_id)).toEqual(calls.map((c) => c.call_id));
    expect(sent.find((m: any) => m.role === 'assistant').tool_calls).toHaveLength(2);
  });

  it('serves the bridge Responses endpoint from the Anthropic upstream, with tool calls', async () => {
    const bridge = openaiClient(stack, familyB.key, { base: '/v1/bridge' });
    const rid = requestId('bridge-responses');
    const final = await bridge.responses
      .stream({ model: 'bridge-opus-5', input: 'Weather? [sim:tool=get_weather text-first cached=1 cache-write=4]', tools: [{ type: 'function', name: 'get_weather', parameters: tools[0]!.input_schema, strict: false }] }, { headers: { 'x-request-id': rid } })
      .finalResponse();
    expect(final.output.map((o) => o.type)).toEqual(['message', 'function_call']);
    expect(final.output_text).toBe('Let me check.');
    expect(upstreamCall(stack.primary, rid).path).toBe('/v1/messages');
    const event = await billedExactly(stack, rid, OPUS);
    expect(event).toMatchObject({ endpoint: '/v1/bridge/responses', cache_read_tokens: 1, cache_write_tokens: 4 });
    expect(final.usage).toMatchObject({ input_tokens: event.prompt_tokens, input_tokens_details: { cached_tokens: 1 } });

    const jsonId = requestId('bridge-responses-json');
    const json = await bridge.responses.create({ model: 'bridge-opus-5', instructions: 'Be brief.', input: 'Hello [sim:words=3]' }, withId(jsonId));
    expect(json.output_text).toBe('baikal is the');
    expect(upstreamCall(stack.primary, jsonId).body.system).toBe('Be brief.');
  });
});

describe('POST /v1/images/generations with the official OpenAI client', () => {
  it('returns one inline image, billed per generation at the catalog price', async () => {
    const rid = requestId('image');
    const image = await openaiClient(stack, familyA.key).images.generate({ model: 'img-1.5', prompt: 'Lake Baikal in winter', size: '1024x1024', quality: 'high' }, { headers: { 'x-request-id': rid } });
    expect(image.data).toHaveLength(1);
    const png = Buffer.from(image.data![0]!.b64_json!, 'base64');
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    const upstream = upstreamCall(stack.primary, rid);
    expect(upstream.path).toBe('/v1/images/generations');
    expect(upstream.body).toMatchObject({ model: `${stack.canaries.upstreamModelPrefix}img-1.5`, n: 1, size: '1024x1024', quality: 'high' });
    const event = await usageEventOf(stack, rid);
    expect(event).toMatchObject({ status: 'success', endpoint: '/v1/images/generations', model: 'img-1.5', prompt_tokens: null });
    expect(new Decimal(event.amount_usd).equals('0.02')).toBe(true);
    expect(new Decimal(event.public_request_usd_per_generation).equals('0.02')).toBe(true);
    const balance = await ledgerBalance(stack, familyA.userId);
    expect(balance.ledger).toBe(balance.balance);
  });

  it('refuses more than one image, bad sizes and qualities (422), text models (400), and charges nothing for a failed generation', async () => {
    const client = openaiClient(stack, familyA.key);
    const fail = (params: OpenAI.ImageGenerateParams) => client.images.generate(params).catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(await fail({ model: 'img-1.5', prompt: 'two lakes', n: 2 })).toMatchObject({ status: 422 });
    const badSize = await http(stack.url, 'POST', '/v1/images/generations', { token: familyA.key, body: { model: 'img-1.5', prompt: 'x', size: 'huge', quality: 'ultra' } });
    expect(badSize.status).toBe(422);
    expect(badSize.body.detail.map((d: any) => d.loc.join('.')).sort()).toEqual(['body.quality', 'body.size']);
    expect(await fail({ model: 'gen-5.6-luna', prompt: 'a lake' })).toMatchObject({ status: 400, code: 'endpoint_not_supported_for_model' });
    const rid = requestId('image-fail');
    expect(await client.images.generate({ model: 'img-1.5', prompt: 'a lake [sim:status=500]' }, { headers: { 'x-request-id': rid } }).catch((e: unknown) => e)).toMatchObject({ status: 502 });
    const event = await usageEventOf(stack, rid);
    expect(event).toMatchObject({ status: 'error', error_code: 'upstream_error' });
    expect(new Decimal(event.amount_usd).isZero()).toBe(true);
  });
});

describe('nothing private leaks through any format', () => {
  it('no canary in any response or stream of this file', async () => {
    // An upstream error through each format, carrying the canary text.
    await anthropicClient(stack, familyB.key).messages.create({ model: 'lm-opus-5', max_tokens: 5, messages: [{ role: 'user', content: 'x [sim:status=500]' }] }).catch(() => undefined);
    await openaiClient(stack, familyB.key, { base: '/v1/bridge' }).chat.completions.create({ model: 'bridge-opus-5', messages: [{ role: 'user', content: 'x [sim:status=429]' }] }).catch(() => undefined);
    const everything = stack.received.join('\n');
    expect(stack.received.length).toBeGreaterThan(15);
    for (const canary of stack.canaries.all()) expect(everything, canary).not.toContain(canary);
    for (const model of ANTHROPIC_SERVED) expect(everything).not.toContain(`${stack.canaries.upstreamModelPrefix}${model}`);
  });
});
