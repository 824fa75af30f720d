import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { DateTimeISOResolver } from 'graphql-scalars';
import { UsageEvent } from './usage.types.js';

@ObjectType({ description: 'A ledger row: what moved a balance. Amounts are signed exact decimal strings (below zero spends).' })
export class LedgerRow {
  @Field(() => ID) id!: string;
  @Field(() => String, { description: '`usage`, `topup`, `bonus`, `adjustment`, `video`, `bonus_expiry`, …' }) kind!: string;
  @Field(() => String) amountUsd!: string;
  @Field(() => String, { description: 'The part of the amount taken from or added to the paid balance.' }) paidUsd!: string;
  @Field(() => String, { description: 'The part taken from or added to the bonus balance.' }) bonusUsd!: string;
  @Field(() => ID, { nullable: true, description: 'The key whose requests a usage row covers.' }) apiKeyId!: string | null;
  @Field(() => DateTimeISOResolver) createdAt!: Date;
}

@ObjectType({ description: 'The account’s balances after a committed ledger row, or as they are now (the first event, `transaction` null).' })
export class BalanceChange {
  @Field(() => String) paidUsd!: string;
  @Field(() => String) bonusUsd!: string;
  @Field(() => String, { description: 'Paid plus bonus.' }) balanceUsd!: string;
  @Field(() => String, { description: 'Held now for requests and video tasks in flight.' }) heldUsd!: string;
  @Field(() => String, { description: 'What requests may spend now: the balance less what is held, plus a trusted partner’s credit line.' })
  availableUsd!: string;
  @Field(() => LedgerRow, { nullable: true, description: 'The row that moved the balance; null in the first event.' }) transaction!: LedgerRow | null;
  @Field(() => DateTimeISOResolver) at!: Date;
}

@ObjectType({ description: 'Requests billed in one committed batch (coalesced: one event per account about every 100 ms while requests arrive).' })
export class UsageRecorded {
  @Field(() => [UsageEvent], { description: 'Each request as the usage list shows it.' }) events!: UsageEvent[];
  @Field(() => String, { description: 'The sum of the events’ amounts.' }) amountUsd!: string;
}

export enum KeyEventType {
  CREATED = 'created',
  REVOKED = 'revoked',
  MONTHLY_CAP_REACHED = 'monthly_cap_reached',
  LIMIT_REFUSED = 'limit_refused',
}
registerEnumType(KeyEventType, {
  name: 'KeyEventType',
  description: 'CREATED and REVOKED as committed; MONTHLY_CAP_REACHED when the key’s monthly spend cap refused requests (once per batch); LIMIT_REFUSED while a limit refuses its requests (at most once a second per limit).',
});

@ObjectType({ description: 'Something happened to one of the account’s keys.' })
export class KeyEvent {
  @Field(() => KeyEventType) type!: KeyEventType;
  @Field(() => ID) keyId!: string;
  @Field(() => String, { nullable: true, description: 'Which limit: `requests_per_minute`, `key_concurrency`, `account_concurrency`, `gateway_concurrency` or `monthly_spend_cap`.' })
  limit!: string | null;
  @Field(() => Int, { nullable: true, description: 'Requests refused since the previous event of this kind.' }) refused!: number | null;
  @Field(() => DateTimeISOResolver) at!: Date;
}
