import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type RouteContext, countTokens, forThisSimulator, parseDirectives, sendError, sendStatusError, simulateFailure } from './common.js';

/** A valid 1x1 PNG: clients and gateways may decode what they receive. */
export const PNG_1X1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

/** Image output tokens per image by quality, as GPT image models report them for a 1024x1024 image. */
const IMAGE_TOKENS: Record<string, number> = { low: 272, medium: 1056, high: 4160, xhigh: 4160, max: 4160 };

/**
 * OpenAI image generation. Two response families, chosen by model name as OpenAI does:
 * - `dall-e-*` (legacy): `response_format` url (the default) or b64_json, `revised_prompt` for dall-e-3, no usage;
 * - every other model (GPT image models, and the gateway's mapped names): always b64_json, with the
 *   effective background/output_format/quality/size and token usage. Real `gpt-image-*` models reject
 *   `response_format` with 400 unknown_parameter, and so does the simulator for those names.
 */
export async function imageGenerations(req: IncomingMessage, res: ServerResponse, body: any, ctx: RouteContext): Promise<void> {
  const model = String(body.model ?? '');
  const prompt: unknown = body.prompt;
  if (typeof prompt !== 'string' || !prompt) {
    return sendError(res, 400, `Missing required parameter: 'prompt'. ${ctx.detail}`, 'invalid_request_error', 'missing_required_parameter', 'prompt');
  }
  const sim = forThisSimulator(parseDirectives([{ content: prompt }]), ctx);
  if (await simulateFailure(sim, ctx, 503, (status, message) => sendStatusError(res, status, message), res)) return;

  const legacy = model.startsWith('dall-e');
  if (/^(gpt-image|chatgpt-image)/.test(model) && body.response_format != null) {
    return sendError(res, 400, `Unknown parameter: 'response_format'. ${ctx.detail}`, 'invalid_request_error', 'unknown_parameter', 'response_format');
  }
  const n = body.n ?? 1;
  if (!Number.isInteger(n) || n < 1 || n > 10) {
    return sendError(res, 400, `Invalid 'n': expected an integer between 1 and 10, got ${JSON.stringify(n)}. ${ctx.detail}`, 'invalid_request_error', 'invalid_value', 'n');
  }
  const format = body.response_format ?? (legacy ? 'url' : 'b64_json');
  const image = () => ({
    ...(format === 'url' ? { url: `http://${req.headers.host}/images/${randomBytes(8).toString('hex')}.png` } : { b64_json: PNG_1X1.toString('base64') }),
    ...(model === 'dall-e-3' ? { revised_prompt: `A detailed rendering of: ${prompt}` } : {}),
  });
  const data = Array.from({ length: n }, image);
  const created = Math.floor(Date.now() / 1000);
  res.writeHead(200, { 'content-type': 'application/json' });
  if (legacy) return void res.end(JSON.stringify({ created, data }));

  const quality = body.quality in IMAGE_TOKENS ? body.quality : 'medium'; // `auto` resolves to what was used
  const inputTokens = countTokens(prompt);
  const outputTokens = IMAGE_TOKENS[quality]! * n;
  res.end(
    JSON.stringify({
      created,
      background: body.background === 'transparent' ? 'transparent' : 'opaque',
      data,
      output_format: body.output_format ?? 'png',
      quality,
      size: !body.size || body.size === 'auto' ? '1024x1024' : body.size,
      usage: {
        input_tokens: inputTokens,
        input_tokens_details: { text_tokens: inputTokens, image_tokens: 0 },
        output_tokens: outputTokens,
        total_tokens: inputTokens + outputTokens,
      },
    }),
  );
}
