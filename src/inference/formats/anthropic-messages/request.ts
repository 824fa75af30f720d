import { z } from 'zod';
import type { ValidationIssue } from '../../../shared/errors.js';
import { parseInput } from '../../../shared/validation.js';
import { textOf, type CanonicalImage, type CanonicalMessage, type CanonicalPart, type CanonicalRequest, type CanonicalTool, type CanonicalToolChoice, type ClientFieldNames } from '../../canonical.js';
import { openUnion } from '../open-union.js';

/** The `anthropic-version` clients of /v1/messages send (DESIGN.md: wire formats). */
export const MESSAGES_API_VERSION = '2023-06-01';

/**
 * The Anthropic Messages wire format, client side (what `POST /v1/messages` callers speak): request
 * validation into canonical form. Answers are in answer.ts and stream.ts.
 */

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

/** Blocks inside a tool result: text and images are read; others (tool_reference, search_result, ...) are kept for the upstream as they are. */
const toolResultContent = openUnion({ text: textBlock, image: imageBlock });

const toolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: stringOrBlocks(toolResultContent).optional(),
  is_error: z.boolean().optional(),
});

/** Extended-thinking blocks clients (Claude Code among them) send back in assistant turns, with their signatures. */
const thinkingBlock = z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().optional() });
const redactedThinkingBlock = z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() });

/**
 * Any other block type (server tool calls and results, documents, search results, block types newer
 * than this code) is accepted as it is: an Anthropic upstream gets the body untouched and judges it.
 * Translated to another kind, server-tool blocks are dropped and the rest refused (see `partOf`).
 */
const contentBlock = openUnion({
  text: textBlock,
  image: imageBlock,
  tool_use: toolUseBlock,
  tool_result: toolResultBlock,
  thinking: thinkingBlock,
  redacted_thinking: redactedThinkingBlock,
});
type ContentBlock = z.output<typeof contentBlock>;

/** Which turn each block kind may appear in (the API refuses the others). */
const BLOCK_ROLES: Record<string, 'user' | 'assistant' | 'both'> = {
  text: 'both',
  image: 'user',
  tool_use: 'assistant',
  tool_result: 'user',
  thinking: 'assistant',
  redacted_thinking: 'assistant',
};

const message = z
  .looseObject({
    // Claude Code sends `system` turns inside `messages` for models it does not know.
    role: z.enum(['user', 'assistant', 'system']),
    content: stringOrBlocks(contentBlock),
  })
  .superRefine((m, ctx) => {
    m.content.forEach((block, j) => {
      const allowed = BLOCK_ROLES[block.type] ?? 'both';
      if (m.role !== 'system' && allowed !== 'both' && allowed !== m.role) {
        ctx.addIssue({ code: 'custom', path: ['content', j, 'type'], message: `${block.type} blocks belong in ${allowed} turns`, params: { type: 'value_error' } });
      }
      if (m.role === 'system' && block.type !== 'text') {
        ctx.addIssue({ code: 'custom', path: ['content', j, 'type'], message: 'system turns carry text only', params: { type: 'value_error' } });
      }
    });
  });

const customTool = z.looseObject({
  type: z.literal('custom').optional(),
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'Tool names are 1-64 letters, digits, "_" or "-"'),
  description: z.string().optional(),
  input_schema: z.looseObject({ type: z.literal('object') }),
  strict: z.boolean().optional(),
  defer_loading: z.boolean().optional(),
});

/**
 * A tool: a custom tool (no type, or `custom`), or one of Anthropic's server tools (`web_search_20250305`,
 * `bash_20250124`, ...: any other type, with a name). Server tools are served by an Anthropic upstream
 * only; for other kinds they are withheld from the model and listed (`withheldTools`).
 */
const tool = z.preprocess(
  // A custom tool may leave out its type.
  (value) => (value !== null && typeof value === 'object' && !Array.isArray(value) && !('type' in value) ? { ...value, type: 'custom' } : value),
  openUnion({ custom: customTool }).pipe(z.looseObject({ type: z.string(), name: z.string().min(1, 'Field required') })),
);

