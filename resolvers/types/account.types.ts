import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { DateTimeISOResolver } from 'graphql-scalars';

@ObjectType({ description: 'A cabinet account. Amounts are exact decimal strings in USD.' })
export class Account {
  @Field(() => ID)
  userId!: string;

  @Field(() => String, { nullable: true })
  username!: string | null;

  @Field(() => String, { nullable: true })
  email!: string | null;

  @Field(() => Boolean)
  emailVerified!: boolean;

  @Field(() => String, { description: 'Paid plus bonus balance, exact decimal string.' })
  balanceUsd!: string;

  @Field(() => Boolean)
  isAdmin!: boolean;
}

@ObjectType()
export class AccountSummary {
  @Field(() => ID)
  userId!: string;

  @Field(() => String, { nullable: true })
  email!: string | null;

  @Field(() => String)
  balanceUsd!: string;

  @Field(() => Int)
  activeKeys!: number;

  @Field(() => String)
  usageUsd!: string;

  @Field(() => String)
  topupUsd!: string;
}

@ObjectType({ description: 'A ledger entry: positive credits, negative debits.' })
export class Transaction {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  userId!: string;

  @Field(() => String)
  amountUsd!: string;

  @Field(() => String)
  kind!: string;

  @Field(() => ID, { nullable: true })
  apiKeyId!: string | null;

  @Field(() => String, { nullable: true, description: 'The public provider family.' })
  provider!: string | null;

  @Field(() => String, { nullable: true })
  model!: string | null;

  @Field(() => Int, { nullable: true })
  promptTokens!: number | null;

  @Field(() => Int, { nullable: true })
  completionTokens!: number | null;

  @Field(() => DateTimeISOResolver)
  createdAt!: Date;
}

@ObjectType({ description: 'A new sign-in. Keep sessionToken secret; send it as `Authorization: Bearer`.' })
export class AuthPayload {
  @Field(() => Account)
  account!: Account;

  @Field(() => String)
  sessionToken!: string;

  @Field(() => DateTimeISOResolver)
  expiresAt!: Date;
}

export enum SessionEventKind {
  SIGNED_IN = 'signed_in',
  SIGNED_OUT = 'signed_out',
}
registerEnumType(SessionEventKind, { name: 'SessionEventKind' });

@ObjectType({ description: 'A sign-in or sign-out on the subscriber’s own account.' })
export class SessionEvent {
  @Field(() => SessionEventKind)
  kind!: SessionEventKind;

  @Field(() => ID)
  sessionId!: string;

  @Field(() => DateTimeISOResolver)
  at!: Date;
}

@InputType()
export class RegisterInput {
  @Field(() => String)
  username!: string;

  @Field(() => String)
  email!: string;

  @Field(() => String)
  password!: string;
}

@InputType()
export class LoginInput {
  @Field(() => String, { description: 'Username or e-mail.' })
  login!: string;

  @Field(() => String)
  password!: string;
}

@ObjectType({ description: 'An accepted request; nothing more is told (no enumeration).' })
export class OkPayload {
  @Field(() => Boolean)
  ok!: boolean;
}

@ObjectType({ description: 'An e-mail link code was requested (the same answer whether or not a code was sent).' })
export class EmailLinkStarted {
  @Field(() => Boolean)
  ok!: boolean;

  @Field(() => DateTimeISOResolver)
  expiresAt!: Date;
}

@ObjectType()
export class EmailLinkConfirmed {
  @Field(() => Boolean)
  ok!: boolean;

  @Field(() => String)
  email!: string;
}

@ObjectType({ description: 'The account’s sign-in methods and messenger link.' })
export class MessengerLinks {
  @Field(() => Boolean)
  linked!: boolean;

  @Field(() => String, { nullable: true, description: 'The linked messenger identity’s display name.' })
  messengerLabel!: string | null;

  @Field(() => Boolean)
  hasPassword!: boolean;

  @Field(() => String, { nullable: true })
  email!: string | null;

  @Field(() => Boolean)
  emailVerified!: boolean;
}

@ObjectType()
export class MessengerLinkStatus extends MessengerLinks {
  @Field(() => String, { nullable: true, description: 'pending, confirmed, expired or failed.' })
  status!: string | null;

  @Field(() => DateTimeISOResolver, { nullable: true })
  expiresAt!: Date | null;

  @Field(() => String, { nullable: true, description: 'cabinet or bot.' })
  initiatedBy!: string | null;

  @Field(() => String, { nullable: true })
  errorCode!: string | null;

  @Field(() => String, { nullable: true })
  botUrl!: string | null;
}

@ObjectType({ description: 'A cabinet-initiated messenger link: open botUrl; the bot reports the token.' })
export class MessengerLinkStart {
  @Field(() => String)
  token!: string;

  @Field(() => String)
  botUrl!: string;

  @Field(() => DateTimeISOResolver)
  expiresAt!: Date;
}

@ObjectType()
export class MessengerLinkConfirm {
  @Field(() => String)
  status!: string;

  @Field(() => ID)
  userId!: string;
}

@ObjectType({ description: 'Admin: an account with its balances, credit line and activity.' })
export class AdminAccount extends Account {
  @Field(() => String)
  paidBalanceUsd!: string;

  @Field(() => String)
  bonusBalanceUsd!: string;

  @Field(() => String, { description: 'The trusted-partner credit line (0 when none).' })
  creditLimitUsd!: string;

  @Field(() => DateTimeISOResolver, { nullable: true })
  trustedPartnerUntil!: Date | null;

  @Field(() => Int, { nullable: true, description: 'The account’s in-flight request override, if any.' })
  concurrencyLimit!: number | null;

  @Field(() => Int)
  activeKeys!: number;

  @Field(() => Int)
  activeSessions!: number;

  @Field(() => DateTimeISOResolver)
  createdAt!: Date;
}
