import type { TokenUsage } from '../billing/cost.js';
import type { ValidationIssue } from '../shared/errors.js';

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

/**
 * Opaque reasoning data only the model family that made it can read back: Anthropic's thinking
 * signature or redacted thinking, OpenAI's `encrypted_content`. It round-trips through the canonical
 * form when client and upstream are of the same family, and is dropped when they are not (another
 * family could not verify it).
 */
export type ReasoningOpaque =
  | { family: 'anthropic'; signature: string }
  | { family: 'anthropic'; redactedData: string }
  | { family: 'openai'; encryptedContent: string };

/**
 * A model's reasoning: the text it showed (Anthropic thinking, chat `reasoning_content`, Responses
 * `reasoning_text`), summary paragraphs (Responses reasoning summaries) and any opaque data.
 */
export interface ReasoningPart {
  type: 'reasoning';
  text: string;
  summary: string[];
  opaque: ReasoningOpaque | null;
}

export type CanonicalPart =
  | { type: 'text'; text: string }
  | { type: 'image'; image: CanonicalImage }
  /** A function call the model made; `arguments` is JSON text, exactly as produced. */
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  /** The caller's answer to a tool call, in a user turn; `images` are pictures the tool returned beside its text. */
  | { type: 'tool_result'; toolCallId: string; content: string; isError: boolean; images?: CanonicalImage[] }
  | ReasoningPart;

export interface CanonicalMessage {
  /**
   * `system` is an instruction given mid-conversation (a Responses developer item or an Anthropic
   * `{"role":"system"}` message after the first turn); leading instructions live in `system` instead.
   */
  role: 'user' | 'assistant' | 'system';
  parts: CanonicalPart[];
}

export interface CanonicalTool {
  name: string;
  description: string | null;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
  /** Strict schema adherence for the arguments, when the client asked for it (or explicitly not). */
  strict?: boolean;
  /**
   * How the client declared a tool that is not a plain function: a Responses `custom` tool (free text
   * input, sent upstream as a function with one string parameter `input`), or a function or custom
   * tool inside a `namespace` (flattened under a collision-free name). Calls are mapped back to it.
   */
  origin?: { name: string; namespace: string | null; custom: boolean };
}

export type CanonicalToolChoice =
  | 'auto'
  | 'none'
  | 'required'
  | { name: string }
  /** Only these tools may be called (`allowed_tools`); `required`: one of them must be. */
  | { allowed: string[]; mode: 'auto' | 'required' }
  /** A hosted tool forced by type (e.g. `web_search`); no translated upstream can serve it. */
  | { hosted: string };

/** Structured output: free text (the default), any JSON object, or JSON valid against a schema. */
export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; description: string | null; schema: Record<string, unknown>; strict: boolean | null };

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';
export const REASONING_EFFORTS: readonly ReasoningEffort[] = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'];

/** OpenAI-style reasoning settings (Responses `reasoning`, chat `reasoning_effort`, Anthropic `output_config.effort`). */
export interface CanonicalReasoning {
  effort: ReasoningEffort | null;
  /** A reasoning summary requested (Responses `reasoning.summary`). */
  summary: 'auto' | 'concise' | 'detailed' | null;
}

/** Anthropic's `thinking` setting, as the client sent it. */
export type CanonicalThinking = { type: 'enabled'; budgetTokens: number } | { type: 'adaptive' } | { type: 'disabled' };

/**
 * Where a client format carries the settings a translating provider may refuse, as dotted paths
 * (`text.format`), so that a refusal names the client's own field.
 */
export interface ClientFieldNames {
  responseFormat: string;
  toolChoice: string;
  topK: string;
  temperature: string;
}

export interface CanonicalRequest {
  /** The public model id the client asked for (the upstream's own name is applied by the provider). */
  model: string;
  /** System and developer instructions given before the conversation, joined. */
  system: string | null;
  messages: CanonicalMessage[];
  tools: CanonicalTool[];
  toolChoice: CanonicalToolChoice | null;
  maxOutputTokens: number | null;
  temperature: number | null;
  topP: number | null;
  stop: string[];
  stream: boolean;
  /**
   * The fields below are optional so that a request built by hand (tests, probes) stays short;
   * every parser fills them all. Absent means "not set".
   */
  /** The client format's names of the settings a provider may refuse (absent: chat's names). */
  fieldNames?: ClientFieldNames;
  responseFormat?: ResponseFormat | null;
  reasoning?: CanonicalReasoning | null;
  thinking?: CanonicalThinking | null;
  parallelToolCalls?: boolean | null;
  /** An end-user id for the upstream's abuse tracking (`user` / `safety_identifier` / `metadata.user_id`). */
  user?: string | null;
  /** Client key-value metadata (echoed in Responses; upstreams do not need it). */
  metadata?: Record<string, string> | null;
  serviceTier?: string | null;
  topK?: number | null;
  promptCacheKey?: string | null;
  /** Responses `text.verbosity` / chat `verbosity`: a length hint. */
  verbosity?: 'low' | 'medium' | 'high' | null;
  /**
   * What the request asks that only an upstream of the client's own format can serve (e.g. Anthropic
   * `mcp_servers`, chat `logprobs`): the request is fine when passed straight through, and refused
   * with these issues (each naming its field) when it would have to be translated.
   */
  untranslatable?: ValidationIssue[];
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
export type OutputPart = Extract<CanonicalPart, { type: 'text' } | { type: 'tool_call' } | { type: 'reasoning' }>;

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
  /** Reasoning text (`summary`: a summary paragraph's text rather than the reasoning itself). */
  | { type: 'reasoning_delta'; index: number; text: string; summary?: boolean }
  /** Opaque reasoning data for a reasoning part (a signature arrives at its end, redacted data at its start). */
  | { type: 'reasoning_opaque'; index: number; opaque: ReasoningOpaque }
  | { type: 'part_end'; index: number }
  | { type: 'stop'; reason: StopReason }
  /** The billed usage (cumulative; a later one supersedes). The pipeline bills on these only. */
  | { type: 'usage'; usage: CanonicalUsage }
  /**
   * Input usage an upstream reports at the start of a stream (Anthropic's `message_start`), before
   * any output: for clients that show it early. Not for billing (a `usage` event follows).
   */
  | { type: 'usage_start'; usage: CanonicalUsage };

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
  /**
   * The completed response object in the frames `finish` wrote, where the format has one (Responses:
   * kept for `previous_response_id`); asked only when the answer is to be kept.
   */
  finalResponse?(closing: string): Record<string, unknown> | null;
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
    .map((part) => {
      switch (part.type) {
        case 'text':
          return part.text;
        case 'tool_call':
          return part.arguments;
        case 'tool_result':
          return part.content;
        case 'reasoning':
          return part.text + part.summary.join('');
        case 'image':
          return '';
      }
    })
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