const toolChoice = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('none') }),
  z.looseObject({ type: z.literal('tool'), name: z.string().min(1), disable_parallel_tool_use: z.boolean().optional() }),
]);

const thinking = z.discriminatedUnion('type', [
  // The API's minimum budget is 1,024 tokens; it judges the rest (budget below max_tokens) itself.
  z.looseObject({ type: z.literal('enabled'), budget_tokens: z.number().int().positive() }),
  z.looseObject({ type: z.literal('adaptive') }),
  z.looseObject({ type: z.literal('disabled') }),
]);

const jsonSchemaFormat = z.looseObject({ type: z.literal('json_schema'), schema: z.record(z.string(), z.unknown()) });
const EFFORTS = ['low', 'medium', 'high', 'max'] as const;

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
  top_k: z.number().int().positive().optional(),
  stream: z.boolean().optional(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).nullish(),
  thinking: thinking.optional(),
  output_config: z.looseObject({ effort: z.enum(EFFORTS).nullish(), format: jsonSchemaFormat.nullish() }).nullish(),
  // The structured-outputs beta's name for output_config.format.
  output_format: jsonSchemaFormat.nullish(),
  service_tier: z.string().nullish(),
});
export type MessagesRequest = z.output<typeof messagesRequestSchema>;

/** Server-tool blocks in a conversation: the record of a hosted tool's run, meaningful to Anthropic alone. */
const isServerToolBlock = (type: string) => type === 'server_tool_use' || type === 'mcp_tool_use' || (type.endsWith('_tool_result') && type !== 'tool_result');

function partOf(block: ContentBlock, loc: (string | number)[], untranslatable: ValidationIssue[]): CanonicalPart | null {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: (block as z.output<typeof textBlock>).text };
    case 'image': {
      const source = (block as z.output<typeof imageBlock>).source;
      return { type: 'image', image: source.type === 'base64' ? { kind: 'base64', mediaType: source.media_type, data: source.data } : { kind: 'url', url: source.url } };
    }
    case 'tool_use': {
      const use = block as z.output<typeof toolUseBlock>;
      return { type: 'tool_call', id: use.id, name: use.name, arguments: JSON.stringify(use.input) };
    }
    case 'tool_result':
      return toolResultOf(block as z.output<typeof toolResultBlock>, loc, untranslatable);
    case 'thinking': {
      const think = block as z.output<typeof thinkingBlock>;
      return { type: 'reasoning', text: think.thinking, summary: [], opaque: think.signature ? { family: 'anthropic', signature: think.signature } : null };
    }
    case 'redacted_thinking':
      return { type: 'reasoning', text: '', summary: [], opaque: { family: 'anthropic', redactedData: (block as z.output<typeof redactedThinkingBlock>).data } };
    default:
      // Hosted tool runs are dropped for other kinds (like Responses hosted call items); anything else changes what the model sees.
      if (!isServerToolBlock(block.type)) untranslatable.push({ loc: [...loc, 'type'], msg: `${block.type} blocks are not available for this model`, type: 'value_error' });
      return null;
  }
}

function toolResultOf(block: z.output<typeof toolResultBlock>, loc: (string | number)[], untranslatable: ValidationIssue[]): CanonicalPart {
  const texts: string[] = [];
  const images: CanonicalImage[] = [];
  (block.content ?? []).forEach((inner, k) => {
    if (inner.type === 'text') texts.push((inner as z.output<typeof textBlock>).text);
    else if (inner.type === 'image') {
      const source = (inner as z.output<typeof imageBlock>).source;
      images.push(source.type === 'base64' ? { kind: 'base64', mediaType: source.media_type, data: source.data } : { kind: 'url', url: source.url });
    } else if (inner.type !== 'tool_reference') {
      // tool_reference (tool search) names a tool that other kinds already get in full.
      untranslatable.push({ loc: [...loc, 'content', k, 'type'], msg: `${inner.type} blocks in tool results are not available for this model`, type: 'value_error' });
    }
  });
  return { type: 'tool_result', toolCallId: block.tool_use_id, content: texts.join('\n\n'), isError: block.is_error === true, ...(images.length ? { images } : {}) };
}

