import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CanonicalEvent, CanonicalRequest, CanonicalResponse, CanonicalUsage } from '../../src/inference/canonical.js';
import { renderResponse } from '../../src/inference/formats/openai-responses/answer.js';
import { ResponsesStreamEncoder } from '../../src/inference/formats/openai-responses/stream.js';
import { startCannedServer, type CannedServer } from '../helpers/canned-server.js';
import { fixture, json, who } from '../helpers/openai-responses.js';

/** Responses streams: canonical events encoded as Responses SSE, as the `openai` SDK's accumulator checks them. */

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
  let server: CannedServer;
  let client: OpenAI;

  beforeAll(async () => {
    server = await startCannedServer();
    client = new OpenAI({ apiKey: 'x', baseURL: `${server.url}/v1`, maxRetries: 0 });
  });
  afterAll(() => server.close());

  const streamed = () => {
    server.answer({ sse: encode(json('stream-tool-calls.events.json'), null) });
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

  it('responses.create({stream: true}) yields every event in order, and the completed response', async () => {
    streamed();
    const stream = await client.responses.create({ model: 'gen-5.6-luna', input: 'weather?', stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(server.received.at(-1)!.body.stream).toBe(true);
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
    server.answer({ sse: encode(json('stream-cut.events.json'), null) });
    const response = await client.responses.stream({ model: 'gen-5.6-luna', input: 'lake?' }).finalResponse();
    expect(response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output_text: 'The lake is the deepest in' });
  });

  it('responses.stream() surfaces an in-band failure', async () => {
    const encoder = new ResponsesStreamEncoder(who);
    server.answer({ sse: encoder.start() + encoder.event({ type: 'text_delta', index: 0, text: 'par' }) + encoder.fail('The model route failed', 'bad_gateway') });
    const response = await client.responses.stream({ model: 'gen-5.6-luna', input: 'x' }).finalResponse();
    expect(response).toMatchObject({ status: 'failed', error: { code: 'bad_gateway', message: 'The model route failed' }, output_text: 'par' });
  });
});
