import { toolInputOf, type CanonicalRequest, type CanonicalResponse, type CanonicalUsage, type OutputPart, type ResponseIdentity, type StopReason } from '../../canonical.js';

/**
 * Canonical responses rendered as Messages API bodies: only documented fields, under our own id and
 * the public model id.
 */

export const STOP_TO_ANTHROPIC: Record<StopReason, string> = {
  end: 'end_turn',
  max_tokens: 'max_tokens',
  tool_use: 'tool_use',
  stop_sequence: 'stop_sequence',
  refusal: 'refusal',
};

/** Our id with the prefix Anthropic's message ids carry. */
export const messageId = (who: ResponseIdentity): string => `msg_${who.id}`;

interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number | null;
  cache_read_input_tokens: number | null;
}

/**
 * Canonical usage the Anthropic way: `input_tokens` is the uncached remainder, cache reads and
 * writes are counted beside it (the canonical `inputTokens` includes both). A bucket the upstream
 * did not report stays null, which the SDK's `Usage` type allows, rather than claiming 0.
 */
export function messagesUsage(usage: CanonicalUsage): MessagesUsage {
  const read = usage.cacheReadTokens;
  const written = usage.cacheWriteTokens;
  return {
    input_tokens: Math.max(0, usage.inputTokens - (read ?? 0) - (written ?? 0)),
    output_tokens: usage.outputTokens,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
  };
}

/**
 * Whether reasoning is shown as thinking blocks: when the client turned thinking on, as Anthropic
 * does (a chat upstream that reasons unasked does not make thinking blocks appear).
 */
export function showsThinking(request: CanonicalRequest | undefined): boolean {
  return request?.thinking?.type === 'enabled' || request?.thinking?.type === 'adaptive';
}

/**
 * A reasoning part as a thinking block. Anthropic's own thinking keeps its signature (or stays
 * redacted), so a tool loop with thinking on can send it back; another family's reasoning gets an
 * empty signature, which only matters if the client sent it to Anthropic itself.
 */
function thinkingBlockOf(part: Extract<OutputPart, { type: 'reasoning' }>): object {
  const opaque = part.opaque;
  if (opaque?.family === 'anthropic' && 'redactedData' in opaque) return { type: 'redacted_thinking', data: opaque.redactedData };
  const signature = opaque?.family === 'anthropic' && 'signature' in opaque ? opaque.signature : '';
  return { type: 'thinking', thinking: part.text || part.summary.join('\n\n'), signature };
}

/** A canonical response as a Messages API `message`. */
export function renderMessage(response: CanonicalResponse, who: ResponseIdentity, request?: CanonicalRequest): object {
  const thinking = showsThinking(request);
  const content: object[] = [];
  for (const p of response.parts) {
    if (p.type === 'text') content.push({ type: 'text', text: p.text });
    else if (p.type === 'tool_call') content.push({ type: 'tool_use', id: p.id, name: p.name, input: toolInputOf(p.arguments) });
    else if (thinking) content.push(thinkingBlockOf(p));
  }
  return {
    id: messageId(who),
    type: 'message',
    role: 'assistant',
    model: who.model,
    content,
    stop_reason: STOP_TO_ANTHROPIC[response.stopReason ?? 'end'],
    stop_sequence: null,
    usage: response.usage ? messagesUsage(response.usage) : { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: null, cache_read_input_tokens: null },
  };
}
