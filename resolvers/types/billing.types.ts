import { Field, ID, InputType, ObjectType } from 'type-graphql';
import { DateTimeISOResolver } from 'graphql-scalars';

@ObjectType({ description: 'A ledger posting.' })
export class LedgerPosting {
  @Field(() => ID)
  transactionId!: string;

  @Field(() => String)
  amountUsd!: string;

  @Field(() => Boolean, { description: 'False when the same idempotency key had already been applied.' })
  applied!: boolean;
}

@InputType()
export class AdjustBalanceInput {
  @Field(() => ID)
  userId!: string;

  @Field(() => String, { description: 'Signed USD amount, a decimal string.' })
  amountUsd!: string;

  @Field(() => String)
  reason!: string;

  @Field(() => String, { nullable: true, description: 'Repeat the key to retry safely.' })
  idempotencyKey?: string | null;
}

@ObjectType()
export class TrustedPartner {
  @Field(() => ID)
  userId!: string;

  @Field(() => DateTimeISOResolver, { nullable: true })
  trustedPartnerUntil!: Date | null;

  @Field(() => String)
  creditLimitUsd!: string;
}

@InputType()
export class TrustedPartnerInput {
  @Field(() => ID)
  userId!: string;

  @Field(() => DateTimeISOResolver)
  validUntil!: Date;

  @Field(() => String)
  creditLimitUsd!: string;
}
