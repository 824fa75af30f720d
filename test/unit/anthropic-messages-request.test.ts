import { describe, expect, it } from 'vitest';
import type { CanonicalRequest } from '../../src/inference/canonical.js';
import { parseMessagesRequest } from '../../src/inference/formats/anthropic-messages/request.js';
import { toAnthropicRequest } from '../../src/inference/providers/anthropic/request.js';
import { DomainError, type ValidationIssue } from '../../src/shared/errors.js';

/** Messages requests: the client's (parsed into canonical form) and the upstream's (a canonical request as a Messages body). */

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
