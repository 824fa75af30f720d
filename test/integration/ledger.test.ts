import { randomUUID } from 'node:crypto';
import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postDebits, type Posting } from '../../src/ledger/ledger.js';
import { ledgerBalance, newFundedAccount } from '../helpers/accounts.js';
import { useTestGateway } from '../helpers/gateway.js';

/**
 * The ledger module (src/ledger/ledger.ts) is the only writer of balances; these properties hold its
 * one split rule to a model written from DESIGN.md's words, on the real database.
 */
const gw = useTestGateway();
let pool: pg.Pool;
beforeAll(() => {
  pool = new pg.Pool({ connectionString: gw.db.url, max: 8 });
});
afterAll(() => pool.end());

/** Amounts with up to 10 decimal places, zero excluded, up to $3. */
const amount = fc.bigInt({ min: 1n, max: 30_000_000_000n }).map((units) => new Decimal(units.toString()).div(1e10).toFixed());

type Op = { type: 'credit'; bucket: 'paid' | 'bonus'; amount: string } | { type: 'debit'; amount: string };
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ type: fc.constant('credit' as const), bucket: fc.constantFrom('paid' as const, 'bonus' as const), amount }),
  { arbitrary: fc.record({ type: fc.constant('debit' as const), amount }), weight: 2 },
);

/** DESIGN.md, Money: a credit goes to its bucket; a debit spends bonus first (never below zero), the rest from paid. */
function model(start: { paid: Decimal; bonus: Decimal }, ops: Op[]) {
  let { paid, bonus } = start;
  const rows = ops.map((o) => {
    if (o.type === 'credit') {
      const row = o.bucket === 'bonus' ? { paid: new Decimal(0), bonus: new Decimal(o.amount) } : { paid: new Decimal(o.amount), bonus: new Decimal(0) };
      paid = paid.plus(row.paid);
      bonus = bonus.plus(row.bonus);
      return row;
    }
    const fromBonus = Decimal.min(Decimal.max(bonus, 0), o.amount);
    const fromPaid = new Decimal(o.amount).minus(fromBonus);
    bonus = bonus.minus(fromBonus);
    paid = paid.minus(fromPaid);
    return { paid: fromPaid.negated(), bonus: fromBonus.negated() };
  });
  return { paid, bonus, rows };
}

async function balances(userId: string) {
  const [row] = await gw.db.query<{ paid: string; bonus: string }>('select balance_paid_usd::text as paid, balance_bonus_usd::text as bonus from users where id = $1', [userId]);
  return { paid: new Decimal(row!.paid), bonus: new Decimal(row!.bonus) };
}

async function rowsOf(keys: string[]) {
  const rows = await gw.db.query<{ key: string; amount: string; paid: string; bonus: string }>(
    'select idempotency_key as key, amount_usd::text as amount, paid_usd::text as paid, bonus_usd::text as bonus from transactions where idempotency_key = any($1)',
    [keys],
  );
  const byKey = new Map(rows.map((row) => [row.key, row]));
  return keys.map((key) => byKey.get(key)!);
}

const posting = (userId: string, o: Op, key: string): Posting => ({
  userId,
  amountUsd: o.type === 'credit' ? o.amount : `-${o.amount}`,
  kind: o.type === 'credit' ? (o.bucket === 'bonus' ? 'bonus' : 'topup') : 'usage',
  bucket: o.type === 'credit' ? o.bucket : undefined,
  idempotencyKey: key,
});

