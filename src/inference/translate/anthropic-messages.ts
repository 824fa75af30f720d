import { z } from 'zod';
import type { ErrorCode } from '../../shared/errors.js';
import { parseInput } from '../../shared/validation.js';
import type {
  CanonicalEvent,
  CanonicalMessage,
  CanonicalPart,
  CanonicalRequest,
  CanonicalResponse,
  CanonicalToolChoice,
  CanonicalUsage,
  ResponseIdentity,
  StopReason,
  StreamEncoder,
} from '../canonical.js';

/**
 * The Anthropic Messages wire format, client side (what `POST /v1/messages` callers speak): request
 * validation into canonical form, and canonical responses and event streams rendered as Messages
 * bodies and SSE frames. Only documented fields go out, under our own id and the public model id.
 */

// ---------------------------------------------------------------------------------------------------
// Requests

/**
 * Content that may be a plain string or a list of blocks. A string becomes one text block before
 * validation (an empty string, no blocks), so every error is located inside the block list instead
 * of a vague "no union member matched" on the whole field.
 */
function stringOrBlocks<T extends z.ZodType>(block: T) {
  return z.preprocess((value) => (typeof value === 'string' ? (value ? [{ type: 'text', text: value }] : []) : value), z.array(block));
}

const textBlock = z.looseObject({ type: z.literal('text'), text: z.string() });
/** Where only text is taken (system, tool results): one clear error naming `type` for any other block. */
const textOnly = z.discriminatedUnion('type', [textBlock]);

const imageBlock = z.looseObject({
  type: z.literal('image'),
  source: z.discriminatedUnion('type', [
    z.looseObject({ type: z.literal('base64'), media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']), data: z.string().min(1) }),
    z.looseObject({ type: z.literal('url'), url: z.string().min(1) }),
  ]),
});

const toolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
});

const toolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: stringOrBlocks(textOnly).optional(),
  is_error: z.boolean().optional(),
});

/**
 * Extended-thinking blocks that clients (Claude Code among them) send back in assistant turns. The
 * canonical form has no place for them and they only mean something to Anthropic itself, so they
 * are accepted and dropped rather than refusing an otherwise valid conversation.
 */
const thinkingBlock = z.looseObject({ type: z.enum(['thinking', 'redacted_thinking']) });

const contentBlock = z.discriminatedUnion('type', [textBlock, imageBlock, toolUseBlock, toolResultBlock, thinkingBlock]);
type ContentBlock = z.output<typeof contentBlock>;

/** Which turn each block kind may appear in (the API refuses the others). */
const BLOCK_ROLES: Record<ContentBlock['type'], 'user' | 'assistant' | 'both'> = {
  text: 'both',
  image: 'user',
  tool_use: 'assistant',
  tool_result: 'user',
  thinking: 'assistant',
  redacted_thinking: 'assistant',
};

const message = z
  .looseObject({
    role: z.enum(['user', 'assistant']),
    content: stringOrBlocks(contentBlock),
  })
  .superRefine((m, ctx) => {
    m.content.forEach((block, j) => {
      const allowed = BLOCK_ROLES[block.type];
      if (allowed !== 'both' && allowed !== m.role) {
        ctx.addIssue({ code: 'custom', path: ['content', j, 'type'], message: `${block.type} blocks belong in ${allowed} turns`, params: { type: 'value_error' } });
      }
    });
  });

const tool = z.looseObject({
  // Only custom tools (the default type) can be described to any upstream; Anthropic's server tools cannot.
  type: z.literal('custom').optional(),
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'Tool names are 1-64 letters, digits, "_" or "-"'),
  description: z.string().optional(),
  input_schema: z.looseObject({ type: z.literal('object') }),
});

const toolChoice = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('auto') }),
  z.looseObject({ type: z.literal('any') }),
  z.looseObject({ type: z.literal('none') }),
  z.looseObject({ type: z.literal('tool'), name: z.string().min(1) }),
]);

export const messagesRequestSchema = z.looseObject({
  model: z.string().min(1).max(128),
  max_tokens: z.number().int().positive(),
  system: stringOrBlocks(textOnly).optional(),
  messages: z.array(message).min(1, 'At least one message is required'),
  tools: z.array(tool).max(128).optional(),
  tool_choice: toolChoice.optional(),
  stop_sequences: z.array(z.string()).optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  stream: z.boolean().optional(),
  // Anthropic's `metadata.user_id` is for abuse tracking at Anthropic; we have our own accounts.
  metadata: z.unknown().optional(),
});
export type MessagesRequest = z.output<typeof messagesRequestSchema>;

