import type { AffinityRule } from '../../affinity-key.js';
import { prepareResponsesRequest } from '../../responses-state.js';
import { checkCanonicalCapabilities, type ClientFormat, type ParsedRequest } from '../client-format.js';
import { OPENAI_ERRORS } from '../openai-errors.js';
import { renderResponse, type ResponsesEcho } from './answer.js';
import { parseResponses } from './request.js';
import { responsesSameFormat } from './same-format.js';
import { ResponsesStreamEncoder } from './stream.js';

function responsesEcho(parsed: ParsedRequest): ResponsesEcho {
  const { tools, previous_response_id: previous, store } = parsed.raw;
  return { ...(Array.isArray(tools) ? { tools } : {}), previousResponseId: typeof previous === 'string' ? previous : null, store: store !== false };
}

/** Responses name their cache `prompt_cache_key`; the prompt is the instructions, the tools, then the input. */
const responsesAffinity: AffinityRule = {
  keyScope: 'cache',
  namedKey: (body) => body.prompt_cache_key,
  writePrompt(body, out) {
    out.system(body.instructions);
    out.tools(body.tools);
    // A string input is one user message: the same prompt as its item form.
    if (typeof body.input === 'string') out.message({ role: 'user', content: body.input });
    else if (Array.isArray(body.input)) for (let i = 0; i < body.input.length && !out.full; i++) out.message(body.input[i]);
  },
};

/** OpenAI Responses. */
export const openAiResponses: ClientFormat = {
  id: 'openai-responses',
  endpoints: ['/v1/responses', '/v1/bridge/responses'],
  operation: 'responses',
  // Stored responses (`previous_response_id`, `item_reference`) are expanded before the request is parsed.
  prepare: (body, state) => (state.responses ? prepareResponsesRequest(state.responses, state.log, state.owner, body) : Promise.resolve({ body, save: null })),
  parse: (body) => ({ ...parseResponses(body), raw: body as Record<string, unknown>, streamUsage: true }),
  checkCapabilities: (parsed, model) => checkCanonicalCapabilities(parsed.canonical, model, { messages: 'input', maxTokens: 'max_output_tokens' }),
  // Responses echo the request's settings (instructions, the client's own tools, sampling).
  render: (response, who, parsed) => renderResponse(response, who, parsed.canonical, responsesEcho(parsed)),
  encoder: (who, parsed) => new ResponsesStreamEncoder(who, parsed.canonical, responsesEcho(parsed)),
  sameFormat: responsesSameFormat,
  affinity: responsesAffinity,
  errors: OPENAI_ERRORS,
};