describe('the ledger: one split rule, one writer', () => {
  it('posting one at a time follows the model: amount = paid + bonus on every row, bonus first, replays change nothing, balances = ledger', async () => {
    const { userId } = await newFundedAccount(gw);
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), fc.nat(), async (ops, replayPick) => {
        const start = await balances(userId);
        const expected = model(start, ops);
        const keys = ops.map(() => `prop:${randomUUID()}`);
        for (const [i, o] of ops.entries()) {
          const settlement = await gw.services.billing.post(posting(userId, o, keys[i]!));
          expect(settlement.applied).toBe(true);
        }
        const rows = await rowsOf(keys);
        rows.forEach((row, i) => {
          expect(new Decimal(row.paid).plus(row.bonus).equals(row.amount)).toBe(true);
          expect(new Decimal(row.paid).equals(expected.rows[i]!.paid)).toBe(true);
          expect(new Decimal(row.bonus).equals(expected.rows[i]!.bonus)).toBe(true);
        });
        // A replayed key appends nothing and moves nothing.
        const replayed = replayPick % ops.length;
        const again = await gw.services.billing.post(posting(userId, ops[replayed]!, keys[replayed]!));
        expect(again.applied).toBe(false);
        const end = await balances(userId);
        expect(end.paid.equals(expected.paid) && end.bonus.equals(expected.bonus)).toBe(true);
        const check = await ledgerBalance(gw, userId);
        expect(check.ledger).toBe(check.balance);
        expect(check.paidMatches && check.bonusMatches).toBe(true);
      }),
      { numRuns: 25 },
    );
  });

  it('a batch of debits gives the same rows and balances as posting them one by one, and a replayed batch appends nothing', async () => {
    const one = (await newFundedAccount(gw)).userId;
    const batched = (await newFundedAccount(gw)).userId;
    await fc.assert(
      fc.asyncProperty(amount, amount, fc.array(amount, { minLength: 1, maxLength: 15 }), async (paid, bonus, debits) => {
        // The same start for both accounts: equal so far (the previous runs held), plus the same credits.
        for (const userId of [one, batched]) {
          await gw.services.billing.post({ userId, amountUsd: paid, kind: 'topup', bucket: 'paid', idempotencyKey: `prop:${randomUUID()}` });
          await gw.services.billing.post({ userId, amountUsd: bonus, kind: 'bonus', bucket: 'bonus', idempotencyKey: `prop:${randomUUID()}` });
        }
        const ops: Op[] = debits.map((a) => ({ type: 'debit', amount: a }));
        const oneKeys = ops.map(() => `prop:${randomUUID()}`);
        const batchKeys = ops.map(() => `prop:${randomUUID()}`);
        for (const [i, o] of ops.entries()) await gw.services.billing.post(posting(one, o, oneKeys[i]!));
        const client = await pool.connect();
        try {
          const batch = ops.map((o, i) => posting(batched, o, batchKeys[i]!));
          await postDebits(client, batch);
          const before = await balances(batched);
          await postDebits(client, batch);
          const after = await balances(batched);
          expect(after.paid.equals(before.paid) && after.bonus.equals(before.bonus)).toBe(true);
        } finally {
          client.release();
        }
        const [oneRows, batchRows] = [await rowsOf(oneKeys), await rowsOf(batchKeys)];
        expect(batchRows.map(({ paid, bonus }) => [paid, bonus])).toEqual(oneRows.map(({ paid, bonus }) => [paid, bonus]));
        const [a, b] = [await balances(one), await balances(batched)];
        expect(a.paid.equals(b.paid) && a.bonus.equals(b.bonus)).toBe(true);
        expect(b.bonus.isNegative()).toBe(false);
        for (const userId of [one, batched]) {
          const check = await ledgerBalance(gw, userId);
          expect(check.ledger).toBe(check.balance);
          expect(check.paidMatches && check.bonusMatches).toBe(true);
        }
        const [{ n }] = await gw.db.query<{ n: number }>('select count(*)::int as n from transactions where idempotency_key = any($1)', [batchKeys]);
        expect(n).toBe(batchKeys.length);
        // Ledger ids are UUIDv7 whose time is the row's (so the primary key grows at its end).
        const stamped = await gw.db.query<{ id: string; at: string }>(
          'select id::text, (extract(epoch from clock_timestamp()) * 1000)::int8::text as at from transactions where idempotency_key = any($1)',
          [[...oneKeys, ...batchKeys]],
        );
        for (const { id, at } of stamped) {
          expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
          const minted = parseInt(id.replaceAll('-', '').slice(0, 12), 16);
          expect(Number(at) - minted).toBeGreaterThanOrEqual(0);
          expect(Number(at) - minted).toBeLessThan(60_000);
        }
      }),
      { numRuns: 20 },
    );
  });

  it('refuses a credit in a debit batch, writing nothing', async () => {
    const { userId } = await newFundedAccount(gw, '1');
    const client = await pool.connect();
    try {
      const key = `prop:${randomUUID()}`;
      await expect(postDebits(client, [{ userId, amountUsd: '-0.5', kind: 'usage', idempotencyKey: key }, { userId, amountUsd: '0.5', kind: 'topup', idempotencyKey: `${key}-c` }])).rejects.toThrow(/debits only/);
      expect(await gw.db.query('select 1 from transactions where idempotency_key like $1', [`${key}%`])).toHaveLength(0);
    } finally {
      client.release();
    }
  });

  it('many parallel postings and debit batches on a small balance: every key once, bonus never below zero, balances = ledger', async () => {
    const { userId } = await newFundedAccount(gw, '0.30');
    await gw.services.billing.post({ userId, amountUsd: '0.20', kind: 'bonus', bucket: 'bonus', idempotencyKey: `bonus:${randomUUID()}` });
    const debit = (i: number): Posting => ({ userId, amountUsd: `-0.0${(i % 9) + 1}`, kind: 'usage', idempotencyKey: `par:${userId}:${i}` });
    const single = Array.from({ length: 60 }, (_, i) => debit(i));
    const batches = Array.from({ length: 8 }, (_, b) => Array.from({ length: 10 }, (_, i) => debit(60 + b * 10 + i)));
    // Every posting twice at once (a retried worker, a duplicated message), batches overlapping each other's keys.
    const results = await Promise.all([
      ...[...single, ...single].map((p) => gw.services.billing.post(p)),
      ...[...batches, ...batches.map((batch) => [...batch].reverse())].map(async (batch) => {
        const client = await pool.connect();
        try {
          await postDebits(client, batch);
        } finally {
          client.release();
        }
      }),
    ]);
    expect(results.filter((r) => r && r.applied)).toHaveLength(60);
    const all = [...single, ...batches.flat()];
    const [{ n, total }] = await gw.db.query<{ n: number; total: string }>(
      'select count(*)::int as n, sum(amount_usd)::text as total from transactions where idempotency_key like $1',
      [`par:${userId}:%`],
    );
    expect(n).toBe(all.length);
    expect(new Decimal(total).equals(all.reduce((sum, p) => sum.plus(p.amountUsd), new Decimal(0)))).toBe(true);
    const end = await balances(userId);
    expect(end.bonus.isNegative()).toBe(false);
    expect(end.paid.plus(end.bonus).equals(new Decimal('0.50').plus(total))).toBe(true);
    const check = await ledgerBalance(gw, userId);
    expect(check.ledger).toBe(check.balance);
    expect(check.paidMatches && check.bonusMatches).toBe(true);
  });
});
