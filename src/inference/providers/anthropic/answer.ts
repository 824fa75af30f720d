import type { CanonicalResponse, CanonicalUsage, OutputPart, StopReason } from '../../canonical.js';

/**
 * The `anthropic` upstream kind, answers: a Messages API `message` in canonical form, and the usage
 * counts both it and the stream decoder (stream.ts) read. Upstream bodies are read defensively:
 * unknown shapes become nothing, never an exception.
 */

export function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

const STOP_FROM_ANTHROPIC: Record<string, StopReason> = {
  end_turn: 'end',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  tool_use: 'tool_use',
  refusal: 'refusal',
  // A paused server-tool turn ended this response normally; the context window running out is a length limit.
  pause_turn: 'end',
  model_context_window_exceeded: 'max_tokens',
};

export function stopReasonOf(value: unknown): StopReason | null {
  return typeof value === 'string' ? (STOP_FROM_ANTHROPIC[value] ?? 'end') : null;
}

/** Anthropic usage buckets, as reported so far (null: not reported). */
export interface UsageCounts {
  input: number | null;
  output: number | null;
  cacheRead: number | null;
  cacheWrite: number | null;
}

export const NO_COUNTS: UsageCounts = { input: null, output: null, cacheRead: null, cacheWrite: null };

/** Later counts overwrite earlier ones field by field: Anthropic's counts are cumulative totals, never increments. */
export function mergeCounts(base: UsageCounts, raw: unknown): UsageCounts {
  const u = record(raw);
  return {
    input: numberOrNull(u.input_tokens) ?? base.input,
    output: numberOrNull(u.output_tokens) ?? base.output,
    cacheRead: numberOrNull(u.cache_read_input_tokens) ?? base.cacheRead,
    cacheWrite: numberOrNull(u.cache_creation_input_tokens) ?? base.cacheWrite,
  };
}

/** Canonical usage: input counts every input token, so Anthropic's separate cache buckets are added back in. */
export function usageOfCounts(counts: UsageCounts): CanonicalUsage | null {
  if (counts.input === null || counts.output === null) return null;
  return {
    inputTokens: counts.input + (counts.cacheRead ?? 0) + (counts.cacheWrite ?? 0),
    outputTokens: counts.output,
    cacheReadTokens: counts.cacheRead,
    cacheWriteTokens: counts.cacheWrite,
    reasoningTokens: null,
  };
}

export function anthropicUsageOf(raw: unknown): CanonicalUsage | null {
  return usageOfCounts(mergeCounts(NO_COUNTS, raw));
}

/** The text of a tool_use block's input: what the model produced, as JSON text. */
export function argumentsOf(input: unknown): string {
  return JSON.stringify(input ?? {});
}

/** An upstream Messages API `message` in canonical form: thinking becomes reasoning parts with their signatures; server-tool blocks are left out. */
export function fromAnthropicResponse(body: unknown): CanonicalResponse {
  const message = record(body);
  const parts: OutputPart[] = [];
  for (const raw of Array.isArray(message.content) ? message.content : []) {
    const block = record(raw);
    if (block.type === 'text' && typeof block.text === 'string' && block.text) parts.push({ type: 'text', text: block.text });
    else if (block.type === 'tool_use') parts.push({ type: 'tool_call', id: String(block.id ?? ''), name: String(block.name ?? ''), arguments: argumentsOf(block.input) });
    else if (block.type === 'thinking') {
      const signature = typeof block.signature === 'string' && block.signature ? block.signature : null;
      parts.push({ type: 'reasoning', text: typeof block.thinking === 'string' ? block.thinking : '', summary: [], opaque: signature ? { family: 'anthropic', signature } : null });
    } else if (block.type === 'redacted_thinking' && typeof block.data === 'string') {
      parts.push({ type: 'reasoning', text: '', summary: [], opaque: { family: 'anthropic', redactedData: block.data } });
    }
  }
  return { parts, stopReason: stopReasonOf(message.stop_reason), usage: anthropicUsageOf(message.usage) };
}

