import Anthropic from '@anthropic-ai/sdk';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CanonicalEvent, CanonicalRequest, CanonicalResponse, CanonicalUsage } from '../../src/inference/canonical.js';
import { fromAnthropicResponse } from '../../src/inference/providers/anthropic/answer.js';
import { toAnthropicRequest } from '../../src/inference/providers/anthropic/request.js';
import { AnthropicStreamDecoder } from '../../src/inference/providers/anthropic/stream.js';
import { SseSplitter } from '../../src/inference/sse.js';
import { renderMessage } from '../../src/inference/formats/anthropic-messages/answer.js';
import { errorBody } from '../../src/inference/formats/anthropic-messages/errors.js';
import { parseMessagesRequest } from '../../src/inference/formats/anthropic-messages/request.js';
import { MessagesStreamEncoder } from '../../src/inference/formats/anthropic-messages/stream.js';
import { DomainError, type ValidationIssue } from '../../src/shared/errors.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/anthropic-messages/${name}`, import.meta.url), 'utf8');
const who = { id: 'ours123', model: 'gen-5.6-luna', created: 1 };

function decode(sse: string): { events: CanonicalEvent[]; decoder: AnthropicStreamDecoder } {
  const decoder = new AnthropicStreamDecoder();
  const events = new SseSplitter().push(Buffer.from(sse)).flatMap((e) => decoder.push(e));
  return { events, decoder };
}

/** Every frame an encoder writes for these canonical events, as one SSE text. */
function encode(events: CanonicalEvent[], usage: CanonicalUsage | null): string {
  const encoder = new MessagesStreamEncoder(who);
  return encoder.start() + events.map((e) => encoder.event(e)).join('') + encoder.finish(usage);
}

function issuesOf(body: unknown): ValidationIssue[] {
  try {
    parseMessagesRequest(body);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('validation_failed');
    return (error as DomainError).issues;
  }
  throw new Error('expected a validation error');
}

const TOOL_USAGE: CanonicalUsage = { inputTokens: 37 + 2048 + 512, outputTokens: 89, cacheReadTokens: 2048, cacheWriteTokens: 512, reasoningTokens: null };

/** What the tool-use stream fixture says, in canonical events. */
/** The input usage message_start reports in stream-tool-use.sse: 37 uncached + 2,048 read + 512 written. */
const TOOL_START_USAGE = { inputTokens: 2597, outputTokens: 0, cacheReadTokens: 2048, cacheWriteTokens: 512, reasoningTokens: null };

