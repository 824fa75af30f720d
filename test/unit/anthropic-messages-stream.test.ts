import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CanonicalEvent } from '../../src/inference/canonical.js';
import { errorBody } from '../../src/inference/formats/anthropic-messages/errors.js';
import { MessagesStreamEncoder } from '../../src/inference/formats/anthropic-messages/stream.js';
import { SseSplitter } from '../../src/inference/sse.js';
import { decode, encode, fixture, TOOL_STREAM_EVENTS, TOOL_USAGE, who } from '../helpers/anthropic-messages.js';
import { startCannedServer, type CannedServer } from '../helpers/canned-server.js';

/** Messages streams: an upstream's SSE decoded into canonical events, and canonical events encoded for the client. */

describe('Anthropic Messages upstream answers', () => {
  it('decodes a stream: blocks to parts, input fragments to argument deltas, one usage from start and delta', () => {
    const { events, decoder } = decode(fixture('stream-tool-use.sse'));
    expect(events).toEqual(TOOL_STREAM_EVENTS);
    expect(decoder.done).toBe(true);
    expect(decoder.error).toBeNull();
  });

  it('reads thinking as a reasoning part, skips server-tool blocks, takes input counts repeated in message_delta, and gives argument-less tools {}', () => {
    const frames = [
      { type: 'message_start', message: { usage: { input_tokens: 10, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig-1' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'server_tool_use', id: 's1', name: 'web_search', input: {} } },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 't1', name: 'now', input: {} } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '' } },
      { type: 'content_block_stop', index: 2 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { input_tokens: 12, cache_read_input_tokens: 4, output_tokens: 7 } },
      { type: 'message_stop' },
    ];
    const { events, decoder } = decode(frames.map((f) => `event: ${f.type}\ndata: ${JSON.stringify(f)}\n\n`).join(''));
    expect(events).toEqual<CanonicalEvent[]>([
      { type: 'usage_start', usage: { inputTokens: 10, outputTokens: 0, cacheReadTokens: null, cacheWriteTokens: null, reasoningTokens: null } },
      { type: 'reasoning_delta', index: 0, text: '' },
      { type: 'reasoning_delta', index: 0, text: 'hmm' },
      { type: 'reasoning_opaque', index: 0, opaque: { family: 'anthropic', signature: 'sig-1' } },
      { type: 'part_end', index: 0 },
      { type: 'tool_call_start', index: 1, id: 't1', name: 'now' },
      { type: 'tool_call_delta', index: 1, argumentsDelta: '{}' },
      { type: 'part_end', index: 1 },
      { type: 'stop', reason: 'tool_use' },
      { type: 'usage', usage: { inputTokens: 16, outputTokens: 7, cacheReadTokens: 4, cacheWriteTokens: null, reasoningTokens: null } },
    ]);
    expect(decoder.done).toBe(true);
  });

  it('keeps an in-band error for the operator and is not done', () => {
    const { events, decoder } = decode(
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}\n\n' +
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
    );
    // Input usage from message_start is shown early, never billed: no `usage` event.
    expect(events.map((e) => e.type)).toEqual(['usage_start']);
    expect(decoder.error).toBe('overloaded_error: Overloaded');
    expect(decoder.done).toBe(false);
  });
});

describe('Anthropic Messages responses and streams, read by the official SDK', () => {
  let server: CannedServer;
  let client: Anthropic;

  beforeAll(async () => {
    // Byte-sized pieces, as a network might deliver them.
    server = await startCannedServer({ ssePieceBytes: 97 });
    client = new Anthropic({ apiKey: 'x', baseURL: server.url, maxRetries: 0, timeout: 5000 });
  });
  afterAll(() => server.close());

  const params = { model: 'gen-5.6-luna', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'Weather in Irkutsk and Ulan-Ude?' }] };
  it('streams frames the SDK assembles: text events, tool inputs from fragments, usage with cache buckets, stop reason', async () => {
    server.answer({ sse: encode(TOOL_STREAM_EVENTS, TOOL_USAGE) });
    const stream = client.messages.stream(params);
    const texts: string[] = [];
    const types: string[] = [];
    stream.on('text', (delta) => texts.push(delta));
    stream.on('streamEvent', (event) => types.push(event.type));
    const message = await stream.finalMessage();
    expect(server.received.at(-1)!.body).toMatchObject({ stream: true });
    expect(texts).toEqual(["I'll check", ' the weather in', ' both cities.']);
    expect(types.filter((t, i) => t !== types[i - 1])).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(message).toMatchObject({
      id: 'msg_ours123',
      model: 'gen-5.6-luna',
      content: [
        { type: 'text', text: "I'll check the weather in both cities." },
        { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { city: 'Irkutsk', unit: 'celsius' } },
        { type: 'tool_use', id: 'toolu_01B7kTQmrsVc4Wf2nZb8hX3p', name: 'get_weather', input: { city: 'Ulan-Ude', unit: 'celsius' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
    });
    expect(message.usage).toEqual({ input_tokens: 37, output_tokens: 89, cache_read_input_tokens: 2048, cache_creation_input_tokens: 512 });
  });

  it('streams parts an upstream only ends at the finish (OpenAI-shaped) one block at a time; unreported cache stays null', async () => {
    const events: CanonicalEvent[] = [
      { type: 'text_delta', index: 0, text: 'Calling.' },
      { type: 'tool_call_start', index: 1, id: 'call_a', name: 'f' },
      { type: 'tool_call_delta', index: 1, argumentsDelta: '{"x":' },
      { type: 'tool_call_start', index: 2, id: 'call_b', name: 'g' },
      { type: 'tool_call_delta', index: 1, argumentsDelta: '1}' },
      { type: 'tool_call_delta', index: 2, argumentsDelta: '{}' },
      { type: 'part_end', index: 0 },
      { type: 'part_end', index: 1 },
      { type: 'part_end', index: 2 },
      { type: 'stop', reason: 'tool_use' },
    ];
    const sse = encode(events, { inputTokens: 20, outputTokens: 6, cacheReadTokens: null, cacheWriteTokens: null, reasoningTokens: null });
    const frames = new SseSplitter().push(Buffer.from(sse)).map((e) => JSON.parse(e.data) as { type: string; index?: number });
    expect(frames.filter((f) => f.type === 'content_block_start' || f.type === 'content_block_stop').map((f) => `${f.type}:${f.index}`)).toEqual([
      'content_block_start:0',
      'content_block_stop:0',
      'content_block_start:1',
      'content_block_stop:1',
      'content_block_start:2',
      'content_block_stop:2',
    ]);
    server.answer({ sse });
    const message = await client.messages.stream(params).finalMessage();
    expect(message.content).toMatchObject([
      { type: 'text', text: 'Calling.' },
      { type: 'tool_use', id: 'call_a', name: 'f', input: { x: 1 } },
      { type: 'tool_use', id: 'call_b', name: 'g', input: {} },
    ]);
    expect(message.usage).toEqual({ input_tokens: 20, output_tokens: 6, cache_read_input_tokens: null, cache_creation_input_tokens: null });
    expect(message.stop_reason).toBe('tool_use');
  });

  it('ends a failed stream with an error event the SDK raises', async () => {
    const encoder = new MessagesStreamEncoder(who);
    server.answer({ sse: encoder.start() + encoder.event({ type: 'text_delta', index: 0, text: 'Hal' }) + encoder.fail('The upstream stream was interrupted', 'stream_interrupted') });
    const stream = client.messages.stream(params);
    const texts: string[] = [];
    stream.on('text', (delta) => texts.push(delta));
    const error = await stream.finalMessage().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).error).toEqual(errorBody('api_error', 'The upstream stream was interrupted'));
    expect(texts).toEqual(['Hal']);
  });
});

describe('Anthropic Messages round trip', () => {
  it('decoding the encoder output gives back the canonical events', () => {
    const sse = encode(TOOL_STREAM_EVENTS, TOOL_USAGE);
    expect(sse.startsWith('event: message_start\ndata: {"type":"message_start",')).toBe(true);
    expect(sse).toContain('event: ping\ndata: {"type":"ping"}\n\n');
    const { events, decoder } = decode(sse);
    expect(events).toEqual(TOOL_STREAM_EVENTS);
    expect(decoder.done).toBe(true);
  });
});
