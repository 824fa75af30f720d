import { randomBytes, randomUUID } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SharedWallets } from '../../src/billing/shared-wallets.js';
import { Wallets, type ReserveRequest, type WalletStore } from '../../src/billing/wallets.js';
import { loadConfig } from '../../src/config.js';
import { migrate, openDatabase, type Database } from '../../src/db/database.js';
import { DomainError } from '../../src/shared/errors.js';
import { createLogger } from '../../src/shared/logging.js';
import { toUnits } from '../../src/shared/money.js';
import { SharedState } from '../../src/shared/redis.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/**
 * The caps of an organization (issue 56) at the wallet stores themselves: a member's month across their keys, and
 * the organization's month, held atomically at admission like a key's cap, in one process (memory) and across two
 * (two Redis connections, two SharedWallets: the scripts in src/billing/shared-wallet-scripts.ts).
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const log = createLogger('silent');
const HOLD = '0.01';

let db: TestDatabase;
let database: Database;
beforeAll(async () => {
  db = await createTestDatabase();
  database = await openDatabase(loadConfig({ DATABASE_URL: db.url, NODE_ENV: 'test', LOG_LEVEL: 'silent' }), log);
  await migrate(database.orm, log);
}, 60_000);
afterAll(async () => {
  await database?.close();
  await db?.drop();
});

interface Org {
  id: string;
  members: { userId: string; keyIds: string[]; cap: string | null }[];
}

/** An organization with a balance, an optional monthly cap, and members with keys and optional caps (rows as the service writes them). */
async function organization(balance: string, orgCap: string | null, memberCaps: (string | null)[]): Promise<Org> {
  const id = randomUUID();
  const owner = randomUUID();
  await db.query(`insert into users (id, username, email, email_verified) values ($1, $2, $3, true)`, [owner, `owner-${owner.slice(0, 8)}`, `${owner}@example.test`]);
  await db.query(`insert into users (id, kind) values ($1, 'organization')`, [id]);
  await db.query(`insert into organizations (id, name, owner_id, monthly_spend_cap_usd) values ($1, 'Team', $2, $3)`, [id, owner, orgCap]);
  await db.query(`insert into organization_members (organization_id, user_id, role) values ($1, $2, 'owner')`, [id, owner]);
  const members = [];
  for (const [i, cap] of memberCaps.entries()) {
    const userId = randomUUID();
    await db.query(`insert into users (id, username) values ($1, $2)`, [userId, `m${i}-${userId.slice(0, 8)}`]);
    await db.query(`insert into organization_members (organization_id, user_id, role, monthly_spend_cap_usd) values ($1, $2, 'member', $3)`, [id, userId, cap]);
    const keyIds = [];
    for (let k = 0; k < (i === memberCaps.length - 1 ? 2 : 1); k++) {
      const keyId = randomUUID();
      await db.query(
        `insert into api_keys (id, user_id, key_hash, key_hint, provider_family, route_group, pricing_plan, created_by) values ($1, $2, $3, 'abcd', 'openai', 'cheap', 'standard', $4)`,
        [keyId, id, randomBytes(16).toString('hex'), userId],
      );
      keyIds.push(keyId);
    }
    members.push({ userId, keyIds, cap });
  }
  await credit(id, balance, 'topup');
  return { id, members };
}

/** A ledger row with the account's stored balance moved by it, as the one writer does. */
async function credit(userId: string, amount: string, kind: string, apiKeyId: string | null = null): Promise<void> {
  await db.query(
    `with tx as (insert into transactions (id, user_id, amount_usd, paid_usd, bonus_usd, kind, api_key_id, idempotency_key) values ($1, $2, $3, $3, 0, $4, $5, $6) returning amount_usd)
     update users set balance_paid_usd = balance_paid_usd + (select amount_usd from tx) where id = $2`,
    [randomUUID(), userId, amount, kind, apiKeyId, `test:${randomUUID()}`],
  );
}

const opened: { states: SharedState[]; stores: SharedWallets[]; prefix: string }[] = [];
async function twoProcesses(): Promise<WalletStore[]> {
  const prefix = `baikal-test:${randomBytes(6).toString('hex')}:`;
  const states = [new SharedState(REDIS_URL, log, prefix), new SharedState(REDIS_URL, log, prefix)];
  await Promise.all(states.map((s) => s.connect()));
  const stores = states.map((shared) => new SharedWallets({ orm: database.orm, shared, log, leaseMs: 15_000 }));
  opened.push({ states, stores, prefix });
  return stores;
}
afterEach(async () => {
  for (const { states, stores, prefix } of opened.splice(0)) {
    for (const store of stores) store.stop();
    const keys = await states[0]!.command.keys(`${prefix}*`);
    if (keys.length) await states[0]!.command.del(...keys);
    await Promise.all(states.map((s) => s.close()));
  }
});

