import { readFileSync } from 'node:fs';
import type { CanonicalEvent, CanonicalUsage } from '../../src/inference/canonical.js';
import { MessagesStreamEncoder } from '../../src/inference/formats/anthropic-messages/stream.js';
import { AnthropicStreamDecoder } from '../../src/inference/providers/anthropic/stream.js';
import { SseSplitter } from '../../src/inference/sse.js';

/** What the Messages tests (test/unit/anthropic-messages-*.test.ts) share: fixtures and the codecs run whole. */

export const fixture = (name: string) => readFileSync(new URL(`../fixtures/anthropic-messages/${name}`, import.meta.url), 'utf8');
export const who = { id: 'ours123', model: 'gen-5.6-luna', created: 1 };

export function decode(sse: string): { events: CanonicalEvent[]; decoder: AnthropicStreamDecoder } {
  const decoder = new AnthropicStreamDecoder();
  const events = new SseSplitter().push(Buffer.from(sse)).flatMap((e) => decoder.push(e));
  return { events, decoder };
}

/** Every frame an encoder writes for these canonical events, as one SSE text. */
export function encode(events: CanonicalEvent[], usage: CanonicalUsage | null): string {
  const encoder = new MessagesStreamEncoder(who);
  return encoder.start() + events.map((e) => encoder.event(e)).join('') + encoder.finish(usage);
}

export const TOOL_USAGE: CanonicalUsage = { inputTokens: 37 + 2048 + 512, outputTokens: 89, cacheReadTokens: 2048, cacheWriteTokens: 512, reasoningTokens: null };

/** What the tool-use stream fixture says, in canonical events. */
/** The input usage message_start reports in stream-tool-use.sse: 37 uncached + 2,048 read + 512 written. */
export const TOOL_START_USAGE = { inputTokens: 2597, outputTokens: 0, cacheReadTokens: 2048, cacheWriteTokens: 512, reasoningTokens: null };

export const TOOL_STREAM_EVENTS: CanonicalEvent[] = [
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
