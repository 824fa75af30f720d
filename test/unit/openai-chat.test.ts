import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { usageOf } from '../../src/inference/providers/openai-compatible/chat.js';
import { estimateTokens, SseSplitter } from '../../src/inference/sse.js';
import { promptTokenBound } from '../../src/inference/canonical.js';
import { plainContentOf } from '../../src/inference/formats/openai-chat/same-format.js';
import { CLIENT_FORMATS } from '../../src/inference/client-formats.js';
import type { ParsedRequest } from '../../src/inference/formats/client-format.js';
import { deliveredTextOf, publicChunk, publicCompletion } from '../../src/inference/formats/openai-chat/answer.js';
import { chatToCanonical, parseChatRequest } from '../../src/inference/formats/openai-chat/request.js';
import { CHAT_FIELD_CHECKS } from '../../src/inference/formats/openai-chat/fast-path.js';
import { chatRequestSchema, type ChatField } from '../../src/inference/formats/openai-chat/schema.js';
import { DomainError } from '../../src/shared/errors.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/openai-chat/${name}`, import.meta.url), 'utf8');
const who = { id: 'chatcmpl-ours', model: 'gen-5.6-luna', created: 1 };
/** The identity the pipeline hands every format: bare; the chat answer writes its `chatcmpl-` itself (once). */
const bare = { ...who, id: 'ours' };
// Fields an OpenAI-compatible aggregator adds, which say where a request went or what it cost us.
const PRIVATE = ['vendor/secret-model-v2', 'SecretCloud', 'eu-west-secret', 'fp_vendor', 'gen-1732-upstream', 'gen-99-upstream', 'cost', 'native_finish_reason'];

describe('SSE splitting', () => {
  it('yields the same events however the bytes are cut, keeping only the unfinished tail', () => {
    const bytes = Buffer.from(fixture('stream-with-extras.sse'));
    const whole = new SseSplitter().push(bytes);
    expect(whole.map((e) => e.data.slice(0, 20))).toHaveLength(6);
    expect(whole.at(-1)!.data).toBe('[DONE]');
    for (const size of [1, 7, 64, 333]) {
      const splitter = new SseSplitter();
      const events = [];
      for (let i = 0; i < bytes.length; i += size) events.push(...splitter.push(bytes.subarray(i, i + size)));
      events.push(...splitter.end());
      expect(events).toEqual(whole);
    }
  });

  it('decodes multi-byte characters split across chunks, and CRLF framing', () => {
    const text = Buffer.from('data: {"c":"Байкал 🌊"}\r\n\r\n');
    const splitter = new SseSplitter();
    const events = [...splitter.push(text.subarray(0, 15)), ...splitter.push(text.subarray(15))];
    expect(events).toEqual([{ event: null, data: '{"c":"Байкал 🌊"}' }]);
  });
});