function partOf(block: ContentBlock): CanonicalPart | null {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
      return {
        type: 'image',
        image: block.source.type === 'base64' ? { kind: 'base64', mediaType: block.source.media_type, data: block.source.data } : { kind: 'url', url: block.source.url },
      };
    case 'tool_use':
      return { type: 'tool_call', id: block.id, name: block.name, arguments: JSON.stringify(block.input) };
    case 'tool_result':
      return { type: 'tool_result', toolCallId: block.tool_use_id, content: (block.content ?? []).map((b) => b.text).join('\n\n'), isError: block.is_error === true };
    case 'thinking':
    case 'redacted_thinking':
      return null;
  }
}

const TOOL_CHOICE: Record<'auto' | 'any' | 'none', CanonicalToolChoice> = { auto: 'auto', any: 'required', none: 'none' };

/** A Messages request in canonical form; 422 (`validation_failed`) with the offending field's loc. */
export function parseMessagesRequest(body: unknown): CanonicalRequest {
  const request = parseInput(messagesRequestSchema, body);
  const messages: CanonicalMessage[] = request.messages.map((m) => ({
    role: m.role,
    parts: m.content.map(partOf).filter((p): p is CanonicalPart => p !== null),
  }));
  // System blocks are separate paragraphs of one prompt (often split only to place cache_control).
  const system = (request.system ?? []).map((b) => b.text).join('\n\n');
  const choice = request.tool_choice;
  return {
    model: request.model,
    system: system || null,
    messages,
    tools: (request.tools ?? []).map((t) => ({ name: t.name, description: t.description ?? null, parameters: t.input_schema })),
    toolChoice: choice ? (choice.type === 'tool' ? { name: choice.name } : TOOL_CHOICE[choice.type]) : null,
    maxOutputTokens: request.max_tokens,
    temperature: request.temperature ?? null,
    topP: request.top_p ?? null,
    stop: request.stop_sequences ?? [],
    stream: request.stream === true,
  };
}

// ---------------------------------------------------------------------------------------------------
// Responses

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
 * A tool call's JSON-text arguments as the object Anthropic's `input` must be. The canonical form
 * keeps the model's text exactly as produced, and an upstream of another kind can produce text that
 * is not a JSON object (cut off at max_tokens, or just malformed); the client is still owed a valid
 * `tool_use` block, so such input becomes `{}` rather than failing the whole response.
 */
