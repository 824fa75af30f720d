import { OptionalProps } from '@mikro-orm/core';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { newId } from '../shared/ids.js';

/** A cabinet sign-in. Only the SHA-256 of the opaque token is stored. */
@Entity({ tableName: 'sessions' })
export class Session {
  [OptionalProps]?: 'id' | 'createdAt' | 'lastSeenAt' | 'revokedAt' | 'clientAddress' | 'userAgent';

  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @Property({ type: 'uuid' })
  userId!: string;

  @Property({ type: 'text', unique: true })
  tokenHash!: string;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  lastSeenAt: Date = new Date();

  /** Absolute expiry; the idle expiry is computed from lastSeenAt. */
  @Property({ type: 'timestamptz' })
  expiresAt!: Date;

  @Property({ type: 'timestamptz', nullable: true })
  revokedAt: Date | null = null;

  @Property({ type: 'text', nullable: true })
  clientAddress: string | null = null;

  @Property({ type: 'text', nullable: true })
  userAgent: string | null = null;
}
