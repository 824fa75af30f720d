import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import type { PubSub } from '../src/shared/pubsub.js';
import { AccountResolver } from './account.resolver.js';
import { AdminResolver } from './admin.resolver.js';
import { CatalogResolver } from './catalog.resolver.js';
import { KeysResolver } from './keys.resolver.js';
import { VideoResolver } from './video.resolver.js';
import { AnnouncementsResolver } from './announcements.resolver.js';
import { StatusResolver } from './status.resolver.js';
import { UsageResolver } from './usage.resolver.js';
import { PaymentsResolver } from './payments.resolver.js';
import { OperationsResolver } from './operations.resolver.js';

import { UpstreamsResolver } from './upstreams.resolver.js';
import { EventsResolver } from './events.resolver.js';
import { AlertsResolver } from './alerts.resolver.js';
import { WebhooksResolver } from './webhooks.resolver.js';
import { OrganizationsResolver } from './organizations.resolver.js';

export const resolvers = [AccountResolver, KeysResolver, CatalogResolver, AdminResolver, VideoResolver, UsageResolver, StatusResolver, AnnouncementsResolver, PaymentsResolver, UpstreamsResolver, OperationsResolver, EventsResolver, WebhooksResolver, AlertsResolver, OrganizationsResolver] as const;

/** Builds the executable schema; `schema/schema.graphql` is this schema printed (a test keeps them equal). */
export function buildGraphQLSchema(pubSub: PubSub): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers,
    pubSub,
    validate: false,
    emitSchemaFile: false,
  });
}
