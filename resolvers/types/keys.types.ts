import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { DateTimeISOResolver } from 'graphql-scalars';
import type { CreateKeyInput as ServiceCreateKeyInput } from '../../src/keys/keys.schemas.js';
import type { SameFields } from '../args.js';

/** The fields every view of a key shares. */
@ObjectType()
abstract class ApiKeyFields {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { nullable: true })
  label!: string | null;

  @Field(() => String)
  providerFamily!: string;

  @Field(() => String)
  routeGroup!: string;

  @Field(() => String)
  pricingPlan!: string;

  @Field(() => String, { nullable: true })
  monthlySpendCap!: string | null;

  @Field(() => DateTimeISOResolver)
  createdAt!: Date;
}

@ObjectType({ description: 'An API key (the secret itself is shown only at creation).' })
export class ApiKey extends ApiKeyFields {
  @Field(() => DateTimeISOResolver, { nullable: true })
  lastUsed!: Date | null;

  @Field(() => ID, { nullable: true, description: 'The member who made an organization’s key; null for a personal key.' })
  createdBy!: string | null;
}

@ObjectType({ description: 'Admin: one key of an account, revoked ones too, with its limit overrides.' })
export class AdminKey extends ApiKey {
  @Field(() => Int, { nullable: true })
  rpmLimit!: number | null;

  @Field(() => Int, { nullable: true })
  concurrencyLimit!: number | null;

  @Field(() => DateTimeISOResolver, { nullable: true })
  revokedAt!: Date | null;
}

@ObjectType({ description: 'A new API key; `key` is the raw secret and is never shown again.' })
export class CreatedApiKey extends ApiKeyFields {
  @Field(() => String)
  key!: string;
}

@InputType()
export class CreateKeyInput {
  @Field(() => String, { nullable: true, description: 'At most 128 characters.' })
  label?: string | null;

  @Field(() => String, { nullable: true, description: 'Default: the first family of the catalog.' })
  providerFamily?: string | null;

  @Field(() => String, { nullable: true, description: 'Default: cheap.' })
  routeGroup?: string | null;

  @Field(() => String, { nullable: true, description: 'Default: siberia.' })
  pricingPlan?: string | null;

  @Field(() => String, { nullable: true, description: 'USD per calendar month (UTC), a decimal string.' })
  monthlySpendCap?: string | null;
}

/** The GraphQL input names exactly the service's fields: one added to the zod schema alone fails to compile here. */
export const createKeyFieldsMatch: SameFields<CreateKeyInput, ServiceCreateKeyInput> = true;

@ObjectType({ description: 'A key as the inference path sees it, with its limit overrides (admin view).' })
export class KeyLimits {
  @Field(() => ID)
  keyId!: string;

  @Field(() => ID)
  userId!: string;

  @Field(() => Int, { nullable: true })
  rpmLimit!: number | null;

  @Field(() => Int, { nullable: true })
  concurrencyLimit!: number | null;

  @Field(() => String, { nullable: true })
  monthlySpendCap!: string | null;
}

@InputType()
export class KeyLimitsInput {
  @Field(() => ID)
  keyId!: string;

  @Field(() => Int, { nullable: true, description: 'Requests per minute; null restores the baseline.' })
  rpmLimit?: number | null;

  @Field(() => Int, { nullable: true, description: 'Concurrent requests; null restores the baseline.' })
  concurrencyLimit?: number | null;

  @Field(() => String, { nullable: true, description: 'USD per month; null removes the cap.' })
  monthlySpendCap?: string | null;
}

@ObjectType({ description: 'An account’s own limits across its keys (admin view).' })
export class AccountLimits {
  @Field(() => ID)
  userId!: string;

  @Field(() => Int, { nullable: true, description: 'Requests in flight across the account’s keys; null: the gateway’s ACCOUNT_CONCURRENCY_LIMIT.' })
  concurrencyLimit!: number | null;
}

@InputType()
export class AccountLimitsInput {
  @Field(() => ID)
  userId!: string;

  @Field(() => Int, { nullable: true, description: 'Requests in flight across the account’s keys; null restores the baseline.' })
  concurrencyLimit!: number | null;
}