export function toolInputOf(args: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(args || '{}');
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A canonical response as a Messages API `message`. */
export function renderMessage(response: CanonicalResponse, who: ResponseIdentity): object {
  return {
    id: messageId(who),
    type: 'message',
    role: 'assistant',
    model: who.model,
    content: response.parts.map((p) =>
      p.type === 'text' ? { type: 'text', text: p.text } : { type: 'tool_use', id: p.id, name: p.name, input: toolInputOf(p.arguments) },
    ),
    stop_reason: STOP_TO_ANTHROPIC[response.stopReason ?? 'end'],
    stop_sequence: null,
    usage: response.usage ? messagesUsage(response.usage) : { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: null, cache_read_input_tokens: null },
  };
}

// ---------------------------------------------------------------------------------------------------
// Errors

export type MessagesErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'timeout_error'
  | 'api_error'
  | 'overloaded_error';

/** Which Anthropic error type each of our error codes is shown as (exhaustive: a new code must be mapped). */
export const MESSAGES_ERROR_TYPE: Record<ErrorCode, MessagesErrorType> = {
  validation_failed: 'invalid_request_error',
  bad_request: 'invalid_request_error',
  unauthenticated: 'authentication_error',
  invalid_credentials: 'authentication_error',
  forbidden: 'permission_error',
  not_found: 'not_found_error',
  conflict: 'invalid_request_error',
  rate_limited: 'rate_limit_error',
  insufficient_balance: 'billing_error',
  spend_cap_reached: 'billing_error',
  unavailable: 'overloaded_error',
  payload_too_large: 'request_too_large',
  unsupported_media_type: 'invalid_request_error',
  bad_gateway: 'api_error',
};

/** The Messages API error body. */
export function errorBody(type: MessagesErrorType, message: string): { type: 'error'; error: { type: MessagesErrorType; message: string } } {
  return { type: 'error', error: { type, message } };
}

// ---------------------------------------------------------------------------------------------------
// Streams

function frame(type: string, data: object): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/**
 * Canonical events as a Messages SSE stream.
 *
 * Usage: Anthropic reports input usage in `message_start`, but we only know usage at the end, so
 * `message_start` carries zeros (and null cache buckets) and `message_delta` carries the full usage:
 * input, output and both cache buckets. The SDK's accumulator overwrites each non-null field from
 * `message_delta`, so `finalMessage().usage` is the billed usage.
 *
 * Blocks: Anthropic streams one content block at a time with indices 0, 1, 2… in order, and SDKs
 * rely on that. A block opens at its part's first event (so a part that never produces text never
 * becomes an empty block) and closes at `part_end`, when the next part opens (some upstreams only
 * say parts ended at the very end), or at `finish`. Text arriving for a part already closed opens a
 * new text block; arguments arriving for a closed tool call still go out under its block index
 * (SDKs accumulate by index), so nothing the model produced is dropped.
 */
export class MessagesStreamEncoder implements StreamEncoder {
  private nextBlock = 0;
  /** The block being streamed, if any, and the canonical part it renders. */
  private open: { part: number; block: number } | null = null;
  /** Canonical tool-call part -> its block index (a late argument delta needs it after the block closed). */
  private readonly toolBlocks = new Map<number, number>();
  private stopReason: StopReason | null = null;

  constructor(private readonly who: ResponseIdentity) {}

  start(): string {
    const message = {
      id: messageId(this.who),
      type: 'message',
      role: 'assistant',
      model: this.who.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: null, cache_read_input_tokens: null },
    };
    return frame('message_start', { message }) + frame('ping', {});
  }

  event(event: CanonicalEvent): string {
    switch (event.type) {
      case 'text_delta': {
        if (!event.text) return '';
        const opening = this.open?.part === event.index ? '' : this.openBlock(event.index, { type: 'text', text: '' });
        return opening + frame('content_block_delta', { index: this.open!.block, delta: { type: 'text_delta', text: event.text } });
      }
      case 'tool_call_start': {
        const opening = this.openBlock(event.index, { type: 'tool_use', id: event.id, name: event.name, input: {} });
        this.toolBlocks.set(event.index, this.open!.block);
        return opening;
      }
      case 'tool_call_delta': {
        const block = this.toolBlocks.get(event.index);
        // A delta for a call that never started has no id or name to open a block with.
        if (block === undefined || !event.argumentsDelta) return '';
        return frame('content_block_delta', { index: block, delta: { type: 'input_json_delta', partial_json: event.argumentsDelta } });
      }
      case 'part_end':
        return this.open?.part === event.index ? this.closeOpen() : '';
      case 'stop':
        this.stopReason = event.reason;
        return '';
      case 'usage':
        // `finish` receives the usage that was billed, which is what the client is shown.
        return '';
    }
  }

  finish(usage: CanonicalUsage | null): string {
    const delta = { stop_reason: STOP_TO_ANTHROPIC[this.stopReason ?? 'end'], stop_sequence: null };
    // Without reported usage there is nothing honest to say about input; output_tokens is required.
    const shown = usage ? messagesUsage(usage) : { input_tokens: null, output_tokens: 0, cache_creation_input_tokens: null, cache_read_input_tokens: null };
    return this.closeOpen() + frame('message_delta', { delta, usage: shown }) + frame('message_stop', {});
  }

  fail(message: string, _code: string): string {
    // Mid-stream failures are always ours or the route's (never the client's request): `api_error`.
    // Like Anthropic's own, the error event ends the stream as is: no block stop, no message_stop.
    return frame('error', { error: { type: 'api_error', message } });
  }

  private openBlock(part: number, contentBlock: object): string {
    const closing = this.closeOpen();
    this.open = { part, block: this.nextBlock++ };
    return closing + frame('content_block_start', { index: this.open.block, content_block: contentBlock });
  }

  private closeOpen(): string {
    if (!this.open) return '';
    const index = this.open.block;
    this.open = null;
    return frame('content_block_stop', { index });
  }
}