const TOOL_STREAM_EVENTS: CanonicalEvent[] = [
  { type: 'usage_start', usage: TOOL_START_USAGE },
  { type: 'text_delta', index: 0, text: "I'll check" },
  { type: 'text_delta', index: 0, text: ' the weather in' },
  { type: 'text_delta', index: 0, text: ' both cities.' },
  { type: 'part_end', index: 0 },
  { type: 'tool_call_start', index: 1, id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather' },
  { type: 'tool_call_delta', index: 1, argumentsDelta: '{"city": "Ir' },
  { type: 'tool_call_delta', index: 1, argumentsDelta: 'kutsk", "u' },
  { type: 'tool_call_delta', index: 1, argumentsDelta: 'nit": "celsius"}' },
  { type: 'part_end', index: 1 },
  { type: 'tool_call_start', index: 2, id: 'toolu_01B7kTQmrsVc4Wf2nZb8hX3p', name: 'get_weather' },
  { type: 'tool_call_delta', index: 2, argumentsDelta: '{"city": ' },
  { type: 'tool_call_delta', index: 2, argumentsDelta: '"Ulan-Ude", ' },
  { type: 'tool_call_delta', index: 2, argumentsDelta: '"unit": "celsius"}' },
  { type: 'part_end', index: 2 },
  { type: 'stop', reason: 'tool_use' },
  { type: 'usage', usage: TOOL_USAGE },
];

/** The settings a Messages request without any of them parses to. */
const MESSAGES_DEFAULTS: Partial<CanonicalRequest> = {
  fieldNames: { responseFormat: 'output_config.format', toolChoice: 'tool_choice', topK: 'top_k', temperature: 'temperature' },
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
};

describe('Anthropic Messages requests (client side)', () => {
  it('parses every supported field into the canonical request', () => {
    const request = parseMessagesRequest({
      model: 'gen-5.6-luna',
      max_tokens: 1024,
      system: [{ type: 'text', text: 'You are terse.' }, { type: 'text', text: 'Answer in English.', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: 'Weather in Irkutsk?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'need the tool', signature: 'sig' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Irkutsk' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '-12' }, { type: 'text', text: 'snow' }], is_error: false },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: 'timeout', is_error: true },
            { type: 'tool_result', tool_use_id: 'toolu_3' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/baikal.jpg' } },
            { type: 'text', text: 'And this picture?' },
          ],
        },
      ],
      tools: [{ name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }, { name: 'noop', input_schema: { type: 'object' } }],
      tool_choice: { type: 'tool', name: 'get_weather' },
      stop_sequences: ['\n\nHuman:'],
      temperature: 0.2,
      top_p: 0.9,
      stream: true,
      metadata: { user_id: 'u-1' },
    });
    expect(request).toEqual<CanonicalRequest>({
      model: 'gen-5.6-luna',
      system: 'You are terse.\n\nAnswer in English.',
      messages: [
        { role: 'user', parts: [{ type: 'text', text: 'Weather in Irkutsk?' }] },
        {
          role: 'assistant',
          parts: [
            // Thinking is kept with its signature, so a Messages->anthropic request via the canonical form still carries it.
            { type: 'reasoning', text: 'need the tool', summary: [], opaque: { family: 'anthropic', signature: 'sig' } },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_call', id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Irkutsk"}' },
          ],
        },
        {
          role: 'user',
          parts: [
            { type: 'tool_result', toolCallId: 'toolu_1', content: '-12\n\nsnow', isError: false },
            { type: 'tool_result', toolCallId: 'toolu_2', content: 'timeout', isError: true },
            { type: 'tool_result', toolCallId: 'toolu_3', content: '', isError: false },
            { type: 'image', image: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', image: { kind: 'url', url: 'https://example.com/baikal.jpg' } },
            { type: 'text', text: 'And this picture?' },
          ],
        },
      ],
      tools: [
        { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        { name: 'noop', description: null, parameters: { type: 'object' } },
      ],
      toolChoice: { name: 'get_weather' },
      maxOutputTokens: 1024,
      temperature: 0.2,
      topP: 0.9,
      stop: ['\n\nHuman:'],
      stream: true,
      ...MESSAGES_DEFAULTS,
      user: 'u-1',
    });
  });

  it('maps tool_choice and fills what was left out', () => {
    const base = { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] };
    expect(parseMessagesRequest({ ...base, tool_choice: { type: 'any' } }).toolChoice).toBe('required');
    expect(parseMessagesRequest({ ...base, tool_choice: { type: 'auto', disable_parallel_tool_use: true } }).toolChoice).toBe('auto');
    expect(parseMessagesRequest({ ...base, tool_choice: { type: 'none' } }).toolChoice).toBe('none');
    expect(parseMessagesRequest({ ...base, system: '' })).toEqual<CanonicalRequest>({
      model: 'm',
      system: null,
      messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
      tools: [],
      toolChoice: null,
      maxOutputTokens: 5,
      temperature: null,
      topP: null,
      stop: [],
      stream: false,
      ...MESSAGES_DEFAULTS,
    });
  });

  it('answers 422 with the exact location of each problem', () => {
    const ok = { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] };
    const locs = (body: unknown) => issuesOf(body).map((i) => [i.loc, i.type]);
    expect(locs({ model: 'm', messages: ok.messages })).toEqual([[['max_tokens'], 'missing']]);
    expect(locs({ ...ok, max_tokens: 0 })).toEqual([[['max_tokens'], 'greater_than']]);
    expect(locs({ ...ok, max_tokens: 1.5 })).toEqual([[['max_tokens'], 'int_type']]);
    expect(locs({ ...ok, messages: [] })).toEqual([[['messages'], 'too_short']]);
    expect(locs({ ...ok, messages: [{ role: 'tool', content: 'x' }] })).toEqual([[['messages', 0, 'role'], 'literal_error']]);
    expect(locs({ ...ok, messages: [{ role: 'user', content: 5 }] })).toEqual([[['messages', 0, 'content'], 'list_type']]);
    expect(locs({ ...ok, messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: '' }] }] })).toEqual([
      [['messages', 0, 'content', 1, 'type'], 'string_too_short'],
    ]);
    expect(locs({ ...ok, messages: [{ role: 'assistant', content: [{ type: 'tool_use', name: 'f', input: [] }] }] })).toEqual([
      [['messages', 0, 'content', 0, 'id'], 'missing'],
      [['messages', 0, 'content', 0, 'input'], 'record_type'],
    ]);
    expect(locs({ ...ok, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/tiff', data: 'AAAA' } }] }] })).toEqual([
      [['messages', 0, 'content', 0, 'source', 'media_type'], 'literal_error'],
    ]);
    expect(locs({ ...ok, messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 't', content: 'r' }] }] })).toEqual([
      [['messages', 1, 'content', 0, 'type'], 'value_error'],
    ]);
    expect(locs({ ...ok, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: {} }] }] }] })).toEqual([
      [['messages', 0, 'content', 0, 'content', 0, 'source', 'type'], 'union_error'],
    ]);
    expect(locs({ ...ok, system: [{ type: 'text' }, { type: 'image' }] })).toEqual([
      [['system', 0, 'text'], 'missing'],
      [['system', 1, 'type'], 'union_error'],
    ]);
    expect(locs({ ...ok, tools: [{ name: 'bad name', input_schema: { type: 'object' } }, { name: 'f' }] })).toEqual([
      [['tools', 0, 'name'], 'string_pattern_mismatch'],
      [['tools', 1, 'input_schema'], 'missing'],
    ]);
    expect(locs({ ...ok, tools: [{ type: 'web_search_20250305' }] })).toEqual([[['tools', 0, 'name'], 'missing']]);
    expect(locs({ ...ok, tool_choice: { type: 'tool' } })).toEqual([[['tool_choice', 'name'], 'missing']]);
    expect(locs({ ...ok, tool_choice: { type: 'sometimes' } })).toEqual([[['tool_choice', 'type'], 'union_error']]);
    expect(locs({ ...ok, temperature: 1.5, top_p: -1, stop_sequences: ['a', 3], stream: 'yes' })).toEqual([
      [['stop_sequences', 1], 'string_type'],
      [['temperature'], 'less_than_equal'],
      [['top_p'], 'greater_than_equal'],
      [['stream'], 'bool_type'],
    ]);
  });
});

