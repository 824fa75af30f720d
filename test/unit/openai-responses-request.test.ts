import { describe, expect, it } from 'vitest';
import { parseResponses, parseResponsesRequest } from '../../src/inference/formats/openai-responses/request.js';
import { DomainError } from '../../src/shared/errors.js';
import { json } from '../helpers/openai-responses.js';

/** Responses requests read into canonical form. */

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
