import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import type { Response as SdkResponse } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CanonicalEvent, CanonicalRequest, CanonicalResponse, CanonicalUsage } from '../../src/inference/canonical.js';
import { renderResponse, type ResponsesResponse } from '../../src/inference/formats/openai-responses/answer.js';
import { parseResponses, parseResponsesRequest } from '../../src/inference/formats/openai-responses/request.js';
import { ResponsesStreamEncoder } from '../../src/inference/formats/openai-responses/stream.js';
import { DomainError } from '../../src/shared/errors.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/openai-responses/${name}`, import.meta.url), 'utf8');
const json = <T>(name: string): T => JSON.parse(fixture(name)) as T;
const who = { id: 'ours1', model: 'gen-5.6-luna', created: 1_795_325_000 };

// Compile-time faithfulness: our response object has every field the SDK's `Response` type requires
// (`output_text` is computed by the SDK; `error.code` is our own vocabulary, wider than OpenAI's).
type WireResponse = Omit<SdkResponse, 'output_text' | 'error'>;
const _typeCheck = (r: ResponsesResponse): WireResponse => r;
void _typeCheck;

function issuesOf(body: unknown): { loc: string; msg: string }[] {
  try {
    parseResponsesRequest(body);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('validation_failed');
    return (error as DomainError).issues.map((i) => ({ loc: i.loc.join('.'), msg: i.msg }));
  }
  return expect.unreachable('the request was accepted');
}

/** Runs a canonical event sequence through a fresh encoder, as the inference service would. */
function encode(events: CanonicalEvent[], billed: CanonicalUsage | null, request?: CanonicalRequest): string {
  const encoder = new ResponsesStreamEncoder(who, request);
  return encoder.start() + events.map((e) => encoder.event(e)).join('') + encoder.finish(billed);
}

/** The frames of an SSE text, parsed; also checks the framing (event name matches the type). */
function framesOf(sse: string): { type: string; sequence_number: number; [key: string]: any }[] {
  expect(sse.endsWith('\n\n')).toBe(true);
  return sse
    .slice(0, -2)
    .split('\n\n')
    .map((block) => {
      const [eventLine, dataLine, ...rest] = block.split('\n');
      expect(rest).toEqual([]);
      const data = JSON.parse(dataLine!.replace(/^data: /, ''));
      expect(eventLine).toBe(`event: ${data.type}`);
      return data;
    });
}

