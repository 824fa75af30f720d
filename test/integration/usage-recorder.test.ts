import { randomUUID } from 'node:crypto';
import { Decimal } from 'decimal.js';
import type { PostgreSqlConnection } from '@mikro-orm/postgresql';
import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import type { UsageRecord } from '../../src/usage/usage-recorder.js';
import { ledgerBalance, newFundedAccount } from '../helpers/accounts.js';
import { useTestGateway } from '../helpers/gateway.js';
import { http } from '../helpers/clients.js';
import { usageDebitOf } from '../helpers/ledger.js';

const gw = useTestGateway();

function record(userId: string, amountUsd: string): UsageRecord {
  const now = new Date();
  return {
    id: randomUUID(), userId, apiKeyId: null, requestId: `req-${randomUUID()}`, clientSurface: 'api', createdAt: now, completedAt: now,
    providerFamily: 'family_a', routeGroup: 'cheap', routeGroupLabel: 'Cheap', endpoint: '/v1/chat/completions', model: 'gen-5.6-luna',
    status: amountUsd === '0' ? 'error' : 'success', errorCode: null, latencyMs: 12, promptTokens: 10, completionTokens: 5, cacheReadTokens: null,
    cacheWriteTokens: null, totalTokens: 15, cacheHitRatio: null, publicInputUsdPer1m: '0.016', publicOutputUsdPer1m: '0.04',
    publicCacheReadUsdPer1m: '0.0016', publicCacheWriteUsdPer1m: '0.018', publicRequestUsdPerGeneration: null, amountUsd,
    officialCostUsd: null, savedUsd: null, upstreamId: 'primary',
  };
}

