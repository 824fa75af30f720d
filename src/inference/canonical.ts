import type { TokenUsage } from '../billing/cost.js';

/**
 * The one hub format between client wire formats (OpenAI chat completions, OpenAI Responses,
 * Anthropic Messages) and upstream kinds (openai-compatible, anthropic). Each client format translates
 * its request to a `CanonicalRequest` and renders `CanonicalResponse`s and `CanonicalEvent` streams
 * back; each upstream kind translates a `CanonicalRequest` out and its answers in. N formats and M
 * kinds need N + M translators. When client and upstream speak the same format the request passes
 * straight through instead (see inference.service).
 *
 * Every translator is a pure function (streams: a small object with explicit state), tested on
 * recorded fixtures.
 */

/** An image, by URL (including data: URLs) or as base64 bytes with their media type. */
export type CanonicalImage = { kind: 'url'; url: string } | { kind: 'base64'; mediaType: string; data: string };

export type CanonicalPart =
  | { type: 'text'; text: string }
  | { type: 'image'; image: CanonicalImage }
  /** A function call the model made; `arguments` is JSON text, exactly as produced. */
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  /** The caller's answer to a tool call, in a user turn. */
  | { type: 'tool_result'; toolCallId: string; content: string; isError: boolean };

export interface CanonicalMessage {
  role: 'user' | 'assistant';
  parts: CanonicalPart[];
}

export interface CanonicalTool {
  name: string;
  description: string | null;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

export type CanonicalToolChoice = 'auto' | 'none' | 'required' | { name: string };

export interface CanonicalRequest {
  /** The public model id the client asked for (the upstream's own name is applied by the provider). */
  model: string;
  /** System and developer instructions, joined. */
  system: string | null;
  messages: CanonicalMessage[];
  tools: CanonicalTool[];
  toolChoice: CanonicalToolChoice | null;
  maxOutputTokens: number | null;
  temperature: number | null;
  topP: number | null;
  stop: string[];
  stream: boolean;
}

/** Why the model stopped, in one vocabulary every format maps to and from. */
export type StopReason = 'end' | 'max_tokens' | 'tool_use' | 'stop_sequence' | 'refusal';

/**
 * Usage in separate buckets. `inputTokens` counts every input token (uncached + cache read + cache
 * write); a cache bucket is null when the upstream did not report it (never 0 for "unknown").
 */
export interface CanonicalUsage extends TokenUsage {
  reasoningTokens: number | null;
}

/** Output parts a model produces. */
export type OutputPart = Extract<CanonicalPart, { type: 'text' } | { type: 'tool_call' }>;

export interface CanonicalResponse {
  parts: OutputPart[];
  stopReason: StopReason | null;
  usage: CanonicalUsage | null;
}

/**
 * A streamed response as events. `index` numbers output parts in order of appearance (a text part
 * and each tool call are separate parts), the same in every format's indices after translation.
 */
export type CanonicalEvent =
  | { type: 'text_delta'; index: number; text: string }
  | { type: 'tool_call_start'; index: number; id: string; name: string }
  | { type: 'tool_call_delta'; index: number; argumentsDelta: string }
  | { type: 'part_end'; index: number }
  | { type: 'stop'; reason: StopReason }
  | { type: 'usage'; usage: CanonicalUsage };

/** What every response or stream we produce says about itself. */
export interface ResponseIdentity {
  /** Our own id, e.g. an event id; formats add their prefix. */
  id: string;
  /** The public model id. */
  model: string;
  /** Unix seconds. */
  created: number;
}

/** Turns canonical events into one client format's stream (SSE text). Stateful: one per response. */
export interface StreamEncoder {
  /** Frames that open the stream (before any model output). */
  start(): string;
  event(event: CanonicalEvent): string;
  /** Frames that close a complete stream; `usage` is what was billed. */
  finish(usage: CanonicalUsage | null): string;
  /** An in-band error that ends the stream (our own words only). */
  fail(message: string, code: string): string;
}

/** Turns an upstream's stream (one SSE event at a time) into canonical events. Stateful: one per response. */
export interface StreamDecoder {
  push(event: { event: string | null; data: string }): CanonicalEvent[];
  /** True once the upstream said the response is complete. */
  readonly done: boolean;
  /** An error the upstream reported in-band, for the operator log. */
  readonly error: string | null;
}

export function totalTokens(usage: TokenUsage): number {
  return usage.inputTokens + usage.outputTokens;
}

/** Text of a tool result or message made of parts, for estimates and for formats that only take text. */
export function textOf(parts: CanonicalPart[]): string {
  return parts
    .map((part) => (part.type === 'text' ? part.text : part.type === 'tool_call' ? part.arguments : part.type === 'tool_result' ? part.content : ''))
    .join('');
}

/** Images are priced by the upstream in tokens we cannot see from here; each counts as this many. */
export const IMAGE_TOKEN_ALLOWANCE = 2_000;

/**
 * An upper bound on a prompt's tokens: the UTF-8 bytes of everything sent except image data (a
 * byte-level tokenizer never makes more tokens than bytes), plus an allowance per image.
 */
export function promptTokenBound(request: CanonicalRequest): number {
  const prompt = { system: request.system, messages: request.messages, tools: request.tools };
  const plain = JSON.stringify(prompt);
  // A key is the only place `"image":` can appear in JSON text (inside a string the quotes are escaped):
  // without one, the replacer below would change nothing, and a replacer makes stringify several times slower.
  if (!plain.includes('"image":')) return Buffer.byteLength(plain);
  let images = 0;
  const text = JSON.stringify(prompt, (key, value) => {
    if (key === 'image') {
      images += 1;
      return null;
    }
    return value;
  });
  return Buffer.byteLength(text) + images * IMAGE_TOKEN_ALLOWANCE;
}

/** The plain text of a prompt, for estimating usage the upstream never reported. */
export function promptText(request: CanonicalRequest): string {
  return [request.system ?? '', ...request.messages.map((m) => textOf(m.parts))].filter((text) => text).join('\n');
}