describe('the OpenAI chat wire format', () => {
  it('rewrites stream chunks to our id and public model, dropping every field the upstream added', () => {
    const events = new SseSplitter().push(Buffer.from(fixture('stream-with-extras.sse'))).filter((e) => e.data !== '[DONE]');
    const chunks = events.map((e) => JSON.parse(e.data));
    const out = chunks.map((c) => publicChunk(c, who, usageOf(c.usage)));
    const text = JSON.stringify(out);
    for (const secret of PRIVATE) expect(text, secret).not.toContain(secret);
    expect(out[1]).toEqual({ id: 'chatcmpl-ours', object: 'chat.completion.chunk', created: 1, model: 'gen-5.6-luna', choices: [{ index: 0, delta: { content: 'Hello' }, logprobs: null, finish_reason: null }] });
    expect(out.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14, prompt_tokens_details: { cached_tokens: 4 } } });
    expect(chunks.map(deliveredTextOf).join('')).toBe('Hello world');
  });

  describe('a same-format stream', () => {
    const parsed = { streamUsage: false } as ParsedRequest;
    /** The rewrite by the parse (publicChunk), as the stream wrote every chunk before the plain-chunk path. */
    const byParse = (data: string) => `data: ${JSON.stringify(publicChunk(JSON.parse(data), who, null))}\n\n`;
    const contentChunk = (content: string, extras: Record<string, unknown> = {}, after: Record<string, unknown> = {}) =>
      JSON.stringify({ ...extras, choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }], ...after });
    const scalar = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ unit: 'grapheme' }));
    const extras = fc.dictionary(fc.constantFrom('id', 'object', 'created', 'model', 'system_fingerprint', 'service_tier', 'obfuscation', 'provider', 'usage', 'x-y'), scalar, { maxKeys: 6 });

    it('rewrites a plain content chunk without parsing it, to exactly what the parse makes of it', () => {
      let plain = 0;
      fc.assert(
        fc.property(fc.string({ unit: 'binary' }), extras, extras, (content, before, after) => {
          const data = contentChunk(content, before, after);
          if (plainContentOf(data) !== null) plain++;
          const stream = CLIENT_FORMATS['openai-chat'].sameFormat.stream(bare, parsed);
          const out = stream.push({ event: null, data });
          expect(JSON.stringify(JSON.parse(out.slice('data: '.length)))).toBe(byParse(data).slice('data: '.length, -2));
          expect(out.endsWith('\n\n')).toBe(true);
          expect(stream.delivered).toBe(content);
          expect(stream.usage).toBeNull();
          expect(stream.error).toBeNull();
        }),
        { numRuns: 500 },
      );
      // Many generated chunks take the plain path (about a third: a key like `x-y`, a string that needs escapes or a non-null usage sends the others to the parse).
      expect(plain).toBeGreaterThan(75);
    });

    it('takes the plain path for the layouts real servers write, and parses anything else', () => {
      const simulator = '{"id":"chatcmpl-sim","object":"chat.completion.chunk","created":1795325000,"model":"sim","system_fingerprint":"fp_sim","choices":[{"index":0,"delta":{"content":"Baikal "},"logprobs":null,"finish_reason":null}]}';
      const openai = '{"id":"chatcmpl-x","object":"chat.completion.chunk","created":1795325000,"model":"gpt","service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hi \\"you\\"\\n\\u00e9"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"aB3"}';
      expect(plainContentOf(simulator)).toBe('"Baikal "');
      expect(plainContentOf(openai)).toBe('"Hi \\"you\\"\\n\\u00e9"');
      const stream = CLIENT_FORMATS['openai-chat'].sameFormat.stream(bare, parsed);
      expect(stream.push({ event: null, data: openai })).toBe(byParse(openai).replace('é', '\\u00e9'));
      expect(stream.delivered).toBe('Hi "you"\né');

      const parsedOnly = [
        contentChunk('a').replace('"delta":{', '"delta":{"role":"assistant",'),
        contentChunk('a').replace('"finish_reason":null', '"finish_reason":"stop"'),
        contentChunk('a').replace('"logprobs":null', '"logprobs":{"content":[]}'),
        contentChunk('a', {}, { usage: { prompt_tokens: 1, completion_tokens: 2 } }),
        contentChunk('a', { provider: { route: 'eu' } }),
        contentChunk('a', { error: 'boom' }),
        contentChunk('a', { error: null }),
        contentChunk('a').replace('"index":0,', '"index": 0,'),
        '{"choices":[{"index":0,"delta":{"content":"bad \\x escape"},"logprobs":null,"finish_reason":null}]}',
        '{"choices":[{"index":0,"delta":{"content":"raw \u0001 control"},"logprobs":null,"finish_reason":null}]}',
      ];
      for (const data of parsedOnly) expect(plainContentOf(data), data).toBeNull();
    });

    it('still reports an in-band error and the upstream usage, which only the parse reads', () => {
      const withUsage = CLIENT_FORMATS['openai-chat'].sameFormat.stream(bare, parsed);
      expect(withUsage.push({ event: null, data: contentChunk('a', {}, { usage: { prompt_tokens: 3, completion_tokens: 4 } }) })).toContain('"content":"a"');
      expect(withUsage.usage).toMatchObject({ inputTokens: 3, outputTokens: 4 });
      const failing = CLIENT_FORMATS['openai-chat'].sameFormat.stream(bare, parsed);
      expect(failing.push({ event: null, data: contentChunk('a', { error: 'boom' }) })).toBe('');
      expect(failing.error).toContain('boom');
    });
  });

  it('rewrites a completion the same way and reads its usage; cache usage not reported stays null', () => {
    const upstream = JSON.parse(fixture('completion-with-extras.json'));
    const usage = usageOf(upstream.usage);
    expect(usage).toEqual({ inputTokens: 9, outputTokens: 2, cacheReadTokens: null, cacheWriteTokens: null });
    const out = publicCompletion(upstream, who, usage);
    for (const secret of PRIVATE) expect(JSON.stringify(out), secret).not.toContain(secret);
    expect(out).toEqual({
      id: 'chatcmpl-ours',
      object: 'chat.completion',
      created: 1,
      model: 'gen-5.6-luna',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
    });
    expect(usageOf({ prompt_tokens: 'x' })).toBeNull();
  });

  it('bounds the prompt by its bytes, counting an image as a fixed allowance rather than its base64 size', () => {
    const small = chatToCanonical(parseChatRequest({ model: 'm', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'héllo' }] }));
    expect(small.system).toBe('be brief');
    expect(promptTokenBound(small)).toBe(Buffer.byteLength(JSON.stringify({ system: small.system, messages: small.messages, tools: small.tools })));
    const image = chatToCanonical(parseChatRequest({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(1_000_000)}` } }] }] }));
    expect(promptTokenBound(image)).toBeLessThan(3_000);
    expect(promptTokenBound(image)).toBeGreaterThanOrEqual(2_000);
  });

  it('refuses malformed requests with every problem located', () => {
    try {
      parseChatRequest({ model: '', messages: [{ role: 'robot', content: 5 }], stream: 'yes', n: 2, tools: [{ type: 'function', function: { name: 'bad name!' } }] });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(DomainError);
      const locs = (error as DomainError).issues.map((i) => i.loc.join('.')).sort();
      expect(locs).toEqual(['messages.0.content', 'messages.0.role', 'model', 'n', 'stream', 'tools.0.function.name']);
    }
  });

  it('refuses a mistyped or out-of-range sampling or output field with a 422 naming it, whatever the route', () => {
    const ok = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    const slips: [Record<string, unknown>, string, string][] = [
      [{ temperature: 'hot' }, 'temperature', 'Input should be a valid number'],
      [{ temperature: 2.5 }, 'temperature', 'Too big'],
      [{ top_p: 7 }, 'top_p', 'Too big'],
      [{ frequency_penalty: -3 }, 'frequency_penalty', 'Too small'],
      [{ presence_penalty: '1' }, 'presence_penalty', 'Input should be a valid number'],
      [{ seed: 1.5 }, 'seed', 'Input should be a valid integer'],
      [{ stop: [1, 2] }, 'stop', 'stop is a string or an array of strings'],
      [{ logprobs: 'yes' }, 'logprobs', 'Input should be a valid boolean'],
      [{ top_logprobs: 21 }, 'top_logprobs', 'Too big'],
      [{ parallel_tool_calls: 1 }, 'parallel_tool_calls', 'Input should be a valid boolean'],
      [{ tool_choice: 5 }, 'tool_choice', 'tool_choice is "none", "auto", "required" or an object with a type'],
      [{ response_format: 'json' }, 'response_format', 'Input should be a valid object'],
    ];
    for (const [slip, field, words] of slips) {
      let refused: DomainError | undefined;
      try {
        parseChatRequest({ ...ok, ...slip });
      } catch (error) {
        refused = error as DomainError;
      }
      expect(refused, field).toBeInstanceOf(DomainError);
      expect(refused!.issues.map((i) => i.loc.join('.')), field).toEqual([field]);
      expect(refused!.issues[0]!.msg, field).toContain(words);
    }
    // What clients send every day passes, nulls included (the Python SDK's defaults are omitted, some others send null).
    const everyday = { ...ok, temperature: 0, top_p: 1, frequency_penalty: 0, presence_penalty: null, seed: 42, stop: ['\n'], logprobs: false, top_logprobs: null, parallel_tool_calls: true, tool_choice: { type: 'function', function: { name: 'f' } }, response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } };
    expect(parseChatRequest(everyday)).toBe(everyday);
    expect(parseChatRequest({ ...ok, stop: 'END', tool_choice: 'required' })).toMatchObject({ stop: 'END' });
    expect(parseChatRequest({ ...ok, seed: 9_223_372_036_854_775_807 })).toMatchObject({ seed: 9_223_372_036_854_775_807 });
  });

  it('estimates about four characters a token for text the upstream never counted', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('abcde')).toBe(2);
  });
});

describe('chat request validation fast path', () => {
  // Bodies near the schema's edges: each field valid, invalid, absent or null, so both paths are taken often.
  // Mostly the field's own kind of value, so that whole bodies are often valid and a one-field slip is what differs.
  const maybe = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ arbitrary: arb, weight: 12 }, fc.constant(undefined), fc.constant(null), fc.anything());
  const part = fc.oneof({ arbitrary: fc.record({ type: fc.constantFrom('text', 'image_url', '') }, { requiredKeys: [] }), weight: 12 }, fc.anything());
  const message = fc.oneof(
    { arbitrary: fc.record({ role: fc.constantFrom('system', 'developer', 'user', 'assistant', 'tool', 'function', 'robot'), content: maybe(fc.oneof(fc.string(), fc.array(part, { maxLength: 3 }))) }, { requiredKeys: ['role'] }), weight: 12 },
    fc.anything(),
  );
  const tool = fc.oneof({ arbitrary: fc.record({ type: fc.constantFrom('function', 'function', 'web'), function: fc.record({ name: fc.constantFrom('get_weather', 'get_time', 'bad name!', '', 'x'.repeat(65)) }) }), weight: 12 }, fc.anything());
  const limit = maybe(fc.oneof(fc.integer({ min: -2, max: 5 }), fc.double(), fc.constant(2 ** 53)));
  // Tenths on either side of a range and its edges (fc.double alone lands almost always near zero), and now and then any double.
  const around = (min: number, max: number) => fc.oneof({ arbitrary: fc.integer({ min: min * 10 - 5, max: max * 10 + 5 }).map((tenths) => tenths / 10), weight: 4 }, fc.double());
  const coreFields = {
    model: maybe(fc.oneof(fc.constant('gen-5.6-luna'), fc.string({ maxLength: 3 }), fc.constant('m'.repeat(128)), fc.constant('m'.repeat(129)))),
    messages: maybe(fc.array(message, { maxLength: 2 })),
  };
  const optionalFields: Record<Exclude<ChatField, keyof typeof coreFields>, fc.Arbitrary<unknown>> = {
    stream: maybe(fc.boolean()),
    stream_options: maybe(fc.record({ include_usage: maybe(fc.boolean()) }, { requiredKeys: [] })),
    max_tokens: limit,
    max_completion_tokens: limit,
    tools: maybe(fc.array(tool, { maxLength: 2 })),
    n: maybe(fc.integer({ min: 0, max: 2 })),
    temperature: maybe(around(0, 2)),
    top_p: maybe(around(0, 1)),
    frequency_penalty: maybe(around(-2, 2)),
    presence_penalty: maybe(around(-2, 2)),
    seed: maybe(fc.oneof(fc.integer(), fc.double(), fc.constant(2 ** 53))),
    stop: maybe(fc.oneof(fc.string({ maxLength: 3 }), fc.array(fc.oneof({ arbitrary: fc.string({ maxLength: 3 }), weight: 12 }, fc.anything()), { maxLength: 3 }))),
    logprobs: maybe(fc.boolean()),
    top_logprobs: maybe(fc.oneof(fc.integer({ min: -1, max: 21 }), fc.double())),
    parallel_tool_calls: maybe(fc.boolean()),
    tool_choice: maybe(fc.oneof(fc.constantFrom('none', 'auto', 'required', 'any'), fc.record({ type: maybe(fc.constantFrom('function', 'allowed_tools')) }, { requiredKeys: [] }))),
    response_format: maybe(fc.record({ type: maybe(fc.constantFrom('text', 'json_object', 'json_schema')) }, { requiredKeys: [] })),
  };
  /** An arbitrary for every field the schema names (the test below holds the two lists equal). */
  const fieldArbitraries: Record<ChatField, fc.Arbitrary<unknown>> = { ...coreFields, ...optionalFields };
  const optionalKeys = Object.keys(optionalFields) as (keyof typeof optionalFields)[];
  const body = fc.oneof(
    fc.record(fieldArbitraries, { requiredKeys: [] }),
    // A valid core and up to three other fields, so that whether the body passes turns on those few (one slip at a time).
    fc
      .subarray(optionalKeys, { maxLength: 3 })
      .chain((keys) => fc.record(Object.fromEntries(keys.map((key) => [key, optionalFields[key]]))))
      .map((fields) => ({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi' }], ...fields })),
    fc.anything(),
  );

  it('checks, and generates, exactly the fields the schema names', () => {
    const schemaFields = Object.keys(chatRequestSchema.shape).sort();
    expect(Object.keys(CHAT_FIELD_CHECKS).sort()).toEqual(schemaFields);
    expect(Object.keys(fieldArbitraries).sort()).toEqual(schemaFields);
  });

  it('accepts exactly what the schema accepts, as the schema would return it', () => {
    fc.assert(
      fc.property(body, (input) => {
        const expected = chatRequestSchema.safeParse(input);
        let parsed: unknown;
        try {
          parsed = parseChatRequest(input);
        } catch (error) {
          expect(error).toBeInstanceOf(DomainError);
          expect(expected.success).toBe(false);
          return;
        }
        expect(expected.success).toBe(true);
        expect(parsed).toEqual(expected.data);
      }),
      { numRuns: 5_000 },
    );
  });

  it('keeps the schema\'s bounds on tools (at most 128)', () => {
    const withTools = (count: number) => ({ model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: Array.from({ length: count }, (_, i) => ({ type: 'function', function: { name: `f${i}` } })) });
    expect(parseChatRequest(withTools(128)).tools).toHaveLength(128);
    expect(() => parseChatRequest(withTools(129))).toThrow(DomainError);
  });
});
