import { Ctx, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { RequestContext } from '../src/context.js';
import { Topics, type ServiceStatusChangedPayload } from '../src/shared/pubsub.js';
import type { ServiceStatusView } from '../src/status/status.service.js';
import {
  ModelServiceStatus,
  ServiceAvailability,
  ServiceStatus,
  ServiceStatusChange,
  ServiceStatusSubject,
} from './types/status.types.js';

function toServiceStatus(view: ServiceStatusView): ServiceStatus {
  return {
    generatedAt: view.generatedAt,
    groups: view.groups.map((group) => ({
      ...group,
      status: group.status as ServiceAvailability,
      models: group.models.map((model) => ({
        ...model,
        status: model.status as ModelServiceStatus,
        history: model.history.map((point) => ({ observedAt: point.observedAt, status: point.status as ServiceAvailability })),
      })),
    })),
  };
}

@Resolver()
export class StatusResolver {
  @Query(() => ServiceStatus, { description: 'The public status page: public groups, their status and uptime, their models’ status and history. No sign-in needed.' })
  async serviceStatus(@Ctx() ctx: RequestContext): Promise<ServiceStatus> {
    return toServiceStatus(await ctx.services.status.get());
  }

  @Subscription(() => ServiceStatusChange, {
    description: 'Every change of a model’s status in a public group, and of a public group’s status. No sign-in needed.',
    topics: Topics.ServiceStatusChanged,
  })
  serviceStatusChanged(@Root() event: ServiceStatusChangedPayload): ServiceStatusChange {
    return {
      ...event,
      subject: event.subject as ServiceStatusSubject,
      status: event.status as ServiceAvailability,
      previousStatus: event.previousStatus as ModelServiceStatus,
    };
  }
}
