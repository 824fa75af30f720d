import { z } from 'zod';
import { parseInput } from '../shared/validation.js';

/**
 * The OpenAI image-generation wire format (`POST /v1/images/generations`). One image per request
 * (SPEC.md 4.6 rule 4); the image comes back inline as base64 (`data[0].b64_json`), never as a URL
 * that would point at an upstream.
 */
export const imageRequestSchema = z.looseObject({
  model: z.string().min(1).max(128),
  prompt: z.string().trim().min(1, 'The prompt must not be empty').max(32_000),
  n: z.literal(1, 'Only 1 image per request is supported').nullish(),
  size: z
    .string()
    .regex(/^(auto|[1-9]\d{1,4}x[1-9]\d{1,4})$/, 'Size should be WIDTHxHEIGHT, e.g. 1024x1024, or auto')
    .optional(),
  quality: z.enum(['auto', 'standard', 'hd', 'low', 'medium', 'high']).optional(),
  response_format: z.literal('b64_json', 'Only b64_json is supported: the image is returned inline').nullish(),
});
export type ImageRequest = z.output<typeof imageRequestSchema>;

export function parseImageRequest(body: unknown): ImageRequest {
  return parseInput(imageRequestSchema, body);
}

/** The upstream body: the client's request for the upstream's model, always one inline image. */
export function toImageUpstreamRequest(request: ImageRequest, upstreamModel: string): Record<string, unknown> {
  return { ...request, model: upstreamModel, n: 1, response_format: 'b64_json' };
}

/** The first image of an upstream answer, or null when there is none. */
export function imageOf(body: any): { b64: string; revisedPrompt: string | null } | null {
  const first = Array.isArray(body?.data) ? body.data[0] : undefined;
  if (typeof first?.b64_json !== 'string' || !first.b64_json) return null;
  return { b64: first.b64_json, revisedPrompt: typeof first.revised_prompt === 'string' ? first.revised_prompt : null };
}

export function renderImage(image: { b64: string; revisedPrompt: string | null }, created: number): object {
  return { created, data: [{ b64_json: image.b64, ...(image.revisedPrompt ? { revised_prompt: image.revisedPrompt } : {}) }] };
}
