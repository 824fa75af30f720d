import { OptionalProps } from '@mikro-orm/core';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { newId } from '../shared/ids.js';

/**
 * One row of the append-only ledger. `amount_usd = paid_usd + bonus_usd`; an account's paid and bonus
 * balances are the sums of these columns. Rows are never updated or deleted.
 */
@Entity({ tableName: 'transactions' })
export class LedgerTransaction {
  [OptionalProps]?: 'id' | 'apiKeyId' | 'provider' | 'model' | 'promptTokens' | 'completionTokens' | 'note' | 'createdAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @Property({ type: 'uuid' })
  userId!: string;

  @Property({ type: 'decimal', precision: 30, scale: 10 })
  amountUsd!: string;

  @Property({ type: 'decimal', precision: 30, scale: 10 })
  paidUsd!: string;

  @Property({ type: 'decimal', precision: 30, scale: 10 })
  bonusUsd!: string;

  /** topup, bonus, usage, video, adjustment, bonus_expiry, refund. */
  @Property({ type: 'text' })
  kind!: string;

  @Property({ type: 'uuid', nullable: true })
  apiKeyId: string | null = null;

  /** The public provider family, never an upstream name. */
  @Property({ type: 'text', nullable: true })
  provider: string | null = null;

  @Property({ type: 'text', nullable: true })
  model: string | null = null;

  @Property({ type: 'integer', nullable: true })
  promptTokens: number | null = null;

  @Property({ type: 'integer', nullable: true })
  completionTokens: number | null = null;

  /** Makes every money effect apply once: request id, invoice event id, video task id + phase. */
  @Property({ type: 'text', unique: true })
  idempotencyKey!: string;

  /** Operator-facing reason (adjustments); never shown to other users. */
  @Property({ type: 'text', nullable: true })
  note: string | null = null;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
