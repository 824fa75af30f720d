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
