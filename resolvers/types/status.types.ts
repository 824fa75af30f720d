import { Field, ObjectType, registerEnumType } from 'type-graphql';
import { DateTimeISOResolver } from 'graphql-scalars';

export enum ServiceAvailability {
  active = 'active',
  unavailable = 'unavailable',
}
registerEnumType(ServiceAvailability, { name: 'ServiceAvailability', description: 'An observed status: a group, or a point of a model’s history.' });

export enum ModelServiceStatus {
  active = 'active',
  unavailable = 'unavailable',
  checking = 'checking',
}
registerEnumType(ModelServiceStatus, { name: 'ModelServiceStatus', description: 'A model’s status in a group: `checking` until its first probe.' });

export enum ServiceStatusSubject {
  model = 'model',
  group = 'group',
}
registerEnumType(ServiceStatusSubject, { name: 'ServiceStatusSubject', description: 'What changed: one model in a group, or a group as a whole.' });

@ObjectType({ description: 'One recorded observation of a model in a group.' })
export class ServiceStatusPoint {
  @Field(() => DateTimeISOResolver)
  observedAt!: Date;

  @Field(() => ServiceAvailability)
  status!: ServiceAvailability;
}

@ObjectType({ description: 'Group uptime per window, as percent strings with two decimals (e.g. "99.50").' })
export class ServiceUptime {
  @Field(() => String)
  allTime!: string;

  @Field(() => String)
  last24h!: string;

  @Field(() => String)
  last7d!: string;

  @Field(() => String)
  last30d!: string;
}

@ObjectType({ description: 'A model’s status in one public group.' })
export class ServiceStatusModel {
  @Field(() => String)
  id!: string;

  @Field(() => String)
  label!: string;

  @Field(() => ModelServiceStatus)
  status!: ModelServiceStatus;

  @Field(() => DateTimeISOResolver, { nullable: true, description: 'The last probe; null while checking.' })
  checkedAt!: Date | null;

  @Field(() => [ServiceStatusPoint], { description: 'Recorded observations of the last 24 hours (at most 60, the newest), oldest first.' })
  history!: ServiceStatusPoint[];
}

@ObjectType({ description: 'A public route group: active when any of its models is.' })
export class ServiceStatusGroup {
  @Field(() => String)
  id!: string;

  @Field(() => String)
  label!: string;

  @Field(() => ServiceAvailability)
  status!: ServiceAvailability;

  @Field(() => ServiceUptime)
  uptime!: ServiceUptime;

  @Field(() => [ServiceStatusModel])
  models!: ServiceStatusModel[];
}

@ObjectType({ description: 'The public status page (SPEC.md Service status).' })
export class ServiceStatus {
  @Field(() => DateTimeISOResolver)
  generatedAt!: Date;

  @Field(() => [ServiceStatusGroup])
  groups!: ServiceStatusGroup[];
}

@ObjectType({ description: 'A model in a public group, or a public group as a whole, changed status.' })
export class ServiceStatusChange {
  @Field(() => ServiceStatusSubject)
  subject!: ServiceStatusSubject;

  @Field(() => String)
  groupId!: string;

  @Field(() => String)
  groupLabel!: string;

  @Field(() => String, { nullable: true, description: 'Null when the group as a whole changed.' })
  modelId!: string | null;

  @Field(() => String, { nullable: true })
  modelLabel!: string | null;

  @Field(() => ServiceAvailability)
  status!: ServiceAvailability;

  @Field(() => ModelServiceStatus, { description: '`checking` when nothing had been observed before.' })
  previousStatus!: ModelServiceStatus;

  @Field(() => DateTimeISOResolver)
  observedAt!: Date;
}