describe('Responses requests', () => {
  it('reads a string input as one user message, with no settings', () => {
    expect(parseResponsesRequest({ model: 'gen-5.6-luna', input: 'Hello, Baikal' })).toEqual({
      model: 'gen-5.6-luna',
      system: null,
      messages: [{ role: 'user', parts: [{ type: 'text', text: 'Hello, Baikal' }] }],
      tools: [],
      toolChoice: null,
      maxOutputTokens: null,
      temperature: null,
      topP: null,
      stop: [],
      stream: false,
      fieldNames: { responseFormat: 'text.format', toolChoice: 'tool_choice', topK: 'top_k', temperature: 'temperature' },
      responseFormat: null,
      reasoning: null,
      thinking: null,
      parallelToolCalls: null,
      user: null,
      metadata: null,
      serviceTier: null,
      topK: null,
      promptCacheKey: null,
      verbosity: null,
      untranslatable: [],
    });
  });

  it('translates a conversation: instructions and leading developer items join, a later system item stays in place, calls group into one turn, outputs into one', () => {
    const request = parseResponsesRequest(json('request-conversation.json'));
    expect(request.system).toBe('You are a terse weather assistant.\n\nAnswer in Celsius.');
    expect(request.messages).toEqual([
      {
        role: 'user',
        parts: [
          { type: 'text', text: 'What is the weather in these two places?' },
          { type: 'image', image: { kind: 'url', url: 'https://example.com/irkutsk.jpg' } },
          { type: 'image', image: { kind: 'url', url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
      {
        role: 'assistant',
        parts: [
          { type: 'text', text: 'Let me look both up.' },
          { type: 'tool_call', id: 'call_a', name: 'get_weather', arguments: '{"city":"Irkutsk"}' },
          { type: 'tool_call', id: 'call_b', name: 'get_weather', arguments: '{"city":"Listvyanka"}' },
        ],
      },
      {
        role: 'user',
        parts: [
          { type: 'tool_result', toolCallId: 'call_a', content: '-12 and clear', isError: false },
          { type: 'tool_result', toolCallId: 'call_b', content: '-15, windy', isError: false },
        ],
      },
      { role: 'system', parts: [{ type: 'text', text: 'Mention the lake.' }] },
      { role: 'user', parts: [{ type: 'text', text: 'And tomorrow?' }] },
    ]);
    expect(request.tools).toEqual([
      { name: 'get_weather', description: 'Current weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: true },
      { name: 'now', description: null, parameters: { type: 'object', properties: {} }, strict: false },
    ]);
    expect(request).toMatchObject({ model: 'gen-5.6-luna', toolChoice: { name: 'get_weather' }, maxOutputTokens: 512, temperature: 0.2, topP: 0.9, stop: [], stream: true });
  });

  it('keeps separate function_call runs apart and starts a new assistant turn after tool outputs', () => {
    const request = parseResponsesRequest({
      model: 'm',
      input: [
        { role: 'user', content: 'go' },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'one' },
        { type: 'function_call', call_id: 'c2', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c2', output: 'two' },
      ],
      tool_choice: 'required',
    });
    expect(request.messages.map((m) => [m.role, m.parts.map((p) => p.type).join('+')])).toEqual([
      ['user', 'text'],
      ['assistant', 'tool_call'],
      ['user', 'tool_result'],
      ['assistant', 'tool_call'],
      ['user', 'tool_result'],
    ]);
    expect(request.toolChoice).toBe('required');
  });

  it('refuses malformed requests with every problem located', () => {
    expect(issuesOf(json('request-invalid.json'))).toEqual([
      { loc: 'model', msg: expect.stringContaining('>=1') },
      { loc: 'input.0.role', msg: expect.stringContaining('"user"') },
      { loc: 'input.3.call_id', msg: 'Field required' },
      { loc: 'input.5.content.0.type', msg: 'developer messages carry text only' },
      { loc: 'tools.1.name', msg: 'Function names are 1-64 letters, digits, "_" or "-"' },
      { loc: 'max_output_tokens', msg: expect.any(String) },
      { loc: 'temperature', msg: expect.any(String) },
      { loc: 'top_p', msg: expect.any(String) },
      { loc: 'stream', msg: 'Input should be a valid boolean' },
    ]);
  });

  it('accepts what only a native upstream can serve, listing each for refusal when translated', () => {
    const body: Record<string, unknown> = { ...json<Record<string, unknown>>('request-invalid.json'), model: 'm', temperature: 1, top_p: 1, max_output_tokens: 5, stream: true };
    body.input = (body.input as object[]).filter((_, i) => i === 1 || i === 2 || i === 4);
    body.tools = [{ type: 'web_search' }];
    const parsed = parseResponses(body);
    expect(parsed.withheldTools).toEqual(['web_search']);
    expect(parsed.canonical.tools).toEqual([]);
    expect(parsed.canonical.toolChoice).toEqual({ hosted: 'file_search' });
    expect(parsed.canonical.untranslatable?.map((i) => i.loc.join('.'))).toEqual(['input.0.content.0.file_id', 'input.0.content.1.type']);
    // The reasoning item (no text, no opaque data) and the tool output with an image are read.
    expect(parsed.canonical.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(parsed.canonical.messages[2]!.parts).toEqual([{ type: 'tool_result', toolCallId: 'call_a', content: '', isError: false, images: [{ kind: 'url', url: 'https://example.com/x.png' }] }]);
  });

  it('requires a model and an input, and something besides system text to answer', () => {
    expect(issuesOf({})).toEqual([
      { loc: 'model', msg: 'Field required' },
      { loc: 'input', msg: 'Field required' },
    ]);
    expect(issuesOf({ model: 'm', input: [] })).toEqual([{ loc: 'input', msg: 'At least one input item is required' }]);
    expect(issuesOf({ model: 'm', input: 5 })).toEqual([{ loc: 'input', msg: 'Input should be a valid array' }]);
    expect(issuesOf({ model: 'm', input: [{ role: 'system', content: 'be brief' }] })).toEqual([
      { loc: 'input', msg: 'At least one user, assistant or function call item is required' },
    ]);
    expect(issuesOf({ model: 'm', input: 'hi', conversation: 'conv_1' })).toEqual([{ loc: 'conversation', msg: expect.stringContaining('conversation is not supported') }]);
  });

  it('ignores store and unknown fields, and accepts a null previous_response_id', () => {
    const request = parseResponsesRequest({ model: 'm', input: 'hi', store: true, previous_response_id: null, reasoning: { effort: 'low' }, brand_new_field: 1 });
    expect(request.messages).toHaveLength(1);
  });
});

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

describe('Responses stream encoding', () => {
  it('numbers every event and opens with created + in_progress', () => {
    const frames = framesOf(encode([], null));
    expect(frames.map((f) => f.type)).toEqual(['response.created', 'response.in_progress', 'response.completed']);
    expect(frames.map((f) => f.sequence_number)).toEqual([0, 1, 2]);
    expect(frames[0]!.response).toMatchObject({ id: 'resp_ours1', status: 'in_progress', output: [], model: 'gen-5.6-luna' });
  });

  it('streams text, then two interleaved tool calls, as the recorded SSE', () => {
    const events = json<CanonicalEvent[]>('stream-tool-calls.events.json');
    const sse = encode(events, null);
    expect(sse).toBe(fixture('stream-tool-calls.sse'));
    const frames = framesOf(sse);
    expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
    const completed = frames.at(-1)!;
    expect(completed.type).toBe('response.completed');
    // The final object is what renderResponse makes of the same parts.
    const reported = events.flatMap((e) => (e.type === 'usage' ? [e.usage] : []))[0]!;
    expect(completed.response).toEqual(renderResponse({ ...json<CanonicalResponse>('canonical-response-tool-calls.json'), usage: reported }, who));
  });

  it('bills the usage finish() is given over what the upstream reported', () => {
    const billed = { inputTokens: 1, outputTokens: 2, cacheReadTokens: null, cacheWriteTokens: 7, reasoningTokens: null };
    const completed = framesOf(encode(json('stream-tool-calls.events.json'), billed)).at(-1)!;
    expect(completed.response.usage).toEqual({ input_tokens: 1, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 7 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 3 });
  });

  it('closes a part the upstream never ended, and marks a token-limit stop incomplete', () => {
    const frames = framesOf(encode(json('stream-cut.events.json'), null));
    expect(frames.map((f) => f.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.incomplete',
    ]);
    expect(frames[8]!.item).toMatchObject({ status: 'incomplete', content: [{ text: 'The lake is the deepest in' }] });
    expect(frames[9]!.response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, usage: { input_tokens: 9, output_tokens: 5, total_tokens: 14 } });
  });

  it('holds an ended part open until the next output, so stray deltas for it are dropped', () => {
    const encoder = new ResponsesStreamEncoder(who);
    encoder.start();
    encoder.event({ type: 'text_delta', index: 0, text: 'a' });
    expect(encoder.event({ type: 'part_end', index: 0 })).toBe('');
    expect(encoder.event({ type: 'text_delta', index: 0, text: 'late' })).toBe('');
    const next = framesOf(encoder.event({ type: 'tool_call_start', index: 1, id: 'c', name: 'f' }));
    expect(next.map((f) => f.type)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.output_item.added']);
    expect(next[0]!.text).toBe('a');
  });

  it('fails in-band with our code and message, keeping what was produced', () => {
    const encoder = new ResponsesStreamEncoder(who);
    encoder.start();
    encoder.event({ type: 'text_delta', index: 0, text: 'partial' });
    const [failed] = framesOf(encoder.fail('The model route failed', 'bad_gateway'));
    expect(failed).toMatchObject({
      type: 'response.failed',
      sequence_number: 5,
      response: { status: 'failed', error: { code: 'bad_gateway', message: 'The model route failed' }, output: [{ status: 'incomplete', content: [{ text: 'partial' }] }] },
    });
  });
});

describe('the official openai client against our output', () => {
  let server: Server;
  let client: OpenAI;
  /** What the next request gets, and the bodies requests arrived with. */
  let reply: { contentType: string; body: string } = { contentType: 'application/json', body: '{}' };
  const received: any[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push({ path: req.url, body: JSON.parse(body) });
        res.writeHead(200, { 'content-type': reply.contentType });
        res.end(reply.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = new OpenAI({ apiKey: 'x', baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, maxRetries: 0 });
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const streamed = () => {
    reply = { contentType: 'text/event-stream', body: encode(json('stream-tool-calls.events.json'), null) };
  };
  const expectToolCallResponse = (response: { output_text: string; output: unknown[]; usage?: unknown; status?: string }) => {
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe('Checking both cities.');
    const calls = response.output.filter((item: any) => item.type === 'function_call');
    expect(calls).toMatchObject([
      { call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Irkutsk"}' },
      { call_id: 'call_b', name: 'get_weather', arguments: '{"city":"Listvyanka"}' },
    ]);
    expect(response.usage).toEqual({ input_tokens: 120, input_tokens_details: { cached_tokens: 100, cache_write_tokens: 0 }, output_tokens: 40, output_tokens_details: { reasoning_tokens: 8 }, total_tokens: 160 });
  };

  it('responses.create (non-streaming) parses renderResponse output, output_text included', async () => {
    const rendered = renderResponse({ parts: [{ type: 'text', text: 'Hi ' }, { type: 'text', text: 'there' }], stopReason: 'end', usage: null }, who);
    reply = { contentType: 'application/json', body: JSON.stringify(rendered) };
    const response = await client.responses.create({ model: 'gen-5.6-luna', input: 'hello' });
    expect(received.at(-1)).toEqual({ path: '/v1/responses', body: { model: 'gen-5.6-luna', input: 'hello' } });
    expect(response.output_text).toBe('Hi there');
    expect(response.id).toBe('resp_ours1');
  });

  it('responses.create({stream: true}) yields every event in order, and the completed response', async () => {
    streamed();
    const stream = await client.responses.create({ model: 'gen-5.6-luna', input: 'weather?', stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(received.at(-1)!.body.stream).toBe(true);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const text = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : [])).join('');
    expect(text).toBe('Checking both cities.');
    const args = new Map<number, string>();
    for (const e of events) if (e.type === 'response.function_call_arguments.delta') args.set(e.output_index, (args.get(e.output_index) ?? '') + e.delta);
    expect([...args]).toEqual([
      [1, '{"city":"Irkutsk"}'],
      [2, '{"city":"Listvyanka"}'],
    ]);
    const done = events.filter((e) => e.type === 'response.function_call_arguments.done').map((e) => e.arguments);
    expect(done).toEqual(['{"city":"Irkutsk"}', '{"city":"Listvyanka"}']);
    const last = events.at(-1)!;
    expect(last.type).toBe('response.completed');
    if (last.type === 'response.completed') expectToolCallResponse({ ...last.response, output_text: 'Checking both cities.' });
  });

  it('responses.stream() accumulates the same response, and finalResponse() returns it', async () => {
    streamed();
    const stream = client.responses.stream({ model: 'gen-5.6-luna', input: 'weather?' });
    const snapshots: string[] = [];
    stream.on('response.output_text.delta', (e) => snapshots.push(e.snapshot));
    const args: string[] = [];
    stream.on('response.function_call_arguments.delta', (e) => args.push(e.snapshot));
    const response = await stream.finalResponse();
    expect(snapshots).toEqual(['Checking ', 'Checking both cities.']);
    expect(args).toEqual(['{"city":', '{"city":"List', '{"city":"Irkutsk"}', '{"city":"Listvyanka"}']);
    expectToolCallResponse(response);
    expect(response.output.map((item) => item.id)).toEqual(['msg_ours1_0', 'fc_ours1_1', 'fc_ours1_2']);
  });

  it('responses.stream() ends cleanly on an incomplete response', async () => {
    reply = { contentType: 'text/event-stream', body: encode(json('stream-cut.events.json'), null) };
    const response = await client.responses.stream({ model: 'gen-5.6-luna', input: 'lake?' }).finalResponse();
    expect(response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output_text: 'The lake is the deepest in' });
  });

  it('responses.stream() surfaces an in-band failure', async () => {
    const encoder = new ResponsesStreamEncoder(who);
    reply = { contentType: 'text/event-stream', body: encoder.start() + encoder.event({ type: 'text_delta', index: 0, text: 'par' }) + encoder.fail('The model route failed', 'bad_gateway') };
    const response = await client.responses.stream({ model: 'gen-5.6-luna', input: 'x' }).finalResponse();
    expect(response).toMatchObject({ status: 'failed', error: { code: 'bad_gateway', message: 'The model route failed' }, output_text: 'par' });
  });
});
