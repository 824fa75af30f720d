import type { z } from 'zod';
import type { ValidationIssue } from '../../../shared/errors.js';
import { textOf, type CanonicalImage, type CanonicalMessage, type CanonicalPart } from '../../canonical.js';
import { reasoningPartOf } from './reasoning.js';
import type { ContentPart, customToolCallItem, functionCallItem, functionCallOutputItem, inputImage, InputItem, MessageItem, reasoningItem, refusalPart, toolOutput } from './schema.js';
import { toolKey, type ToolNames } from './tools.js';

/**
 * Responses input items in canonical form: messages, reasoning, tool calls and their outputs. What a
 * translated upstream cannot take is recorded as `untranslatable` (the request is refused with it
 * when it has to be translated).
 */

/** Hosted tool items the client echoes back (`web_search_call`, `mcp_call`, ...): a record of a hosted run, dropped for translated upstreams. */
const isHostedItem = (type: string) => /_call$|_call_output$/.test(type) || type.startsWith('mcp_') || type === 'tool_search_output';

function textOfParts(parts: z.output<typeof toolOutput>, loc: (string | number)[], untranslatable: ValidationIssue[]): { text: string; images: CanonicalImage[] } {
  const images: CanonicalImage[] = [];
  const texts: string[] = [];
  parts.forEach((part, j) => {
    if (part.type === 'input_text' || part.type === 'output_text') texts.push((part as { text: string }).text);
    else if (part.type === 'input_image' && (part as z.output<typeof inputImage>).image_url) images.push({ kind: 'url', url: (part as z.output<typeof inputImage>).image_url! });
    else untranslatable.push({ loc: [...loc, j, 'type'], msg: `${part.type === 'input_image' ? 'Images by file id' : part.type} are not available for this model; send images as image_url`, type: 'value_error' });
  });
  return { text: texts.join(''), images };
}

/**
 * Input items -> system texts and canonical messages. An assistant turn in the Responses format is a
 * run of reasoning, message and call items, so they join one assistant message; consecutive call
 * outputs become one user message of tool results (a user message item after them starts a new
 * one). System and developer items before the conversation are instructions; later ones stay where
 * they are, as system turns.
 */
export function conversationOf(items: InputItem[], names: ToolNames, untranslatable: ValidationIssue[]): { system: string[]; messages: CanonicalMessage[] } {
  const system: string[] = [];
  const messages: CanonicalMessage[] = [];
  // The kind of the last item kept, so tool results only merge with tool results.
  let lastKind: string | null = null;
  const assistant = (part: CanonicalPart) => {
    const last = messages.at(-1);
    if (last?.role === 'assistant') last.parts.push(part);
    else messages.push({ role: 'assistant', parts: [part] });
  };
  const toolResult = (part: CanonicalPart) => {
    const last = messages.at(-1);
    if (last?.role === 'user' && lastKind === 'tool_output') last.parts.push(part);
    else messages.push({ role: 'user', parts: [part] });
  };
  items.forEach((item, i) => {
    let kind = item.type;
    switch (item.type) {
      case 'message': {
        const message = item as MessageItem;
        const parts = message.content.flatMap((part, j) => partOf(part, ['input', i, 'content', j], untranslatable));
        if (message.role === 'system' || message.role === 'developer') {
          if (messages.length === 0) system.push(textOf(parts));
          else messages.push({ role: 'system', parts });
        } else if (message.role === 'assistant') parts.forEach(assistant);
        else messages.push({ role: 'user', parts });
        kind = message.role;
        break;
      }
      case 'reasoning':
        assistant(reasoningPartOf(item as z.output<typeof reasoningItem>));
        break;
      case 'function_call': {
        const call = item as z.output<typeof functionCallItem>;
        assistant({ type: 'tool_call', id: call.call_id, name: names.get(toolKey(call.namespace, call.name)) ?? call.name, arguments: call.arguments });
        break;
      }
      case 'custom_tool_call': {
        const call = item as z.output<typeof customToolCallItem>;
        assistant({ type: 'tool_call', id: call.call_id, name: names.get(toolKey(call.namespace, call.name)) ?? call.name, arguments: JSON.stringify({ input: call.input }) });
        break;
      }
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const output = item as z.output<typeof functionCallOutputItem>;
        const { text: content, images } = textOfParts(output.output, ['input', i, 'output'], untranslatable);
        toolResult({ type: 'tool_result', toolCallId: output.call_id, content, isError: false, ...(images.length ? { images } : {}) });
        kind = 'tool_output';
        break;
      }
      default:
        if (!isHostedItem(item.type)) untranslatable.push({ loc: ['input', i, 'type'], msg: `${item.type} items are not available for this model`, type: 'value_error' });
        return;
    }
    lastKind = kind;
  });
  return { system, messages };
}

function partOf(part: ContentPart, loc: (string | number)[], untranslatable: ValidationIssue[]): CanonicalPart[] {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return [{ type: 'text', text: (part as { text: string }).text }];
    case 'refusal':
      return [{ type: 'text', text: (part as z.output<typeof refusalPart>).refusal }];
    case 'input_image': {
      // The image `detail` hint has no canonical counterpart and is dropped.
      const url = (part as z.output<typeof inputImage>).image_url;
      if (url) return [{ type: 'image', image: { kind: 'url', url } }];
      untranslatable.push({ loc: [...loc, 'file_id'], msg: 'Images by file id are not available for this model; send image_url (an https or data: URL)', type: 'value_error' });
      return [];
    }
    default:
      untranslatable.push({ loc: [...loc, 'type'], msg: `${part.type} parts are not available for this model`, type: 'value_error' });
      return [];
  }
}
