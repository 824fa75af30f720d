import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { DateTimeISOResolver } from 'graphql-scalars';
import { UsageBreakdown, UsageEvent, UsageTotals } from './usage.types.js';

/** How an organization's usage summary is broken down. */
export enum OrganizationUsageGroupBy {
  MEMBER = 'member',
  KEY = 'key',
  MODEL = 'model',
}
registerEnumType(OrganizationUsageGroupBy, { name: 'OrganizationUsageGroupBy', description: 'By the member who made the key, by key, or by model.' });

@ObjectType({ description: 'One request of an organization, with the member who made the key it was made with.' })
export class OrganizationUsageEvent extends UsageEvent {
  @Field(() => ID, { nullable: true, description: 'The member who made the key (null: a request without a key).' }) memberId!: string | null;
  @Field(() => String, { nullable: true, description: 'Their username, else their e-mail.' }) memberName!: string | null;
}

@ObjectType({ description: 'An organization’s usage over a period, in total and by member, key or model.' })
export class OrganizationUsageSummary {
  @Field(() => OrganizationUsageGroupBy) groupBy!: OrganizationUsageGroupBy;
  @Field(() => UsageTotals) totals!: UsageTotals;
  @Field(() => [UsageBreakdown], { description: '`key`: the member’s user id, the key’s id or the model; `label`: the member’s name, the key’s label or the model.' })
  groups!: UsageBreakdown[];
}

@ObjectType({ description: 'An invoice in a statement. Amounts are exact decimal strings.' })
export class StatementInvoice {
  @Field(() => ID) id!: string;
  @Field(() => String, { description: 'USD credited as paid balance when paid.' }) amount!: string;
  @Field(() => String, { description: 'USD credited as bonus when paid.' }) bonus!: string;
  @Field(() => String) currency!: string;
  @Field(() => String, { description: 'What is paid, in `currency`.' }) amountRequested!: string;
  @Field(() => String) status!: string;
  @Field(() => DateTimeISOResolver) createdAt!: Date;
  @Field(() => DateTimeISOResolver, { nullable: true }) paidAt!: Date | null;
}

@ObjectType()
export class StatementMember {
  @Field(() => ID) userId!: string;
  @Field(() => String) name!: string;
  @Field(() => String) spend!: string;
  @Field(() => Int, { description: 'Billed requests.' }) requests!: number;
}

@ObjectType()
export class StatementModel {
  @Field(() => String) model!: string;
  @Field(() => String) spend!: string;
  @Field(() => Int) requests!: number;
}

@ObjectType()
export class StatementKey {
  @Field(() => ID, { nullable: true }) apiKeyId!: string | null;
  @Field(() => String, { nullable: true }) label!: string | null;
  @Field(() => String, { nullable: true }) memberName!: string | null;
  @Field(() => String) spend!: string;
  @Field(() => Int) requests!: number;
}

@ObjectType({ description: 'An organization’s month (UTC): closingBalance = openingBalance + invoicesCredited - totalSpend + otherChanges, as the ledger has it.' })
export class OrganizationStatement {
  @Field(() => ID) organizationId!: string;
  @Field(() => String) organizationName!: string;
  @Field(() => String, { description: 'YYYY-MM.' }) month!: string;
  @Field(() => DateTimeISOResolver) from!: Date;
  @Field(() => DateTimeISOResolver) to!: Date;
  @Field(() => String, { description: 'The ledger’s balance before the month began.' }) openingBalance!: string;
  @Field(() => String, { description: 'The ledger’s balance before the next month began.' }) closingBalance!: string;
  @Field(() => String, { description: 'Paid and bonus credit the month’s paid invoices brought.' }) invoicesCredited!: string;
  @Field(() => String, { description: 'What usage spent in the month.' }) totalSpend!: string;
  @Field(() => String, { description: 'Other ledger rows: an operator’s adjustments, expired bonus.' }) otherChanges!: string;
  @Field(() => [StatementInvoice], { description: 'Invoices made or paid in the month.' }) invoices!: StatementInvoice[];
  @Field(() => [StatementMember]) byMember!: StatementMember[];
  @Field(() => [StatementModel]) byModel!: StatementModel[];
  @Field(() => [StatementKey]) byKey!: StatementKey[];
}