describe('Anthropic Messages upstream bodies', () => {
  const request: CanonicalRequest = {
    model: 'gen-5.6-luna',
    system: 'Be brief.',
    messages: [
      { role: 'user', parts: [{ type: 'text', text: 'Weather in Irkutsk and Ulan-Ude?' }] },
      { role: 'user', parts: [{ type: 'text', text: 'And look at these.' }, { type: 'image', image: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } }] },
      {
        role: 'assistant',
        parts: [
          { type: 'text', text: '' },
          { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Irkutsk"}' },
        ],
      },
      // An OpenAI-shaped upstream's call, cut off mid-JSON.
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_2', name: 'get_weather', arguments: '{"city":"Ulan' }] },
      { role: 'user', parts: [{ type: 'tool_result', toolCallId: 'call_1', content: '-12', isError: false }] },
      {
        role: 'user',
        parts: [
          { type: 'text', text: 'Also these:' },
          { type: 'tool_result', toolCallId: 'call_2', content: 'unknown city', isError: true },
          { type: 'image', image: { kind: 'url', url: 'https://example.com/a.jpg' } },
          { type: 'image', image: { kind: 'url', url: 'data:image/jpeg;base64,/9j/4AAQ' } },
          { type: 'image', image: { kind: 'url', url: 'data:image/svg+xml,%3Csvg%2F%3E' } },
        ],
      },
      { role: 'assistant', parts: [{ type: 'text', text: '' }] },
    ],
    tools: [
      { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
      { name: 'noop', description: null, parameters: {} },
    ],
    toolChoice: 'required',
    maxOutputTokens: null,
    temperature: 0.7,
    topP: 1,
    stop: ['END'],
    stream: true,
  };

  it('merges same-role turns, puts tool results first, unpacks data: URLs and fills max_tokens', () => {
    expect(toAnthropicRequest(request, 'claude-sonnet-4-5', 2048)).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 2048,
      system: 'Be brief.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather in Irkutsk and Ulan-Ude?' },
            { type: 'text', text: 'And look at these.' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Irkutsk' } },
            { type: 'tool_use', id: 'call_2', name: 'get_weather', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: '-12' },
            { type: 'tool_result', tool_use_id: 'call_2', content: 'unknown city', is_error: true },
            { type: 'text', text: 'Also these:' },
            { type: 'image', source: { type: 'url', url: 'https://example.com/a.jpg' } },
            { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
            { type: 'image', source: { type: 'base64', media_type: 'image/svg+xml', data: Buffer.from('<svg/>').toString('base64') } },
          ],
        },
      ],
      tools: [
        { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
        { name: 'noop', input_schema: { type: 'object' } },
      ],
      tool_choice: { type: 'any' },
      stop_sequences: ['END'],
      temperature: 0.7,
      stream: true,
    });
  });

  it('sends the client limit, top_p alone, and no tool_choice without tools', () => {
    const body = toAnthropicRequest({ ...request, messages: [request.messages[0]!], tools: [], toolChoice: 'none', maxOutputTokens: 99, temperature: null, topP: 0.5, stop: [], stream: false, system: null }, 'c');
    expect(body).toEqual({ model: 'c', max_tokens: 99, messages: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Irkutsk and Ulan-Ude?' }] }], top_p: 0.5, stream: false });
    expect(toAnthropicRequest({ ...request, maxOutputTokens: null }, 'c').max_tokens).toBe(4096);
    expect(toAnthropicRequest({ ...request, toolChoice: { name: 'noop' } }, 'c').tool_choice).toEqual({ type: 'tool', name: 'noop' });
  });
});

describe('Anthropic Messages upstream answers', () => {
  it('reads a text message, keeping its thinking with the signature; zero cache counts stay zero', () => {
    const thinking = JSON.parse(fixture('message-text.json')).content[0];
    expect(fromAnthropicResponse(JSON.parse(fixture('message-text.json')))).toEqual<CanonicalResponse>({
      parts: [
        { type: 'reasoning', text: thinking.thinking, summary: [], opaque: { family: 'anthropic', signature: thinking.signature } },
        { type: 'text', text: 'Lake Baikal is the deepest lake in the world: 1,642 m at its deepest point.' },
      ],
      stopReason: 'end',
      usage: { inputTokens: 21, outputTokens: 58, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: null },
    });
  });

  it('reads tool calls and counts cache reads and writes into input', () => {
    expect(fromAnthropicResponse(JSON.parse(fixture('message-tool-use.json')))).toEqual<CanonicalResponse>({
      parts: [
        { type: 'text', text: "I'll check the weather in both cities." },
        { type: 'tool_call', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', arguments: '{"city":"Irkutsk","unit":"celsius"}' },
        { type: 'tool_call', id: 'toolu_01B7kTQmrsVc4Wf2nZb8hX3p', name: 'get_weather', arguments: '{"city":"Ulan-Ude","unit":"celsius"}' },
      ],
      stopReason: 'tool_use',
      usage: TOOL_USAGE,
    });
  });

  it('leaves cache buckets null when not reported, and reads junk as nothing', () => {
    const body = { content: [{ type: 'text', text: 'hi' }], stop_reason: 'model_context_window_exceeded', usage: { input_tokens: 3, output_tokens: 1 } };
    expect(fromAnthropicResponse(body).usage).toEqual({ inputTokens: 3, outputTokens: 1, cacheReadTokens: null, cacheWriteTokens: null, reasoningTokens: null });
    expect(fromAnthropicResponse(body).stopReason).toBe('max_tokens');
    expect(fromAnthropicResponse('nonsense')).toEqual({ parts: [], stopReason: null, usage: null });
  });

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
  let server: Server;
  let client: Anthropic;
  /** What the server answers next: a JSON body or SSE text. */
  let answer: { json: object } | { sse: string } = { json: {} };
  let received: Record<string, unknown> = {};

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        received = JSON.parse(body) as Record<string, unknown>;
        if ('json' in answer) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer.json));
        } else {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          // Byte-sized pieces, as a network might deliver them.
          const bytes = Buffer.from(answer.sse);
          for (let i = 0; i < bytes.length; i += 97) res.write(bytes.subarray(i, i + 97));
          res.end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = new Anthropic({ apiKey: 'x', baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, maxRetries: 0, timeout: 5000 });
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const params = { model: 'gen-5.6-luna', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'Weather in Irkutsk and Ulan-Ude?' }] };

  it('renders a message the SDK reads: our id, public model, tool inputs as objects, Anthropic-style usage', async () => {
    answer = { json: renderMessage(fromAnthropicResponse(JSON.parse(fixture('message-tool-use.json'))), who) };
    const message = await client.messages.create(params);
    expect(received).toMatchObject({ model: 'gen-5.6-luna', max_tokens: 1024 });
    expect(message).toEqual({
      id: 'msg_ours123',
      type: 'message',
      role: 'assistant',
      model: 'gen-5.6-luna',
      content: [
        { type: 'text', text: "I'll check the weather in both cities." },
        { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { city: 'Irkutsk', unit: 'celsius' } },
        { type: 'tool_use', id: 'toolu_01B7kTQmrsVc4Wf2nZb8hX3p', name: 'get_weather', input: { city: 'Ulan-Ude', unit: 'celsius' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 37, output_tokens: 89, cache_read_input_tokens: 2048, cache_creation_input_tokens: 512 },
    });
  });

  it('renders unreported cache buckets as null and unparseable tool arguments as {}', () => {
    const response: CanonicalResponse = {
      parts: [{ type: 'tool_call', id: 'c', name: 'f', arguments: '{"cut off' }],
      stopReason: 'max_tokens',
      usage: { inputTokens: 9, outputTokens: 2, cacheReadTokens: null, cacheWriteTokens: null, reasoningTokens: null },
    };
    expect(renderMessage(response, who)).toMatchObject({
      content: [{ type: 'tool_use', id: 'c', name: 'f', input: {} }],
      stop_reason: 'max_tokens',
      usage: { input_tokens: 9, output_tokens: 2, cache_read_input_tokens: null, cache_creation_input_tokens: null },
    });
  });

  it('streams frames the SDK assembles: text events, tool inputs from fragments, usage with cache buckets, stop reason', async () => {
    answer = { sse: encode(TOOL_STREAM_EVENTS, TOOL_USAGE) };
    const stream = client.messages.stream(params);
    const texts: string[] = [];
    const types: string[] = [];
    stream.on('text', (delta) => texts.push(delta));
    stream.on('streamEvent', (event) => types.push(event.type));
    const message = await stream.finalMessage();
    expect(received).toMatchObject({ stream: true });
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
    answer = { sse };
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
    answer = { sse: encoder.start() + encoder.event({ type: 'text_delta', index: 0, text: 'Hal' }) + encoder.fail('The upstream stream was interrupted', 'stream_interrupted') };
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

  it('a rendered message reads back as the response it came from', () => {
    const response = fromAnthropicResponse(JSON.parse(fixture('message-tool-use.json')));
    expect(fromAnthropicResponse(JSON.parse(JSON.stringify(renderMessage(response, who))))).toEqual(response);
  });
});
