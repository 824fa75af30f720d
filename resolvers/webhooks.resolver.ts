import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { requireActor, type RequestContext } from '../src/context.js';
import { domainInput } from './args.js';
import { CreateWebhookEndpointInput, UpdateWebhookEndpointInput, WebhookDelivery, WebhookEndpoint, WebhookEndpointWithSecret, WebhookEventTypeInfo } from './types/webhooks.types.js';

@Resolver()
export class WebhooksResolver {
  @Query(() => [WebhookEventTypeInfo], { description: 'The event types a webhook endpoint may subscribe to.' })
  webhookEventTypes(@Ctx() ctx: RequestContext, @Arg('language', () => String, { nullable: true }) language?: string | null): WebhookEventTypeInfo[] {
    return ctx.services.webhooks.eventTypes(language === 'ru' ? 'ru' : 'en');
  }

  @Query(() => [WebhookEndpoint], { description: 'The signed-in account’s webhook endpoints.' })
  async webhookEndpoints(@Ctx() ctx: RequestContext): Promise<WebhookEndpoint[]> {
    return ctx.services.webhooks.list(requireActor(ctx));
  }

  @Query(() => [WebhookDelivery], { description: 'One endpoint’s deliveries, newest first.' })
  async webhookDeliveries(@Ctx() ctx: RequestContext, @Arg('endpointId', () => ID) endpointId: string, @Arg('limit', () => Int, { nullable: true }) limit?: number | null): Promise<WebhookDelivery[]> {
    return ctx.services.webhooks.deliveries(requireActor(ctx), endpointId, limit ?? undefined);
  }

  @Mutation(() => WebhookEndpointWithSecret, { description: 'Registers an endpoint; its secret is returned this once.' })
  async createWebhookEndpoint(@Ctx() ctx: RequestContext, @Arg('input', () => CreateWebhookEndpointInput) input: CreateWebhookEndpointInput): Promise<WebhookEndpointWithSecret> {
    return ctx.services.webhooks.create(requireActor(ctx), domainInput(input, 'description'));
  }

  @Mutation(() => WebhookEndpoint)
  async updateWebhookEndpoint(@Ctx() ctx: RequestContext, @Arg('input', () => UpdateWebhookEndpointInput) input: UpdateWebhookEndpointInput): Promise<WebhookEndpoint> {
    return ctx.services.webhooks.update(requireActor(ctx), domainInput(input, 'description'));
  }

  @Mutation(() => Boolean)
  async deleteWebhookEndpoint(@Ctx() ctx: RequestContext, @Arg('id', () => ID) id: string): Promise<boolean> {
    await ctx.services.webhooks.remove(requireActor(ctx), id);
    return true;
  }

  @Mutation(() => WebhookEndpointWithSecret, { description: 'A new secret; for 24 hours deliveries carry signatures by both the new and the old one.' })
  async rotateWebhookSecret(@Ctx() ctx: RequestContext, @Arg('id', () => ID) id: string): Promise<WebhookEndpointWithSecret> {
    return ctx.services.webhooks.rotateSecret(requireActor(ctx), id);
  }

  @Mutation(() => String, { description: 'Queues a `webhook.test` event to the endpoint; answers its webhook-id.' })
  async sendTestWebhook(@Ctx() ctx: RequestContext, @Arg('endpointId', () => ID) endpointId: string): Promise<string> {
    return ctx.services.webhooks.sendTest(requireActor(ctx), endpointId);
  }

  @Mutation(() => WebhookDelivery, { description: 'Sends a delivery’s event again, with the same webhook-id.' })
  async replayWebhookDelivery(@Ctx() ctx: RequestContext, @Arg('deliveryId', () => ID) deliveryId: string): Promise<WebhookDelivery> {
    return ctx.services.webhooks.replay(requireActor(ctx), deliveryId);
  }
}
