import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';

const CHANNELS = '`email` (the verified address) and/or `messenger` (the linked chat).';

@ObjectType({ description: 'An alert on an amount: balance below it, or today’s spend (UTC) above it.' })
export class ThresholdAlert {
  @Field(() => String, { description: 'USD, exact decimal.' })
  amountUsd!: string;

  @Field(() => [String], { description: CHANNELS })
  channels!: string[];
}

@ObjectType({ description: 'An alert when a key has spent a share of its monthly spend cap.' })
export class KeyCapShareAlert {
  @Field(() => ID, { nullable: true, description: 'Null: every key of the account with a cap (a key’s own rule wins).' })
  keyId!: string | null;

  @Field(() => Int, { description: '1 to 100.' })
  percent!: number;

  @Field(() => [String], { description: CHANNELS })
  channels!: string[];
}

@ObjectType({ description: 'An alert on an event (an invoice paid, a video task finished), once per invoice or task.' })
export class EventAlert {
  @Field(() => [String], { description: CHANNELS })
  channels!: string[];
}

@ObjectType({ description: 'The signed-in account’s alerts, and which channels can reach it.' })
export class AlertSettings {
  @Field(() => String, { description: '`ru` or `en`: the language alerts are sent in.' })
  language!: string;

  @Field(() => String, { nullable: true })
  email!: string | null;

  @Field(() => Boolean, { description: 'E-mail alerts go only to a verified address.' })
  emailVerified!: boolean;

  @Field(() => Boolean)
  messengerLinked!: boolean;

  @Field(() => Boolean, { description: 'Whether the operator’s bot can send messages at all.' })
  messengerAvailable!: boolean;

  @Field(() => ThresholdAlert, { nullable: true, description: 'Fires once when the balance falls below the amount, again only after it went back above.' })
  balanceBelow!: ThresholdAlert | null;

  @Field(() => ThresholdAlert, { nullable: true, description: 'Fires once a UTC day when that day’s spend rises above the amount.' })
  spendTodayAbove!: ThresholdAlert | null;

  @Field(() => [KeyCapShareAlert], { description: 'Fires once a month (or per cap) when a key reaches the share of its cap.' })
  keyCapShares!: KeyCapShareAlert[];

  @Field(() => EventAlert, { nullable: true })
  invoicePaid!: EventAlert | null;

  @Field(() => EventAlert, { nullable: true, description: 'A video task completed or failed.' })
  videoFinished!: EventAlert | null;
}

@InputType()
export class ThresholdAlertInput {
  @Field(() => String, { description: 'USD, a non-negative decimal such as "5" or "12.50".' })
  amountUsd!: string;

  @Field(() => [String], { description: CHANNELS })
  channels!: string[];
}

@InputType()
export class KeyCapShareAlertInput {
  @Field(() => ID, { nullable: true, description: 'Null: every key with a cap.' })
  keyId?: string | null;

  @Field(() => Int, { description: '1 to 100.' })
  percent!: number;

  @Field(() => [String], { description: CHANNELS })
  channels!: string[];
}

@InputType()
export class EventAlertInput {
  @Field(() => [String], { description: CHANNELS })
  channels!: string[];
}

@InputType({ description: 'The whole of the account’s alerts (what is left out or null is off).' })
export class AlertSettingsInput {
  @Field(() => String, { nullable: true, description: '`ru` or `en`; default: as saved before, else the operator’s mail language.' })
  language?: string | null;

  @Field(() => ThresholdAlertInput, { nullable: true })
  balanceBelow?: ThresholdAlertInput | null;

  @Field(() => ThresholdAlertInput, { nullable: true })
  spendTodayAbove?: ThresholdAlertInput | null;

  @Field(() => [KeyCapShareAlertInput], { nullable: true })
  keyCapShares?: KeyCapShareAlertInput[] | null;

  @Field(() => EventAlertInput, { nullable: true })
  invoicePaid?: EventAlertInput | null;

  @Field(() => EventAlertInput, { nullable: true })
  videoFinished?: EventAlertInput | null;
}
