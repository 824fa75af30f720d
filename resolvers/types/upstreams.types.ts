import { Field, Float, ID, InputType, Int, ObjectType } from 'type-graphql';
import { DateTimeISOResolver } from 'graphql-scalars';

@ObjectType({ description: 'Milliseconds.' })
export class UpstreamTimeouts {
  @Field(() => Int, { description: 'To open a connection.' })
  connectMs!: number;

  @Field(() => Int, { description: 'Until the answer’s headers.' })
  firstByteMs!: number;

  @Field(() => Int, { description: 'Between two pieces of the answer’s body.' })
  idleMs!: number;

  @Field(() => Int, { description: 'How long an idle connection is kept when the upstream names no Keep-Alive timeout.' })
  keepAliveMs!: number;
}

@ObjectType({ description: 'How routing judges the upstream’s health (the operator file’s `health`).' })
export class UpstreamHealthSettings {
  @Field(() => Float)
  windowSeconds!: number;

  @Field(() => Int)
  minFailures!: number;

  @Field(() => Float)
  failureRate!: number;

  @Field(() => Float)
  cooldownSeconds!: number;

  @Field(() => Float)
  maxCooldownSeconds!: number;

  @Field(() => Int)
  stallMs!: number;
}

@ObjectType({ description: 'A credential of an upstream’s pool. Its secret is never shown: a stored one shows at most its last four characters, an environment one its variable’s name.' })
export class AdminUpstreamCredential {
  @Field(() => ID)
  id!: string;

  @Field(() => ID, { description: 'The id routing knows it by: in adminUpstreamHealth, upstreamHealthChanged, testUpstreamCredential, metrics and traces.' })
  routingId!: string;

  @Field(() => String)
  label!: string;

  @Field(() => String, { description: '`stored` (sealed in the database) or `env` (read from an environment variable).' })
  source!: string;

  @Field(() => String, { nullable: true, description: 'A stored secret’s last characters (at most four).' })
  last4!: string | null;

  @Field(() => String, { nullable: true, description: 'The environment variable holding the secret.' })
  env!: string | null;

  @Field(() => Boolean)
  enabled!: boolean;

  @Field(() => Int, { nullable: true, description: 'Requests in flight through it at most, per process; null: only the upstream’s limit.' })
  maxConcurrent!: number | null;

  @Field(() => Boolean, { description: 'Whether its secret can be had now (the variable is set; the stored secret opens).' })
  usable!: boolean;

  @Field(() => String, { nullable: true, description: 'Why it is not usable.' })
  problem!: string | null;

  @Field(() => DateTimeISOResolver)
  createdAt!: Date;

  @Field(() => DateTimeISOResolver)
  updatedAt!: Date;
}

@ObjectType({ description: 'A (model, group) the upstream serves.' })
export class AdminUpstreamRoute {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  model!: string;

  @Field(() => String)
  group!: string;

  @Field(() => String, { description: 'The name the upstream knows the model by.' })
  upstreamModel!: string;

  @Field(() => Float)
  weight!: number;

  @Field(() => Int, { description: 'Higher first.' })
  priority!: number;

  @Field(() => Boolean)
  enabled!: boolean;
}

@ObjectType({ description: 'What the upstream charges us for a model (USD decimal strings; null: nothing in that unit).' })
export class AdminUpstreamPrice {
  @Field(() => String)
  model!: string;

  @Field(() => String, { nullable: true })
  inputPer1m!: string | null;

  @Field(() => String, { nullable: true })
  outputPer1m!: string | null;

  @Field(() => String, { nullable: true })
  cacheReadPer1m!: string | null;

  @Field(() => String, { nullable: true })
  cacheWritePer1m!: string | null;

  @Field(() => String, { nullable: true })
  perImage!: string | null;

  @Field(() => String, { nullable: true })
  perVideoSecond!: string | null;
}

@ObjectType({ description: 'An upstream provider as the operator manages it. Never shown to customers.' })
export class AdminUpstream {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { description: '`openai-compatible`, `anthropic` or `video-jobs`.' })
  kind!: string;

  @Field(() => String)
  baseUrl!: string;

  @Field(() => Boolean)
  enabled!: boolean;

  @Field(() => Boolean)
  nativeResponses!: boolean;

  @Field(() => UpstreamTimeouts)
  timeouts!: UpstreamTimeouts;

  @Field(() => Int)
  maxConcurrent!: number;

  @Field(() => [String], { description: 'Upstreams tried, in order, when this one fails before any byte reached the client.' })
  fallback!: string[];

  @Field(() => UpstreamHealthSettings)
  health!: UpstreamHealthSettings;

  @Field(() => Boolean, { description: 'Whether routing serves it now (enabled, with a usable enabled credential and an enabled route).' })
  active!: boolean;

  @Field(() => String, { nullable: true, description: 'Why routing leaves it out.' })
  inactiveReason!: string | null;

  @Field(() => [AdminUpstreamCredential])
  credentials!: AdminUpstreamCredential[];

  @Field(() => [AdminUpstreamRoute])
  routes!: AdminUpstreamRoute[];

  @Field(() => [AdminUpstreamPrice])
  prices!: AdminUpstreamPrice[];

  @Field(() => DateTimeISOResolver)
  createdAt!: Date;

  @Field(() => DateTimeISOResolver)
  updatedAt!: Date;
}

