import { Field, ID, Int, ObjectType } from 'type-graphql';
import { DateTimeISOResolver } from 'graphql-scalars';

@ObjectType({ description: 'A top-up invoice; amounts are exact decimal strings.' })
export class Invoice {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  method!: string;

  @Field(() => String, { description: 'In the method’s currency (RUB: usd x rub_per_usd, half-up to kopecks).' })
  amountRequested!: string;

  @Field(() => String, { description: '`USD` or `RUB`.' })
  currency!: string;

  @Field(() => String, { description: 'Paid balance credited when the invoice is paid.' })
  usdCredit!: string;

  @Field(() => String)
  bonusRate!: string;

  @Field(() => String, { description: 'Bonus balance credited when the invoice is paid.' })
  bonusUsd!: string;

  @Field(() => String, { description: '`pending`, `paid`, `expired`, `cancelled` or `failed`.' })
  status!: string;

  @Field(() => String, { nullable: true, description: 'The hosted payment page; null for manual methods.' })
  paymentUrl!: string | null;

  @Field(() => DateTimeISOResolver)
  createdAt!: Date;

  @Field(() => DateTimeISOResolver)
  updatedAt!: Date;

  @Field(() => DateTimeISOResolver, { nullable: true })
  paidAt!: Date | null;
}

@ObjectType()
export class PaymentMethod {
  @Field(() => String)
  id!: string;

  @Field(() => String)
  label!: string;

  @Field(() => String)
  currency!: string;

  @Field(() => String)
  minUsd!: string;

  @Field(() => String)
  maxUsd!: string;

  @Field(() => Boolean)
  enabled!: boolean;
}

@ObjectType()
export class AgreementSection {
  @Field(() => String)
  title!: string;

  @Field(() => String)
  text!: string;
}

@ObjectType()
export class AgreementContent {
  @Field(() => String)
  termsVersion!: string;

  @Field(() => String)
  privacyVersion!: string;

  @Field(() => String)
  title!: string;

  @Field(() => String)
  intro!: string;

  @Field(() => [AgreementSection])
  sections!: AgreementSection[];
}

@ObjectType({ description: 'A bonus tier: top-ups of at least `minUsd` get `rate` (a share, e.g. 0.1) as bonus.' })
export class BonusTier {
  @Field(() => String)
  minUsd!: string;

  @Field(() => String)
  rate!: string;
}

@ObjectType()
export class PaymentConfig {
  @Field(() => Boolean)
  paymentsEnabled!: boolean;

  @Field(() => String)
  rubPerUsd!: string;

  @Field(() => [PaymentMethod])
  methods!: PaymentMethod[];

  @Field(() => AgreementContent)
  agreement!: AgreementContent;

  @Field(() => Boolean, { description: 'Whether the current terms and privacy versions were accepted.' })
  agreementAccepted!: boolean;

  @Field(() => String)
  paidBalanceUsd!: string;

  @Field(() => String)
  bonusBalanceUsd!: string;

  @Field(() => DateTimeISOResolver, { nullable: true })
  nextBonusExpiry!: Date | null;

  @Field(() => Boolean)
  bonusEnabled!: boolean;

  @Field(() => Int)
  bonusExpiryDays!: number;

  @Field(() => [BonusTier])
  bonusTiers!: BonusTier[];

  @Field(() => Boolean)
  trustedPartnerEnabled!: boolean;

  @Field(() => Boolean)
  trustedPartnerActive!: boolean;

  @Field(() => DateTimeISOResolver, { nullable: true })
  trustedPartnerValidUntil!: Date | null;
}

@ObjectType()
export class AgreementAcceptance {
  @Field(() => Boolean)
  accepted!: boolean;

  @Field(() => String)
  termsVersion!: string;

  @Field(() => String)
  privacyVersion!: string;
}

@ObjectType({ description: 'Admin: an invoice with the account it belongs to.' })
export class AdminInvoice extends Invoice {
  @Field(() => ID)
  userId!: string;

  @Field(() => String, { description: 'The account’s username, else its e-mail.' })
  account!: string;
}
