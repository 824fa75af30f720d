import { OptionalProps } from '@mikro-orm/core';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { newId } from '../shared/ids.js';

@Entity({ tableName: 'users' })
export class User {
  [OptionalProps]?: 'id' | 'username' | 'email' | 'emailVerified' | 'passwordHash' | 'isAdmin' | 'balancePaidUsd' | 'balanceBonusUsd' | 'trustedPartnerUntil' | 'creditLimitUsd' | 'messengerUserId' | 'messengerName' | 'createdAt' | 'updatedAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  /** Null for accounts created through the messenger before a username is chosen. */
  @Property({ type: 'text', nullable: true })
  username: string | null = null;

  @Property({ type: 'text', nullable: true })
  email: string | null = null;

  @Property({ type: 'boolean' })
  emailVerified: boolean = false;

  /** argon2id PHC string; null when the account has no password (messenger-only). */
  @Property({ type: 'text', nullable: true, hidden: true })
  passwordHash: string | null = null;

  /** The linked messenger identity (DESIGN.md: Messenger linking); null when none is linked. */
  @Property({ type: 'text', nullable: true })
  messengerUserId: string | null = null;

  @Property({ type: 'text', nullable: true })
  messengerName: string | null = null;

  @Property({ type: 'boolean' })
  isAdmin: boolean = false;

  /** Cached sums of the ledger (DESIGN.md: Ledger); updated in the same transaction as every ledger row. */
  @Property({ type: 'decimal', precision: 30, scale: 10 })
  balancePaidUsd: string = '0';

  @Property({ type: 'decimal', precision: 30, scale: 10 })
  balanceBonusUsd: string = '0';

  /** While in the future, the account may spend below zero down to creditLimitUsd. */
  @Property({ type: 'timestamptz', nullable: true })
  trustedPartnerUntil: Date | null = null;

  @Property({ type: 'decimal', precision: 30, scale: 10 })
  creditLimitUsd: string = '0';

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