@InputType({ description: 'Absent fields keep their value (or take the default).' })
export class UpstreamTimeoutsInput {
  @Field(() => Int, { nullable: true })
  connectMs?: number | null;

  @Field(() => Int, { nullable: true })
  firstByteMs?: number | null;

  @Field(() => Int, { nullable: true })
  idleMs?: number | null;

  @Field(() => Int, { nullable: true })
  keepAliveMs?: number | null;
}

@InputType({ description: 'Absent fields keep their value (or take the default).' })
export class UpstreamHealthInput {
  @Field(() => Float, { nullable: true })
  windowSeconds?: number | null;

  @Field(() => Int, { nullable: true })
  minFailures?: number | null;

  @Field(() => Float, { nullable: true })
  failureRate?: number | null;

  @Field(() => Float, { nullable: true })
  cooldownSeconds?: number | null;

  @Field(() => Float, { nullable: true })
  maxCooldownSeconds?: number | null;

  @Field(() => Int, { nullable: true })
  stallMs?: number | null;
}

@InputType({ description: 'A credential: give `secret` (stored encrypted, never shown again) or `env` (a variable set in the gateway’s environment). On an update, absent fields keep their value.' })
export class UpstreamCredentialInput {
  @Field(() => String, { nullable: true })
  label?: string | null;

  @Field(() => String, { nullable: true, description: 'Write-only.' })
  secret?: string | null;

  @Field(() => String, { nullable: true })
  env?: string | null;

  @Field(() => Boolean, { nullable: true })
  enabled?: boolean | null;

  @Field(() => Int, { nullable: true, description: 'null: no limit of its own.' })
  maxConcurrent?: number | null;
}

@InputType()
export class UpstreamRouteInput {
  @Field(() => String, { description: 'A catalog model offered in `group`.' })
  model!: string;

  @Field(() => String)
  group!: string;

  @Field(() => String, { nullable: true, description: 'Default: the public model id.' })
  upstreamModel?: string | null;

  @Field(() => Float, { nullable: true, description: 'Default 1.' })
  weight?: number | null;

  @Field(() => Int, { nullable: true, description: 'Default 0; higher first.' })
  priority?: number | null;

  @Field(() => Boolean, { nullable: true, description: 'Default true.' })
  enabled?: boolean | null;
}

@InputType({ description: 'USD decimal strings; absent or null: nothing in that unit.' })
export class UpstreamPriceInput {
  @Field(() => String)
  model!: string;

  @Field(() => String, { nullable: true })
  inputPer1m?: string | null;

  @Field(() => String, { nullable: true })
  outputPer1m?: string | null;

  @Field(() => String, { nullable: true })
  cacheReadPer1m?: string | null;

  @Field(() => String, { nullable: true })
  cacheWritePer1m?: string | null;

  @Field(() => String, { nullable: true })
  perImage?: string | null;

  @Field(() => String, { nullable: true })
  perVideoSecond?: string | null;
}

/** Fields the create and the update share; absent ones keep their value (or take the default). */
@InputType()
abstract class UpstreamOptionsInput {
  @Field(() => Boolean, { nullable: true })
  enabled?: boolean | null;

  @Field(() => Boolean, { nullable: true, description: 'openai-compatible only: the upstream also serves the Responses API.' })
  nativeResponses?: boolean | null;

  @Field(() => UpstreamTimeoutsInput, { nullable: true })
  timeouts?: UpstreamTimeoutsInput | null;

  @Field(() => Int, { nullable: true, description: 'Requests in flight to it at most, per process.' })
  maxConcurrent?: number | null;

  @Field(() => [String], { nullable: true })
  fallback?: string[] | null;

  @Field(() => UpstreamHealthInput, { nullable: true })
  health?: UpstreamHealthInput | null;
}

@InputType({ description: 'A new upstream, optionally with its credentials, routes and prices.' })
export class CreateUpstreamInput extends UpstreamOptionsInput {
  @Field(() => ID, { description: 'Lowercase letters, digits, "_" or "-".' })
  id!: string;

  @Field(() => String, { description: '`openai-compatible`, `anthropic` or `video-jobs`.' })
  kind!: string;

  @Field(() => String, { description: 'http(s), without credentials.' })
  baseUrl!: string;

  @Field(() => [UpstreamCredentialInput], { nullable: true })
  credentials?: UpstreamCredentialInput[] | null;

  @Field(() => [UpstreamRouteInput], { nullable: true })
  routes?: UpstreamRouteInput[] | null;

  @Field(() => [UpstreamPriceInput], { nullable: true })
  prices?: UpstreamPriceInput[] | null;
}

@InputType({ description: 'Absent fields keep their value; `timeouts` and `health` change only the settings they name.' })
export class UpdateUpstreamInput extends UpstreamOptionsInput {
  @Field(() => String, { nullable: true })
  kind?: string | null;

  @Field(() => String, { nullable: true })
  baseUrl?: string | null;
}