const TOOL_CHOICE: Record<'auto' | 'any' | 'none', CanonicalToolChoice> = { auto: 'auto', any: 'required', none: 'none' };

/** A Messages request as the pipeline needs it: the canonical form and the server tools withheld from it. */
export interface ParsedMessages {
  canonical: CanonicalRequest;
  /** Types of the server tools in `tools` (e.g. `web_search_20250305`), which only an Anthropic upstream serves. */
  withheldTools: string[];
}

/** Where Messages carry the settings a translating provider may refuse. */
const MESSAGES_FIELD_NAMES: ClientFieldNames = { responseFormat: 'output_config.format', toolChoice: 'tool_choice', topK: 'top_k', temperature: 'temperature' };

/** A Messages request in canonical form; 422 (`validation_failed`) with the offending field's loc. */
export function parseMessages(body: unknown): ParsedMessages {
  const request = parseInput(messagesRequestSchema, body);
  const untranslatable: ValidationIssue[] = [];
  const messages: CanonicalMessage[] = [];
  const system: string[] = (request.system ?? []).map((b) => b.text);
  request.messages.forEach((m, i) => {
    const parts = m.content.map((block, j) => partOf(block, ['messages', i, 'content', j], untranslatable)).filter((p): p is CanonicalPart => p !== null);
    // System turns before the conversation join the system prompt; later ones stay where they are.
    if (m.role === 'system' && messages.length === 0) system.push(textOf(parts));
    else messages.push({ role: m.role, parts });
  });
  for (const field of ['mcp_servers', 'container'] as const) {
    if ((request as Record<string, unknown>)[field] != null) untranslatable.push({ loc: [field], msg: `${field} is not available for this model`, type: 'value_error' });
  }
  const tools: CanonicalTool[] = [];
  const withheld = new Map<string, string>();
  for (const t of request.tools ?? []) {
    if (t.type !== 'custom') {
      withheld.set(t.name, t.type);
      continue;
    }
    const custom = t as z.output<typeof customTool>;
    tools.push({ name: custom.name, description: custom.description ?? null, parameters: custom.input_schema, ...(custom.strict !== undefined ? { strict: custom.strict } : {}) });
  }
  const choice = request.tool_choice;
  let toolChoice: CanonicalToolChoice | null = null;
  if (choice) {
    if (choice.type !== 'tool') toolChoice = TOOL_CHOICE[choice.type];
    else toolChoice = withheld.has(choice.name) ? { hosted: withheld.get(choice.name)! } : { name: choice.name };
  }
  const format = request.output_config?.format ?? request.output_format ?? null;
  const effort = request.output_config?.effort ?? null;
  const think = request.thinking;
  // System blocks are separate paragraphs of one prompt (often split only to place cache_control).
  const systemText = system.filter((text) => text).join('\n\n');
  return {
    withheldTools: [...new Set(withheld.values())],
    canonical: {
      model: request.model,
      system: systemText || null,
      messages,
      tools,
      toolChoice,
      maxOutputTokens: request.max_tokens,
      temperature: request.temperature ?? null,
      topP: request.top_p ?? null,
      stop: request.stop_sequences ?? [],
      stream: request.stream === true,
      fieldNames: MESSAGES_FIELD_NAMES,
      responseFormat: format ? { type: 'json_schema', name: 'response', description: null, schema: format.schema, strict: true } : null,
      reasoning: effort ? { effort, summary: null } : null,
      thinking: think ? (think.type === 'enabled' ? { type: 'enabled', budgetTokens: think.budget_tokens } : { type: think.type }) : null,
      parallelToolCalls: choice && 'disable_parallel_tool_use' in choice && typeof choice.disable_parallel_tool_use === 'boolean' ? !choice.disable_parallel_tool_use : null,
      user: request.metadata?.user_id ?? null,
      metadata: null,
      serviceTier: request.service_tier ?? null,
      topK: request.top_k ?? null,
      promptCacheKey: null,
      verbosity: null,
      untranslatable,
    },
  };
}

/** A Messages request in canonical form; 422 (`validation_failed`) with the offending field's loc. */
export function parseMessagesRequest(body: unknown): CanonicalRequest {
  return parseMessages(body).canonical;
}
