import { randomUUID } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { expect } from 'vitest';
import type { TestDatabase } from './db.js';

/**
 * Appends ledger rows directly with SQL, keeping the account's cached balances equal to the ledger
 * sums, for tests that need history before the billing capability writes it.
 */
export async function seedLedger(
  db: TestDatabase,
  userId: string,
  rows: { amountUsd: string; kind: string; model?: string; provider?: string; promptTokens?: number; completionTokens?: number; createdAt?: Date }[],
): Promise<void> {
  for (const row of rows) {
    await db.query(
      `with tx as (
         insert into transactions (id, user_id, amount_usd, paid_usd, bonus_usd, kind, provider, model, prompt_tokens, completion_tokens, idempotency_key, created_at)
         values ($1, $2, $3, $3, 0, $4, $5, $6, $7, $8, $9, $10) returning amount_usd)
       update users set balance_paid_usd = balance_paid_usd + (select amount_usd from tx) where id = $2`,
      [randomUUID(), userId, row.amountUsd, row.kind, row.provider ?? null, row.model ?? null, row.promptTokens ?? null, row.completionTokens ?? null, `seed:${randomUUID()}`, row.createdAt ?? new Date()],
    );
  }
}

/**
 * The ledger debit that charged a usage event, or undefined: a usage batch posts one debit for the billed
 * events of one account, key and month (src/usage/usage-recorder.ts), each event naming it. Checks that
 * the debit is exactly minus the sum of the events it covers (`covered_usd`, `events`).
 */
export async function usageDebitOf(db: Pick<TestDatabase, 'query'>, eventId: string): Promise<(Record<string, any> & { covered_usd: string; events: number }) | undefined> {
  const [row] = await db.query<Record<string, any> & { covered_usd: string; events: number }>(
    `select t.*, c.covered_usd, c.events
       from usage_events e join transactions t on t.id = e.transaction_id,
            lateral (select sum(amount_usd)::text as covered_usd, count(*)::int as events from usage_events c where c.transaction_id = t.id) c
      where e.id = $1`,
    [eventId],
  );
  if (row) expect(new Decimal(row.amount_usd).equals(new Decimal(row.covered_usd).negated()), `debit ${row.id} covers its events exactly`).toBe(true);
  return row;
}