describe('batched usage settlement', () => {
  it('writes 500 records from many accounts in one batch: one ledger debit per account covering exactly its billed events, bonus first, ledger = balance', async () => {
    const accounts = await Promise.all(Array.from({ length: 5 }, () => newFundedAccount(gw, '1')));
    await gw.services.billing.post({ userId: accounts[0]!.userId, amountUsd: '0.0005', kind: 'bonus', bucket: 'bonus', idempotencyKey: `bonus:${randomUUID()}` });
    const records = Array.from({ length: 500 }, (_, i) => record(accounts[i % 5]!.userId, i % 10 === 0 ? '0' : '0.0000123457'));
    for (const r of records) gw.services.usage.record(r);
    await gw.services.usage.flush();

    const [{ events }] = (await gw.db.query<{ events: number }>('select count(*)::int as events from usage_events where id = any($1::uuid[])', [records.map((r) => r.id)])) as [{ events: number }];
    expect(events).toBe(500);
    const debits = await gw.db.query<{ user_id: string; kind: string; amount: string; covered: string; events: number; key: string }>(
      `select t.user_id, t.kind, t.amount_usd::text as amount, (-sum(e.amount_usd))::text as covered, count(*)::int as events, t.idempotency_key as key
         from usage_events e join transactions t on t.id = e.transaction_id where e.id = any($1::uuid[]) group by t.id`,
      [records.map((r) => r.id)],
    );
    expect(debits.map((d) => d.user_id).sort()).toEqual(accounts.map((a) => a.userId).sort());
    for (const debit of debits) {
      const billed = records.filter((r) => r.userId === debit.user_id && r.amountUsd !== '0').length; // zero-cost records are events only
      expect(debit).toMatchObject({ kind: 'usage', events: billed, amount: debit.covered, key: expect.stringMatching(/^usage-batch:/) });
      expect(debit.amount).toBe(new Decimal('-0.0000123457').times(billed).toFixed(10));
    }
    // Nothing else was posted for them: each account's usage debits are exactly these.
    const [{ usage }] = (await gw.db.query<{ usage: number }>(`select count(*)::int as usage from transactions where kind = 'usage' and user_id = any($1::uuid[])`, [accounts.map((a) => a.userId)])) as [{ usage: number }];
    expect(usage).toBe(5);
    for (const account of accounts) {
      const balance = await ledgerBalance(gw, account.userId);
      expect(balance.ledger).toBe(balance.balance);
      expect(balance.paidMatches && balance.bonusMatches).toBe(true);
    }
    const first = await ledgerBalance(gw, accounts[0]!.userId);
    expect(new Decimal(first.balance).equals(new Decimal('1.0005').minus(new Decimal('0.0000123457').times(50)))).toBe(true);
    const [bonus] = await gw.db.query<{ bonus: string }>('select balance_bonus_usd::text as bonus from users where id = $1', [accounts[0]!.userId]);
    expect(bonus!.bonus).toBe('0.0000000000'); // spent before paid balance
  });

  it('keeps each event\'s times to the millisecond (they travel as epoch milliseconds); its ledger debit is dated when the request completed', async () => {
    const account = await newFundedAccount(gw, '1');
    const started = new Date('2026-03-04T05:06:07.089Z');
    const completed = new Date('2026-03-04T05:06:08.901Z');
    const billed = { ...record(account.userId, '0.0001'), createdAt: started, completedAt: completed };
    const unfinished = { ...record(account.userId, '0'), createdAt: started, completedAt: null };
    gw.services.usage.record(billed);
    gw.services.usage.record(unfinished);
    await gw.services.usage.flush();
    const events = await gw.db.query<{ id: string; created_at: Date; completed_at: Date | null }>('select id, created_at, completed_at from usage_events where id = any($1::uuid[])', [[billed.id, unfinished.id]]);
    const byId = new Map(events.map((e) => [e.id, e]));
    expect(byId.get(billed.id)!.created_at.toISOString()).toBe('2026-03-04T05:06:07.089Z');
    expect(byId.get(billed.id)!.completed_at!.toISOString()).toBe('2026-03-04T05:06:08.901Z');
    expect(byId.get(unfinished.id)!.completed_at).toBeNull();
    const debit = await usageDebitOf(gw.db, billed.id);
    expect(debit!.created_at.toISOString()).toBe('2026-03-04T05:06:08.901Z');
    expect(await usageDebitOf(gw.db, unfinished.id)).toBeUndefined();
  });

  it('keeps every text exactly as given: quotes, backslashes, commas, braces, the word NULL, an empty string and non-Latin letters, as the batch text carries them', async () => {
    const account = await newFundedAccount(gw, '1');
    const texts = ['say "hi", \\o/ {a,b}', 'NULL', '', 'Байкал, 湖 🐟', '\\', '"', ' spaced ', 'a\tb\nc'];
    const records = texts.map((text, i) => ({ ...record(account.userId, '0.0001'), requestId: text, errorCode: text, model: `m-${text}`, upstreamId: i % 2 ? text : null, cacheHitRatio: i % 2 ? '0.25' : null }));
    for (const r of records) gw.services.usage.record(r);
    await gw.services.usage.flush();
    const rows = await gw.db.query<{ id: string; request_id: string; error_code: string; model: string; upstream_id: string | null; cache_hit_ratio: string | null; amount_usd: string }>(
      'select id, request_id, error_code, model, upstream_id, cache_hit_ratio::text, amount_usd::text from usage_events where id = any($1::uuid[])',
      [records.map((r) => r.id)],
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    for (const r of records) {
      expect(byId.get(r.id)).toMatchObject({ request_id: r.requestId, error_code: r.errorCode, model: r.model, upstream_id: r.upstreamId, amount_usd: '0.0001000000' });
      expect(byId.get(r.id)!.cache_hit_ratio === null ? null : Number(byId.get(r.id)!.cache_hit_ratio)).toBe(r.cacheHitRatio === null ? null : Number(r.cacheHitRatio));
    }
    const balance = await ledgerBalance(gw, account.userId);
    expect(balance.ledger).toBe(balance.balance);
  });

  it('a batch posts one debit per account, key and UTC month (the per-key monthly spend is summed from the ledger), each dated within its month', async () => {
    const account = await newFundedAccount(gw, '1');
    const keys = await Promise.all([0, 1].map(() => gw.services.keys.create(account.actor, {})));
    const at = (iso: string) => ({ createdAt: new Date(iso), completedAt: new Date(iso) });
    const records = [
      { ...record(account.userId, '0.01'), apiKeyId: keys[0]!.id, ...at('2026-01-31T23:59:59.900Z') },
      { ...record(account.userId, '0.02'), apiKeyId: keys[0]!.id, ...at('2026-02-01T00:00:00.100Z') },
      { ...record(account.userId, '0.04'), apiKeyId: keys[0]!.id, ...at('2026-02-01T00:00:00.200Z') },
      { ...record(account.userId, '0.08'), apiKeyId: keys[1]!.id, ...at('2026-02-01T00:00:00.300Z') },
      { ...record(account.userId, '0.16'), apiKeyId: null, promptTokens: null, completionTokens: null, ...at('2026-02-01T00:00:00.400Z') },
    ];
    for (const r of records) gw.services.usage.record(r);
    await gw.services.usage.flush();
    const debits = await gw.db.query<{ api_key_id: string | null; amount: string; created_at: Date; prompt_tokens: number | null; completion_tokens: number | null }>(
      `select api_key_id, amount_usd::text as amount, created_at, prompt_tokens, completion_tokens from transactions where user_id = $1 and kind = 'usage' order by amount_usd desc`,
      [account.userId],
    );
    expect(debits.map((d) => [d.api_key_id, d.amount, d.created_at.toISOString(), d.prompt_tokens, d.completion_tokens])).toEqual([
      [keys[0]!.id, '-0.0100000000', '2026-01-31T23:59:59.900Z', 10, 5],
      [keys[0]!.id, '-0.0600000000', '2026-02-01T00:00:00.200Z', 20, 10],
      [keys[1]!.id, '-0.0800000000', '2026-02-01T00:00:00.300Z', 10, 5],
      [null, '-0.1600000000', '2026-02-01T00:00:00.400Z', null, null], // no event reported tokens
    ]);
    const balance = await ledgerBalance(gw, account.userId);
    expect(balance.balance).toBe('0.6900000000');
    expect(balance.ledger).toBe(balance.balance);
  });

  it('records arriving while a batch waits on the database join the running drain (no flush of their own); all are billed once, ledger = balance', async () => {
    const account = await newFundedAccount(gw, '1');
    // Another transaction holds the account's row, so the first batch waits on its lock.
    const blocker = new pg.Client({ connectionString: gw.db.url });
    await blocker.connect();
    const flush = vi.spyOn(gw.services.usage, 'flush');
    try {
      await blocker.query('begin');
      await blocker.query('select 1 from users where id = $1 for update', [account.userId]);
      const records = Array.from({ length: 3_200 }, () => record(account.userId, '0.0001'));
      for (const r of records.slice(0, 500)) gw.services.usage.record(r); // a full batch: the drain starts
      await new Promise((resolve) => setTimeout(resolve, 100)); // its write is now waiting for the lock
      for (const r of records.slice(500)) gw.services.usage.record(r);
      expect(flush).toHaveBeenCalledTimes(1);
      expect(gw.services.usage.pending).toBe(2_700);
      await blocker.query('commit');
      await gw.services.usage.flush();
      const [{ events }] = (await gw.db.query<{ events: number }>('select count(*)::int as events from usage_events where user_id = $1', [account.userId])) as [{ events: number }];
      expect(events).toBe(3_200);
      const balance = await ledgerBalance(gw, account.userId);
      expect(balance.balance).toBe('0.6800000000');
      expect(balance.ledger).toBe(balance.balance);
    } finally {
      flush.mockRestore();
      await blocker.end();
    }
  });

  it('a steady trickle (one client, requests back to back) is written in a batch per flush interval, not a transaction per record', async () => {
    const account = await newFundedAccount(gw, '1');
    const writes = vi.spyOn(gw.services.usage as unknown as { write(batch: unknown[]): Promise<void> }, 'write');
    try {
      const records = Array.from({ length: 150 }, () => record(account.userId, '0.0001'));
      // One record every 4 ms for 600 ms: each batch's write ends with a record or two already waiting.
      for (const r of records) {
        gw.services.usage.record(r);
        await new Promise((resolve) => setTimeout(resolve, 4));
      }
      await gw.services.usage.flush();
      const batches = writes.mock.calls.length;
      // USAGE_FLUSH_MS is 100 here: about one batch per 100 ms (a drain that took every arrival wrote one per record or two).
      expect(batches).toBeGreaterThanOrEqual(3);
      expect(batches).toBeLessThanOrEqual(10);
      expect(writes.mock.calls.reduce((sum, [batch]) => sum + batch.length, 0)).toBe(150);
      const balance = await ledgerBalance(gw, account.userId);
      expect(balance.balance).toBe('0.9850000000');
      expect(balance.ledger).toBe(balance.balance);
    } finally {
      writes.mockRestore();
    }
  });

  it('a record written twice (a retried batch) is billed once', async () => {
    const account = await newFundedAccount(gw, '1');
    const twice = record(account.userId, '0.25');
    gw.services.usage.record(twice);
    await gw.services.usage.flush();
    gw.services.usage.record(twice);
    await gw.services.usage.flush();
    const balance = await ledgerBalance(gw, account.userId);
    expect(balance.balance).toBe('0.7500000000');
    expect(balance.ledger).toBe(balance.balance);
    expect(await gw.db.query('select 1 from usage_events where id = $1', [twice.id])).toHaveLength(1);
  });

  it('a batch that replays one record and brings new ones writes the new ones once and bills the replayed one once', async () => {
    const account = await newFundedAccount(gw, '1');
    const replayed = record(account.userId, '0.25');
    gw.services.usage.record(replayed);
    await gw.services.usage.flush();
    const fresh = [record(account.userId, '0.125'), record(account.userId, '0')];
    for (const r of [fresh[0]!, replayed, fresh[1]!]) gw.services.usage.record(r);
    await gw.services.usage.flush();
    const balance = await ledgerBalance(gw, account.userId);
    expect(balance.balance).toBe('0.6250000000');
    expect(balance.ledger).toBe(balance.balance);
    // The replayed record keeps the debit of its first batch; the second batch's debit covers the new billed record alone.
    const first = await usageDebitOf(gw.db, replayed.id);
    const second = await usageDebitOf(gw.db, fresh[0]!.id);
    expect(first).toMatchObject({ amount_usd: '-0.2500000000', covered_usd: '0.2500000000', events: 1 });
    expect(second).toMatchObject({ amount_usd: '-0.1250000000', covered_usd: '0.1250000000', events: 1 });
    expect(await usageDebitOf(gw.db, fresh[1]!.id)).toBeUndefined();
    const [{ requests }] = await gw.db.query<{ requests: number }>('select sum(requests)::int as requests from usage_hourly where user_id = $1', [account.userId]);
    expect(requests).toBe(3);
  });

  it('a replay\'s refused first attempt leaves its connection in the pool', async () => {
    const account = await newFundedAccount(gw, '1');
    const replayed = record(account.userId, '0.25');
    gw.services.usage.record(replayed);
    await gw.services.usage.flush();
    const pool = await (gw.database.orm.em.getConnection() as PostgreSqlConnection).getNativeClient();
    const removed = vi.fn();
    pool.on('remove', removed);
    try {
      gw.services.usage.record(replayed);
      gw.services.usage.record(record(account.userId, '0.125'));
      await gw.services.usage.flush();
    } finally {
      pool.off('remove', removed);
    }
    expect(removed).not.toHaveBeenCalled();
    expect((await ledgerBalance(gw, account.userId)).balance).toBe('0.6250000000');
  });

  it('GET /auth/transactions shows each billed request of a batch debit as a row of its own (its event\'s charge), newest first, beside the other rows; the rows sum to the balance', async () => {
    const account = await newFundedAccount(gw, '1');
    const at = (ms: number) => new Date(Date.UTC(2030, 0, 1) + ms);
    const records = ['0.01', '0', '0.02', '0.04'].map((amount, i) => ({ ...record(account.userId, amount), createdAt: at(i * 1000), completedAt: at(i * 1000 + 500) }));
    for (const r of records) gw.services.usage.record(r);
    await gw.services.usage.flush();
    await gw.services.billing.post({ userId: account.userId, amountUsd: '0.5', kind: 'topup', bucket: 'paid', idempotencyKey: `test-topup:${randomUUID()}` });
    const listed = await http<Record<string, unknown>[]>(gw.url, 'GET', '/auth/transactions?limit=100', { token: account.token });
    expect(listed.status).toBe(200);
    const usage = listed.body.filter((row) => row.kind === 'usage');
    expect(usage).toEqual([3, 2, 0].map((i) => ({
      id: records[i]!.id, user_id: account.userId, amount_usd: `-${records[i]!.amountUsd}`, kind: 'usage', api_key_id: null, provider: 'family_a',
      model: 'gen-5.6-luna', prompt_tokens: 10, completion_tokens: 5, created_at: records[i]!.createdAt.toISOString(),
    })));
    expect(listed.body.map((row) => row.created_at)).toEqual([...listed.body.map((row) => row.created_at as string)].sort().reverse());
    const sum = listed.body.reduce((total, row) => total.plus(row.amount_usd as string), new Decimal(0));
    const balance = await ledgerBalance(gw, account.userId);
    expect(sum.equals(balance.balance)).toBe(true);
    expect(balance.ledger).toBe(balance.balance);
    expect(listed.body.filter((row) => row.kind === 'topup')).toHaveLength(2);
    // The limit holds across both kinds of row: the two newest.
    const two = await http<Record<string, unknown>[]>(gw.url, 'GET', '/auth/transactions?limit=2', { token: account.token });
    expect(two.body.map((row) => row.id)).toEqual(listed.body.slice(0, 2).map((row) => row.id));
  });
});
