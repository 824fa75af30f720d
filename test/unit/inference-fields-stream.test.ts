import { describe, expect, it } from 'vitest';
import type { CanonicalEvent } from '../../src/inference/canonical.js';
import { MessagesStreamEncoder } from '../../src/inference/formats/anthropic-messages/stream.js';
import { renderResponse } from '../../src/inference/formats/openai-responses/answer.js';
import { ResponsesStreamEncoder } from '../../src/inference/formats/openai-responses/stream.js';
import { CUSTOM_ANSWER, CUSTOM_REQUEST, messages, who } from '../helpers/inference-fields.js';

/** What each client format shows of an answer streamed: reasoning, tool calls under the client's own names, usage (docs/inference-fields.md). */

describe('Answers in each client format: reasoning and mapped tool calls', () => {
  it('Responses stream: summary events for reasoning, the custom input whole at its end, namespaced names; the final object matches the JSON', () => {
    const events: CanonicalEvent[] = [
      { type: 'reasoning_delta', index: 0, text: 'plan ' },
      { type: 'reasoning_delta', index: 0, text: 'the patch' },
      { type: 'reasoning_opaque', index: 0, opaque: { family: 'anthropic', signature: 'sig-r' } },
      { type: 'part_end', index: 0 },
      { type: 'tool_call_start', index: 1, id: 'call_1', name: 'apply_patch' },
      { type: 'tool_call_delta', index: 1, argumentsDelta: '{"input":"*** Begin Patch\\n' },
      { type: 'tool_call_delta', index: 1, argumentsDelta: '*** End Patch"}' },
      { type: 'part_end', index: 1 },
      { type: 'tool_call_start', index: 2, id: 'call_2', name: 'crm__lookup' },
      { type: 'tool_call_delta', index: 2, argumentsDelta: '{"city":"x"}' },
      { type: 'part_end', index: 2 },
      { type: 'stop', reason: 'tool_use' },
    ];
    const encoder = new ResponsesStreamEncoder(who, CUSTOM_REQUEST);
    const sse = encoder.start() + events.map((e) => encoder.event(e)).join('') + encoder.finish(CUSTOM_ANSWER.usage);
    const frames = sse.trim().split('\n\n').map((block) => JSON.parse(block.split('\n')[1]!.slice(6)));
    expect(frames.map((f) => f.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(frames[9].item).toMatchObject({ type: 'custom_tool_call', name: 'apply_patch', input: '' });
    expect(frames[11]).toMatchObject({ input: '*** Begin Patch\n*** End Patch' });
    expect(frames[13].item).toMatchObject({ type: 'function_call', name: 'lookup', namespace: 'crm' });
    expect(frames.at(-1).response.output).toEqual(renderResponse(CUSTOM_ANSWER, who, CUSTOM_REQUEST).output);
  });

  it('Messages stream: message_start carries early input usage; thinking and signature deltas; message_delta the cumulative totals', () => {
    const encoder = new MessagesStreamEncoder(who, messages({ thinking: { type: 'adaptive' } }).canonical);
    const start = { inputTokens: 120, outputTokens: 1, cacheReadTokens: 100, cacheWriteTokens: 0, reasoningTokens: null };
    const billed = { ...start, outputTokens: 30 };
    const sse =
      encoder.start() +
      [
        { type: 'usage_start', usage: start },
        { type: 'reasoning_delta', index: 0, text: 'hmm' },
        { type: 'reasoning_opaque', index: 0, opaque: { family: 'anthropic', signature: 'sig' } },
        { type: 'part_end', index: 0 },
        { type: 'text_delta', index: 1, text: 'Hi' },
        { type: 'stop', reason: 'end' },
      ]
        .map((e) => encoder.event(e as CanonicalEvent))
        .join('') +
      encoder.finish(billed);
    const frames = sse.trim().split('\n\n').map((block) => JSON.parse(block.split('\n')[1]!.slice(6)));
    expect(frames[0]).toMatchObject({ type: 'message_start', message: { usage: { input_tokens: 20, cache_read_input_tokens: 100, cache_creation_input_tokens: 0, output_tokens: 0 } } });
    expect(frames.filter((f) => f.type === 'content_block_delta').map((f) => f.delta)).toEqual([
      { type: 'thinking_delta', thinking: 'hmm' },
      { type: 'signature_delta', signature: 'sig' },
      { type: 'text_delta', text: 'Hi' },
    ]);
    expect(frames.find((f) => f.type === 'message_delta').usage).toEqual({ input_tokens: 20, output_tokens: 30, cache_read_input_tokens: 100, cache_creation_input_tokens: 0 });
  });

  it('Messages stream from an upstream that reports usage only at the end: message_start zeros, message_delta the full counts', () => {
    const encoder = new MessagesStreamEncoder(who);
    const sse = encoder.start() + encoder.event({ type: 'text_delta', index: 0, text: 'Hi' }) + encoder.finish({ inputTokens: 50, outputTokens: 2, cacheReadTokens: 10, cacheWriteTokens: null, reasoningTokens: null });
    expect(encoder.start()).toBe('');
    const frames = sse.trim().split('\n\n').map((block) => JSON.parse(block.split('\n')[1]!.slice(6)));
    expect(frames[0].message.usage).toEqual({ input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: null, cache_read_input_tokens: null });
    expect(frames.find((f) => f.type === 'message_delta').usage).toEqual({ input_tokens: 40, output_tokens: 2, cache_read_input_tokens: 10, cache_creation_input_tokens: null });
  });
});
