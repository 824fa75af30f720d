import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';

@ObjectType({ description: 'Public prices: per 1M tokens for text models, per generation for images, per second or generation for video.' })
export class Pricing {
  @Field(() => String, { nullable: true })
  inputUsdPer1m!: string | null;

  @Field(() => String, { nullable: true })
  outputUsdPer1m!: string | null;

  @Field(() => String, { nullable: true })
  cacheReadUsdPer1m!: string | null;

  @Field(() => String, { nullable: true })
  cacheWriteUsdPer1m!: string | null;

  @Field(() => String, { nullable: true })
  usdPerGeneration!: string | null;

  @Field(() => String, { nullable: true })
  usdPerSecond!: string | null;
}

@ObjectType()
export class ModelCapabilities {
  @Field(() => Boolean)
  tools!: boolean;

  @Field(() => Boolean)
  vision!: boolean;

  @Field(() => Boolean)
  streaming!: boolean;
}

@ObjectType()
export class CatalogModelGroup {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  label!: string;

  @Field(() => String)
  pricingPlan!: string;

  @Field(() => Pricing)
  pricing!: Pricing;
}

@ObjectType()
export class CatalogModel {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  label!: string;

  @Field(() => String)
  family!: string;

  @Field(() => String)
  kind!: string;

  @Field(() => [String], { description: 'The endpoints that accept this model.' })
  endpoints!: string[];

  @Field(() => ModelCapabilities)
  capabilities!: ModelCapabilities;

  @Field(() => Int, { nullable: true })
  contextWindow!: number | null;

  @Field(() => Int, { nullable: true })
  maxOutputTokens!: number | null;

  @Field(() => [CatalogModelGroup])
  groups!: CatalogModelGroup[];

  @Field(() => Pricing, { nullable: true, description: 'The vendor list prices savings are measured against.' })
  official!: Pricing | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Video generation rules (durations, resolutions, ratios, references).' })
  video!: Record<string, unknown> | null;
}

@ObjectType()
export class PricingPlanView {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  label!: string;

  @Field(() => Boolean)
  public!: boolean;

  @Field(() => String)
  multiplier!: string;

  @Field(() => GraphQLJSONObject, { description: 'Per-model prices that win over the multiplier, keyed by model id.' })
  overrides!: Record<string, unknown>;
}

@InputType()
export class PricingPlanInput {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  label!: string;

  @Field(() => Boolean)
  public!: boolean;

  @Field(() => String, { nullable: true, description: 'Multiplier on public prices, default 1.' })
  multiplier?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Per-model prices, keyed by model id.' })
  overrides?: Record<string, unknown> | null;
}
