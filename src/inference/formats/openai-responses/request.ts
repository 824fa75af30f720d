import type { ValidationIssue } from '../../../shared/errors.js';
import { parseInput } from '../../../shared/validation.js';
import type { CanonicalRequest, ClientFieldNames } from '../../canonical.js';
import { conversationOf } from './input.js';
import { responsesRequestSchema } from './schema.js';
import { toolChoiceOf, toolsOf } from './tools.js';

/**
 * A Responses request, client side: validated and read into the canonical (hub) form. Hosted tools
 * are withheld and listed; custom and namespaced tools are sent upstream as plain functions and their
 * calls mapped back (docs/inference-fields.md).
 */

/** A Responses request as the pipeline needs it: the canonical form and the hosted tools withheld from it. */
export interface ParsedResponses {
  canonical: CanonicalRequest;
  /** Types of the hosted tools in `tools` (e.g. `web_search`), which only a native Responses upstream serves. */
  withheldTools: string[];
}

/**
 * Request fields that change the answer and that no translated upstream can honour: fine when the
 * request passes straight through to a native Responses upstream, refused (each named) otherwise.
 */
function untranslatableFields(raw: Record<string, unknown>, issues: ValidationIssue[]): void {
  const refuse = (field: string, what: string) => issues.push({ loc: [field], msg: `${what} is not available for this model; leave ${field} out`, type: 'value_error' });
  if (typeof raw.top_logprobs === 'number' && raw.top_logprobs > 0) refuse('top_logprobs', 'Log probabilities are');
  if (raw.max_tool_calls != null) refuse('max_tool_calls', 'A tool call limit is');
  if (raw.background === true) refuse('background', 'Background responses are');
  if (raw.prompt != null) refuse('prompt', 'Stored prompt templates are');
}

/** Where Responses carry the settings a translating provider may refuse. */
const RESPONSES_FIELD_NAMES: ClientFieldNames = { responseFormat: 'text.format', toolChoice: 'tool_choice', topK: 'top_k', temperature: 'temperature' };

/** Validates a Responses request body (422 with located issues) and translates it to the hub format. */
export function parseResponses(body: unknown): ParsedResponses {
  const request = parseInput(responsesRequestSchema, body);
  const untranslatable: ValidationIssue[] = [];
  untranslatableFields(request as Record<string, unknown>, untranslatable);
  const { tools, withheld, names } = toolsOf(request.tools ?? []);
  const { system, messages } = conversationOf(request.input, names, untranslatable);
  if (request.instructions) system.unshift(request.instructions);
  const format = request.text?.format;
  const effort = request.reasoning?.effort ?? null;
  const summary = request.reasoning?.summary ?? request.reasoning?.generate_summary ?? null;
  return {
    withheldTools: withheld,
    canonical: {
      model: request.model,
      system: system.length ? system.join('\n\n') : null,
      messages,
      tools,
      toolChoice: toolChoiceOf(request.tool_choice, names),
      maxOutputTokens: request.max_output_tokens ?? null,
      temperature: request.temperature ?? null,
      topP: request.top_p ?? null,
      stop: [],
      stream: request.stream ?? false,
      fieldNames: RESPONSES_FIELD_NAMES,
      responseFormat: !format
        ? null
        : format.type === 'json_schema'
          ? { type: 'json_schema', name: format.name, description: format.description ?? null, schema: format.schema, strict: format.strict ?? null }
          : { type: format.type },
      reasoning: effort || summary ? { effort, summary } : null,
      thinking: null,
      parallelToolCalls: request.parallel_tool_calls ?? null,
      user: request.safety_identifier ?? request.user ?? null,
      metadata: request.metadata ?? null,
      serviceTier: request.service_tier ?? null,
      topK: null,
      promptCacheKey: request.prompt_cache_key ?? null,
      verbosity: request.text?.verbosity ?? null,
      untranslatable,
    },
  };
}

/** Validates a Responses request body (422 with located issues) and translates it to the hub format. */
export function parseResponsesRequest(body: unknown): CanonicalRequest {
  return parseResponses(body).canonical;
}
