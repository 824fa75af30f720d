import { z } from 'zod';
import { REASONING_EFFORTS } from '../../canonical.js';
import { openUnion } from '../open-union.js';

/**
 * The OpenAI Responses request contract (`POST /v1/responses`). Shapes follow the `openai` SDK's
 * Responses types. Stored responses (`previous_response_id`, `item_reference`) are expanded into the
 * full input before a request is parsed, so a reference left here is an unknown one.
 */

const text = z.string();
/**
 * Fields that take "a string or a list" read a string as a one-element list. Normalizing first (rather
 * than a union) keeps the issues inside a malformed list at their own locations.
 */
const stringAsList = <S extends z.ZodType>(list: S, wrap: (text: string) => unknown) => z.preprocess((value) => (typeof value === 'string' ? [wrap(value)] : value), list);

const inputText = z.looseObject({ type: z.literal('input_text'), text });
// Assistant output echoed back: annotations and logprobs are the client's record, not input.
const outputText = z.looseObject({ type: z.literal('output_text'), text });
export const refusalPart = z.looseObject({ type: z.literal('refusal'), refusal: text });
export const inputImage = z.looseObject({ type: z.literal('input_image'), image_url: z.string().min(1).nullish(), file_id: z.string().nullish() });

/** Content parts; other types (input_file, input_audio, ...) reach a native upstream as they are and are refused when translated. */
export const contentPart = openUnion({ input_text: inputText, output_text: outputText, input_image: inputImage, refusal: refusalPart });
export type ContentPart = z.output<typeof contentPart>;

export const messageItem = z
  .looseObject({
    type: z.literal('message'),
    role: z.enum(['user', 'assistant', 'system', 'developer']),
    content: stringAsList(z.array(contentPart), (text) => ({ type: 'input_text', text })),
  })
  .superRefine((item, ctx) => {
    // System and developer messages become instructions, which have no room for images.
    if (item.role === 'system' || item.role === 'developer') {
      item.content.forEach((part, j) => {
        if (part.type === 'input_image') ctx.addIssue({ code: 'custom', path: ['content', j, 'type'], message: `${item.role} messages carry text only` });
      });
    }
  });

export const functionCallItem = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
  namespace: z.string().nullish(),
});

/** Tool output: a string, or parts (text, images, files). */
export const toolOutput = stringAsList(z.array(openUnion({ input_text: inputText, input_image: inputImage, output_text: outputText })), (text) => ({ type: 'input_text', text }));
export const functionCallOutputItem = z.looseObject({ type: z.literal('function_call_output'), call_id: z.string().min(1), output: toolOutput });

export const customToolCallItem = z.looseObject({
  type: z.literal('custom_tool_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  input: z.string(),
  namespace: z.string().nullish(),
});
const customToolCallOutputItem = z.looseObject({ type: z.literal('custom_tool_call_output'), call_id: z.string().min(1), output: toolOutput });

export const reasoningItem = z.looseObject({
  type: z.literal('reasoning'),
  summary: z.array(z.looseObject({ type: z.string(), text: z.string() })).nullish(),
  content: z.array(z.looseObject({ type: z.string(), text: z.string() })).nullish(),
  encrypted_content: z.string().nullish(),
});

export const inputItem = z.preprocess(
  // A message item may leave out `type` (the SDK's EasyInputMessage); give it one so the union can dispatch.
  (value) => (value !== null && typeof value === 'object' && !Array.isArray(value) && !('type' in value) ? { ...value, type: 'message' } : value),
  openUnion({
    message: messageItem,
    function_call: functionCallItem,
    function_call_output: functionCallOutputItem,
    custom_tool_call: customToolCallItem,
    custom_tool_call_output: customToolCallOutputItem,
    reasoning: reasoningItem,
  }),
);
export type InputItem = z.output<typeof inputItem>;

const functionName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'Function names are 1-64 letters, digits, "_" or "-"');
export const functionTool = z.looseObject({
  type: z.literal('function'),
  name: functionName,
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});
export const customTool = z.looseObject({
  type: z.literal('custom'),
  name: functionName,
  description: z.string().nullish(),
  format: z.looseObject({ type: z.string(), syntax: z.string().nullish(), definition: z.string().nullish() }).nullish(),
});
export const namespaceTool = z.looseObject({
  type: z.literal('namespace'),
  name: z.string().min(1),
  description: z.string().nullish(),
  tools: z.array(openUnion({ function: functionTool, custom: customTool })).min(1),
});
/** Function, custom and namespace tools; any other type is a hosted tool (web_search, file_search, mcp, ...). */
export const tool = openUnion({ function: functionTool, custom: customTool, namespace: namespaceTool });

const toolChoice = z.union([z.enum(['auto', 'none', 'required']), z.looseObject({ type: z.string().min(1) })], {
  error: 'tool_choice is "auto", "none", "required" or an object with a type',
});

const textFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({ type: z.literal('json_schema'), name: z.string().min(1), schema: z.record(z.string(), z.unknown()), description: z.string().nullish(), strict: z.boolean().nullish() }),
]);

export const responsesRequestSchema = z
  .looseObject({
    model: z.string().min(1).max(128),
    // A string input is one user message.
    input: stringAsList(z.array(inputItem).min(1, 'At least one input item is required'), (text) => ({ type: 'message', role: 'user', content: text })),
    instructions: z.string().nullish(),
    tools: z.array(tool).max(128).nullish(),
    tool_choice: toolChoice.nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    max_output_tokens: z.number().int().positive().nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    stream: z.boolean().nullish(),
    text: z.looseObject({ format: textFormat.nullish(), verbosity: z.enum(['low', 'medium', 'high']).nullish() }).nullish(),
    reasoning: z
      .looseObject({ effort: z.enum(REASONING_EFFORTS).nullish(), summary: z.enum(['auto', 'concise', 'detailed']).nullish(), generate_summary: z.enum(['auto', 'concise', 'detailed']).nullish() })
      .nullish(),
    user: z.string().nullish(),
    safety_identifier: z.string().nullish(),
    metadata: z.record(z.string(), z.string()).nullish(),
    service_tier: z.string().nullish(),
    prompt_cache_key: z.string().nullish(),
    store: z.boolean().nullish(),
    include: z.array(z.string()).nullish(),
    truncation: z.enum(['auto', 'disabled']).nullish(),
    // The gateway keeps no Conversations API objects (previous_response_id is expanded before parsing).
    conversation: z.unknown().optional().superRefine((value, ctx) => {
      if (value !== undefined && value !== null) ctx.addIssue({ code: 'custom', message: 'conversation is not supported; send previous_response_id or the whole conversation in input' });
    }),
  })
  .superRefine((body, ctx) => {
    // System and developer items alone leave the model nothing to answer.
    if (body.input.length > 0 && body.input.every((item) => item.type === 'message' && ((item as MessageItem).role === 'system' || (item as MessageItem).role === 'developer'))) {
      ctx.addIssue({ code: 'custom', path: ['input'], message: 'At least one user, assistant or function call item is required' });
    }
    // References are resolved (against stored responses) before a request is parsed; one left is unknown.
    body.input.forEach((item, i) => {
      if (item.type === 'item_reference') ctx.addIssue({ code: 'custom', path: ['input', i, 'type'], message: `Unknown item: ${String((item as { id?: unknown }).id ?? 'item_reference')}` });
    });
  });
export type ResponsesRequest = z.output<typeof responsesRequestSchema>;
export type MessageItem = z.output<typeof messageItem>;
