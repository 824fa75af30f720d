import { z } from 'zod';
import { webhookEventTypes } from '../webhook-types.js';
import { MAX_URL_LENGTH } from './url-policy.js';

const eventTypes = z.array(z.enum(webhookEventTypes as [string, ...string[]], `Input should be one of: ${webhookEventTypes.join(', ')}`)).min(1, 'Choose at least one event type').max(webhookEventTypes.length);
const url = z.string().trim().min(1, 'Field required').max(MAX_URL_LENGTH, `The URL must be at most ${MAX_URL_LENGTH} characters`);
const description = z.string().trim().max(256).nullable();
const id = z.uuid('Input should be a valid UUID');

export const createEndpointInput = z.strictObject({
  url,
  eventTypes,
  description: description.optional(),
  /** The language of the e-mail sent if the endpoint is disabled (the cabinet's at creation). */
  language: z.enum(['ru', 'en']).optional(),
});
export type CreateEndpointInput = z.input<typeof createEndpointInput>;

export const updateEndpointInput = z.strictObject({
  id,
  url: url.optional(),
  eventTypes: eventTypes.optional(),
  description: description.optional(),
  enabled: z.boolean().optional(),
});
export type UpdateEndpointInput = z.input<typeof updateEndpointInput>;

export const endpointIdInput = z.strictObject({ id });
export const deliveriesInput = z.strictObject({ endpointId: id, limit: z.number().int().min(1).max(100).default(50) });