/** One request of a member's key: held at HOLD, settled at its hold a moment later; the refusal's reason otherwise. */
async function spend(store: WalletStore, org: Org, orgCap: string | null, member: Org['members'][number], keyId: string): Promise<string> {
  const request: ReserveRequest = { id: randomUUID(), userId: org.id, keyId, monthlySpendCap: null, memberId: member.userId, memberMonthlyCap: member.cap, ownerMonthlyCap: orgCap, amount: toUnits(HOLD) };
  try {
    await store.warm(org.id, keyId, member.userId, orgCap !== null);
    const hold = await store.reserve(request);
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
    store.settle(hold.id, toUnits(HOLD), { userId: org.id, keyId, memberId: member.userId });
    return 'admitted';
  } catch (error) {
    if (error instanceof DomainError) return error.reason;
    throw error;
  }
}

describe.each([
  { on: 'one process (in memory)', stores: async (): Promise<WalletStore[]> => [new Wallets({ orm: database.orm })] },
  { on: 'two processes (Redis)', stores: twoProcesses },
])('organization caps in $on', ({ stores: open }) => {
  it('ten members spending in parallel never pass a member’s cap, the organization’s cap or its balance', async () => {
    // Members 0-4 may spend 0.05 a month each (member 0 has spent 0.02 already), 5-9 have no cap; the organization
    // may spend 0.60 a month of its 1.00.
    const org = await organization('1.00', '0.60', ['0.05', '0.05', '0.05', '0.05', '0.05', null, null, null, null, null]);
    await credit(org.id, '-0.02', 'usage', org.members[0]!.keyIds[0]!);
    const stores = await open();
    const attempts = org.members.flatMap((member, m) => Array.from({ length: 20 }, (_, i) => ({ member, keyId: member.keyIds[i % member.keyIds.length]!, m })));
    const verdicts = await Promise.all(attempts.map(({ member, keyId }, i) => spend(stores[i % stores.length]!, org, '0.60', member, keyId)));
    const admittedOf = (m: number) => verdicts.filter((v, i) => v === 'admitted' && attempts[i]!.m === m).length;
    // The organization's cap binds: 0.58 left of it is exactly 58 holds of 0.01.
    expect(verdicts.filter((v) => v === 'admitted')).toHaveLength(58);
    expect(new Set(verdicts.filter((v) => v !== 'admitted'))).toEqual(new Set(['member_spend_cap_reached', 'organization_spend_cap_reached']));
    expect(admittedOf(0)).toBeLessThanOrEqual(3);
    for (const m of [1, 2, 3, 4]) expect(admittedOf(m)).toBeLessThanOrEqual(5);
    // What is settled by now counts: the organization's month is full, one more is refused on either process.
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (const store of stores) expect(await spend(store, org, '0.60', org.members[9]!, org.members[9]!.keyIds[0]!)).toBe('organization_spend_cap_reached');
  });

  it('a member’s cap counts every key of theirs, and the balance binds where no cap does', async () => {
    const org = await organization('0.10', null, [null, null, null, null, null, null, null, null, null, '0.03']);
    const stores = await open();
    const member = org.members[9]!;
    const own = await Promise.all(Array.from({ length: 8 }, (_, i) => spend(stores[i % stores.length]!, org, null, member, member.keyIds[i % 2]!)));
    expect(own.filter((v) => v === 'admitted')).toHaveLength(3);
    expect(new Set(own.filter((v) => v !== 'admitted'))).toEqual(new Set(['member_spend_cap_reached']));
    const others = org.members.slice(0, 9);
    const rest = await Promise.all(Array.from({ length: 60 }, (_, i) => spend(stores[i % stores.length]!, org, null, others[i % 9]!, others[i % 9]!.keyIds[0]!)));
    expect(rest.filter((v) => v === 'admitted')).toHaveLength(7);
    expect(new Set(rest.filter((v) => v !== 'admitted'))).toEqual(new Set(['insufficient_balance']));
    const view = await stores[0]!.view(org.id, null);
    expect(new Decimal(view!.available.toFixed()).gte(0)).toBe(true);
  });
});
