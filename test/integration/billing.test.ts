import { randomUUID } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/shared/errors.js';
import { useTestGateway } from '../helpers/gateway.js';
import { graphql } from '../helpers/clients.js';
import { ledgerBalance, newAdmin, newFundedAccount } from '../helpers/accounts.js';
import { AdjustBalanceDocument, SetTrustedPartnerDocument } from '../graphql/generated.js';

const gw = useTestGateway();

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    throw error;
  }
}

/** A random cost between 0 and `max`, at 10 decimal places. */
function randomCostUpTo(max: string): string {
  return new Decimal(max).times(Math.random()).toDecimalPlaces(10, Decimal.ROUND_DOWN).toFixed();
}

describe('holds against a balance', () => {
  it('200 parallel $0.10 holds on $1.00 admit exactly 10; settlements are exact, ledger = balance, replays change nothing', async () => {
    const { userId } = await newFundedAccount(gw, '1.00');
    const requestIds = Array.from({ length: 200 }, () => `req-${randomUUID()}`);
    const outcomes = await Promise.all(
      requestIds.map((requestId) => codeOf(gw.services.billing.hold({ userId, apiKeyId: null, requestId, amountUsd: '0.10' }))),
    );
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(10);
    expect(outcomes.filter((o) => o === 'insufficient_balance')).toHaveLength(190);

    const admitted = requestIds.filter((_, i) => outcomes[i] === 'ok');
    const costs = admitted.map(() => randomCostUpTo('0.10'));
    const settlements = await Promise.all(
      admitted.map((requestId, i) =>
        gw.services.billing.settle({ requestId, userId, apiKeyId: null, costUsd: costs[i]!, kind: 'usage', provider: 'family_a', model: 'gen-5.6-luna', promptTokens: 10, completionTokens: 5 }),
      ),
    );
    expect(settlements.every((s) => s.applied)).toBe(true);
    const spent = costs.reduce((sum, c) => sum.plus(c), new Decimal(0));
    const expected = new Decimal('1.00').minus(spent);

    const after = await ledgerBalance(gw, userId);
    expect(new Decimal(after.balance).equals(expected)).toBe(true);
    expect(after.ledger).toBe(after.balance);
    expect(after.paidMatches && after.bonusMatches).toBe(true);
    const [{ active }] = await gw.db.query<{ active: number }>(`select count(*)::int as active from holds where user_id = $1 and status = 'active'`, [userId]);
    expect(active).toBe(0);

    // Replaying every settlement (a retried worker, a duplicated message) posts nothing.
    const replays = await Promise.all(
      admitted.map((requestId, i) =>
        gw.services.billing.settle({ requestId, userId, apiKeyId: null, costUsd: costs[i]!, kind: 'usage', provider: 'family_a', model: 'gen-5.6-luna', promptTokens: 10, completionTokens: 5 }),
      ),
    );
    expect(replays.every((r) => !r.applied)).toBe(true);
    expect(replays.map((r) => r.transactionId)).toEqual(settlements.map((s) => s.transactionId));
    const replayed = await ledgerBalance(gw, userId);
    expect(replayed.balance).toBe(after.balance);
    expect(replayed.ledger).toBe(after.balance);
    const [{ rows }] = await gw.db.query<{ rows: number }>(`select count(*)::int as rows from transactions where user_id = $1 and kind = 'usage'`, [userId]);
    expect(rows).toBe(10);
  });

  it('after 300 parallel holds of 10-place amounts and their settlements, the admission figures equal the ledger to the last 1e-10 USD', async () => {
    const { userId } = await newFundedAccount(gw, '0.77');
    // Amounts no binary float holds exactly; about a third of them fit the balance.
    const amounts = Array.from({ length: 300 }, () => new Decimal('0.0000000001').plus(randomCostUpTo('0.0077')).toFixed());
    const requestIds = amounts.map(() => `req-${randomUUID()}`);
    const outcomes = await Promise.all(requestIds.map((requestId, i) => codeOf(gw.services.billing.hold({ userId, apiKeyId: null, requestId, amountUsd: amounts[i]! }))));
    const admitted = requestIds.flatMap((requestId, i) => (outcomes[i] === 'ok' ? [{ requestId, amount: amounts[i]! }] : []));
    expect(outcomes.filter((o) => o !== 'ok' && o !== 'insufficient_balance')).toEqual([]);
    expect(admitted.length).toBeGreaterThan(20);
    const heldSum = admitted.reduce((sum, a) => sum.plus(a.amount), new Decimal(0));
    expect(heldSum.lessThanOrEqualTo('0.77')).toBe(true);
    const view = (await gw.services.wallets.view(userId, null))!;
    expect(view.held.equals(heldSum)).toBe(true);
    expect(view.available.equals(new Decimal('0.77').minus(heldSum))).toBe(true);

    const costs = admitted.map((a) => randomCostUpTo(a.amount));
    await Promise.all(admitted.map((a, i) => gw.services.billing.settle({ requestId: a.requestId, userId, apiKeyId: null, costUsd: costs[i]!, kind: 'usage', provider: 'family_a', model: 'gen-5.6-luna', promptTokens: 1, completionTokens: 1 })));
    const after = await ledgerBalance(gw, userId);
    expect(after.ledger).toBe(after.balance);
    const settled = (await gw.services.wallets.view(userId, null))!;
    expect(settled.held.isZero()).toBe(true);
    expect(settled.balance.equals(after.balance)).toBe(true);
    expect(settled.balance.equals(new Decimal('0.77').minus(costs.reduce((sum, c) => sum.plus(c), new Decimal(0))))).toBe(true);

    // Exactly what is available can be held, to the unit; one unit more cannot.
    const rest = settled.available.toFixed();
    expect(await codeOf(gw.services.billing.hold({ userId, apiKeyId: null, requestId: `req-${randomUUID()}`, amountUsd: new Decimal(rest).plus('0.0000000001').toFixed() }))).toBe('insufficient_balance');
    expect(await codeOf(gw.services.billing.hold({ userId, apiKeyId: null, requestId: `req-${randomUUID()}`, amountUsd: rest }))).toBe('ok');
    expect((await gw.services.wallets.view(userId, null))!.available.isZero()).toBe(true);
  });

  it("200 parallel holds against a key's $0.50 monthly cap admit exactly 5, even with balance to spare", async () => {
    const account = await newFundedAccount(gw, '100');
    const key = await gw.services.keys.create(account.actor, { label: 'capped', monthlySpendCap: '0.50' });
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, () => codeOf(gw.services.billing.hold({ userId: account.userId, apiKeyId: key.id, requestId: `req-${randomUUID()}`, amountUsd: '0.10' }))),
    );
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(5);
    expect(outcomes.filter((o) => o === 'spend_cap_reached')).toHaveLength(195);

    // What was spent this month counts against the cap too: settle the holds, then only the remainder fits.
    const holds = await gw.db.query<{ request_id: string }>(`select request_id from holds where api_key_id = $1 and status = 'active'`, [key.id]);
    for (const hold of holds) {
      await gw.services.billing.settle({ requestId: hold.request_id, userId: account.userId, apiKeyId: key.id, costUsd: '0.06', kind: 'usage', provider: 'family_a', model: 'zeta-5.2', promptTokens: 1, completionTokens: 1 });
    }
    // $0.30 spent, so $0.20 of cap is left: two $0.10 holds fit, a third does not.
    const later = await Promise.all(
      Array.from({ length: 20 }, () => codeOf(gw.services.billing.hold({ userId: account.userId, apiKeyId: key.id, requestId: `req-${randomUUID()}`, amountUsd: '0.10' }))),
    );
    expect(later.filter((o) => o === 'ok')).toHaveLength(2);
    const after = await ledgerBalance(gw, account.userId);
    expect(after.balance).toBe('99.7000000000');
    expect(after.ledger).toBe(after.balance);
  });

  it('a released hold frees its amount; a hold past its expiry stops counting and is swept', async () => {
    const { userId } = await newFundedAccount(gw, '0.30');
    await gw.services.billing.hold({ userId, apiKeyId: null, requestId: 'release-me-' + randomUUID(), amountUsd: '0.30' }).then(async (hold) => {
      expect(await codeOf(gw.services.billing.hold({ userId, apiKeyId: null, requestId: randomUUID(), amountUsd: '0.01' }))).toBe('insufficient_balance');
      expect(await gw.services.billing.release(hold.requestId)).toBe(true);
      expect(await gw.services.billing.release(hold.requestId)).toBe(false);
    });
    const short = await gw.services.billing.hold({ userId, apiKeyId: null, requestId: randomUUID(), amountUsd: '0.30', ttlMs: 50 });
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(await codeOf(gw.services.billing.hold({ userId, apiKeyId: null, requestId: randomUUID(), amountUsd: '0.30' }))).toBe('ok');
    expect(await gw.services.billing.expireHolds()).toBeGreaterThanOrEqual(1);
    const [row] = await gw.db.query<{ status: string }>('select status from holds where id = $1', [short.id]);
    expect(row!.status).toBe('expired');
  });

  it('a repeated hold for the same request is the same hold, not a second reservation', async () => {
    const { userId } = await newFundedAccount(gw, '0.10');
    const requestId = randomUUID();
    const [a, b] = await Promise.all([
      gw.services.billing.hold({ userId, apiKeyId: null, requestId, amountUsd: '0.10' }),
      gw.services.billing.hold({ userId, apiKeyId: null, requestId, amountUsd: '0.10' }),
    ]);
    expect(a.id).toBe(b.id);
  });
});

