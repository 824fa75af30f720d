import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { DateTimeISOResolver } from 'graphql-scalars';
import type { CreateEndpointInput, UpdateEndpointInput } from '../../src/events/webhooks/webhooks.schemas.js';
import type { SameFields } from '../args.js';

@ObjectType({ description: 'An outbound webhook endpoint (Standard Webhooks signatures; the secret is shown only at creation and rotation).' })
export class WebhookEndpoint {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  url!: string;

  @Field(() => String, { nullable: true })
  description!: string | null;

  @Field(() => [String], { description: 'The event types delivered (see webhookEventTypes).' })
  eventTypes!: string[];

  @Field(() => Boolean)
  enabled!: boolean;

  @Field(() => String, { nullable: true, description: 'Why it is disabled: `failing` (deliveries failed for days; the owner was e-mailed) or `owner`.' })
  disabledReason!: string | null;

  @Field(() => DateTimeISOResolver, { nullable: true, description: 'After a rotation: until when the previous secret still signs beside the new one.' })
  previousSecretExpiresAt!: Date | null;

  @Field(() => DateTimeISOResolver)
  createdAt!: Date;

  @Field(() => DateTimeISOResolver)
  updatedAt!: Date;
}

@ObjectType({ description: 'An endpoint with its signing secret (`whsec_…`), returned once.' })
export class WebhookEndpointWithSecret extends WebhookEndpoint {
  @Field(() => String)
  secret!: string;
}

@ObjectType({ description: 'One event sent (or being sent) to one endpoint.' })
export class WebhookDelivery {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  endpointId!: string;

  @Field(() => String, { description: 'The `webhook-id` header: the same on every retry and replay.' })
  messageId!: string;

  @Field(() => String)
  eventType!: string;

  @Field(() => String, { description: '`pending` (being retried), `delivered` or `failed` (retries spent).' })
  status!: string;

  @Field(() => Int)
  attempts!: number;

  @Field(() => DateTimeISOResolver, { nullable: true })
  nextAttemptAt!: Date | null;

  @Field(() => DateTimeISOResolver, { nullable: true })
  lastAttemptAt!: Date | null;

  @Field(() => Int, { nullable: true })
  lastStatusCode!: number | null;

  @Field(() => String, { nullable: true, description: 'timeout, connection_refused, connection_error, dns, tls, forbidden_address, redirect or status.' })
  lastError!: string | null;

  @Field(() => Int, { nullable: true })
  lastDurationMs!: number | null;

  @Field(() => String, { nullable: true, description: 'The receiver’s answer, its first 1 KiB.' })
  lastResponseBody!: string | null;

  @Field(() => DateTimeISOResolver, { nullable: true })
  deliveredAt!: Date | null;

  @Field(() => DateTimeISOResolver)
  createdAt!: Date;
}

@ObjectType()
export class WebhookEventTypeInfo {
  @Field(() => String)
  type!: string;

  @Field(() => String)
  description!: string;
}

@InputType()
export class CreateWebhookEndpointInput {
  @Field(() => String, { description: 'https only; no private or local addresses; no credentials.' })
  url!: string;

  @Field(() => [String])
  eventTypes!: string[];

  @Field(() => String, { nullable: true })
  description?: string | null;

  @Field(() => String, { nullable: true, description: '`ru` or `en`: the language of e-mails about this endpoint.' })
  language?: 'ru' | 'en' | null;
}

@InputType()
export class UpdateWebhookEndpointInput {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { nullable: true })
  url?: string | null;

  @Field(() => [String], { nullable: true })
  eventTypes?: string[] | null;

  @Field(() => String, { nullable: true })
  description?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'Re-enabling clears `disabledReason`.' })
  enabled?: boolean | null;
}

const createMatches: SameFields<CreateWebhookEndpointInput, CreateEndpointInput> = true;
const updateMatches: SameFields<UpdateWebhookEndpointInput, UpdateEndpointInput> = true;
void createMatches;
void updateMatches;
