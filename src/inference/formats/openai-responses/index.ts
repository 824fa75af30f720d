import { checkCanonicalCapabilities, type ClientFormat, type ParsedRequest } from '../client-format.js';
import { renderResponse, type ResponsesEcho } from './answer.js';
import { parseResponses } from './request.js';
import { ResponsesStreamEncoder } from './stream.js';

function responsesEcho(parsed: ParsedRequest): ResponsesEcho {
  const { tools, previous_response_id: previous, store } = parsed.raw;
  return { ...(Array.isArray(tools) ? { tools } : {}), previousResponseId: typeof previous === 'string' ? previous : null, store: store !== false };
}

/** OpenAI Responses (`/v1/responses`, the bridge's too). */
export const openAiResponses: ClientFormat = {
  id: 'openai-responses',
  parse: (body) => ({ ...parseResponses(body), raw: body as Record<string, unknown>, streamUsage: true }),
  checkCapabilities: (parsed, model) => checkCanonicalCapabilities(parsed.canonical, model, { messages: 'input', maxTokens: 'max_output_tokens' }),
  // Responses echo the request's settings (instructions, the client's own tools, sampling).
  render: (response, who, parsed) => renderResponse(response, who, parsed.canonical, responsesEcho(parsed)),
  encoder: (who, parsed) => new ResponsesStreamEncoder(who, parsed.canonical, responsesEcho(parsed)),
};