describe('bonus, adjustments and trusted partners', () => {
  it('spends bonus balance first, then paid', async () => {
    const { userId } = await newFundedAccount(gw, '1');
    await gw.services.billing.post({ userId, amountUsd: '0.25', kind: 'bonus', bucket: 'bonus', idempotencyKey: `bonus:${randomUUID()}` });
    const requestId = randomUUID();
    await gw.services.billing.hold({ userId, apiKeyId: null, requestId, amountUsd: '0.40' });
    await gw.services.billing.settle({ requestId, userId, apiKeyId: null, costUsd: '0.40', kind: 'usage', provider: null, model: null, promptTokens: null, completionTokens: null });
    const [user] = await gw.db.query<{ paid: string; bonus: string }>('select balance_paid_usd::text as paid, balance_bonus_usd::text as bonus from users where id = $1', [userId]);
    expect(user).toEqual({ paid: '0.8500000000', bonus: '0.0000000000' });
    const [tx] = await gw.db.query<{ paid_usd: string; bonus_usd: string }>(`select paid_usd::text, bonus_usd::text from transactions where idempotency_key = $1`, [`usage:${requestId}`]);
    expect(tx).toEqual({ paid_usd: '-0.1500000000', bonus_usd: '-0.2500000000' });
    expect((await ledgerBalance(gw, userId)).paidMatches).toBe(true);
  });

  it('admins adjust balances once per idempotency key, with a reason; others are FORBIDDEN', async () => {
    const admin = await newAdmin(gw);
    const target = await newFundedAccount(gw);
    const input = { userId: target.userId, amountUsd: '12.3456789012', reason: 'goodwill credit', idempotencyKey: `adj-${randomUUID()}` };
    const first = await graphql(gw.url, AdjustBalanceDocument, { input }, admin.token);
    expect(first.data!.adjustBalance).toMatchObject({ amountUsd: '12.3456789012', applied: true });
    const again = await graphql(gw.url, AdjustBalanceDocument, { input }, admin.token);
    expect(again.data!.adjustBalance).toMatchObject({ transactionId: first.data!.adjustBalance.transactionId, applied: false });
    const debit = await graphql(gw.url, AdjustBalanceDocument, { input: { ...input, amountUsd: '-2.3456789012', idempotencyKey: `adj-${randomUUID()}` } }, admin.token);
    expect(debit.data!.adjustBalance.amountUsd).toBe('-2.3456789012');
    expect((await ledgerBalance(gw, target.userId)).balance).toBe('10.0000000000');

    const forbidden = await graphql(gw.url, AdjustBalanceDocument, { input: { ...input, idempotencyKey: `adj-${randomUUID()}` } }, target.token);
    expect(forbidden.errors![0]!.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'admin_required' });
    const invalid = await graphql(gw.url, AdjustBalanceDocument, { input: { ...input, amountUsd: '1e3', reason: '' } }, admin.token);
    expect(invalid.errors![0]!.extensions!.issues.map((i: any) => i.loc[0]).sort()).toEqual(['amountUsd', 'reason']);
    const [{ note }] = await gw.db.query<{ note: string }>(`select note from transactions where user_id = $1 and kind = 'adjustment' order by created_at limit 1`, [target.userId]);
    expect(note).toContain('goodwill credit');
  });

  it('a trusted partner may spend below zero down to the credit limit while the status lasts', async () => {
    const admin = await newAdmin(gw);
    const partner = await newFundedAccount(gw, '1');
    const until = new Date(Date.now() + 86_400_000).toISOString();
    const granted = await graphql(gw.url, SetTrustedPartnerDocument, { input: { userId: partner.userId, validUntil: until, creditLimitUsd: '5' } }, admin.token);
    expect(granted.data!.setTrustedPartner).toEqual({ userId: partner.userId, trustedPartnerUntil: until, creditLimitUsd: '5' });
    // Dates JavaScript can hold but PostgreSQL cannot (as tRPC passes them on) are a validation error, not a 500.
    for (const farAway of ['+275760-09-13T00:00:00.000Z', '+010000-01-01T00:00:00Z', '-000001-01-01T00:00:00Z']) {
      const refused = await gw.services.billing.setTrustedPartner(admin.actor, { userId: partner.userId, validUntil: farAway, creditLimitUsd: '5' }).catch((error: DomainError) => error);
      expect([farAway, (refused as DomainError).reason, (refused as DomainError).issues?.[0]?.loc]).toEqual([farAway, 'validation_failed', ['validUntil']]);
    }
    expect((await ledgerBalance(gw, partner.userId)).balance).toBe('1.0000000000');

    const outcomes = await Promise.all(
      Array.from({ length: 100 }, () => codeOf(gw.services.billing.hold({ userId: partner.userId, apiKeyId: null, requestId: randomUUID(), amountUsd: '0.5' }))),
    );
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(12); // $1 balance + $5 credit
    const held = await gw.db.query<{ request_id: string }>(`select request_id from holds where user_id = $1 and status = 'active'`, [partner.userId]);
    for (const hold of held) {
      await gw.services.billing.settle({ requestId: hold.request_id, userId: partner.userId, apiKeyId: null, costUsd: '0.5', kind: 'usage', provider: null, model: null, promptTokens: null, completionTokens: null });
    }
    const after = await ledgerBalance(gw, partner.userId);
    expect(after.balance).toBe('-5.0000000000');
    expect(after.ledger).toBe(after.balance);

    // A larger line that lasts a moment: it admits while it lasts, and nothing fits once it has expired.
    const shortly = new Date(Date.now() + 400).toISOString();
    await graphql(gw.url, SetTrustedPartnerDocument, { input: { userId: partner.userId, validUntil: shortly, creditLimitUsd: '6' } }, admin.token);
    const whileValid = randomUUID();
    expect(await codeOf(gw.services.billing.hold({ userId: partner.userId, apiKeyId: null, requestId: whileValid, amountUsd: '0.50' }))).toBe('ok');
    await gw.services.billing.release(whileValid);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await codeOf(gw.services.billing.hold({ userId: partner.userId, apiKeyId: null, requestId: randomUUID(), amountUsd: '0.01' }))).toBe('insufficient_balance');
  });
});
