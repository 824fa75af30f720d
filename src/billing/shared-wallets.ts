import { Decimal } from 'decimal.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import { DomainError } from '../shared/errors.js';
import type { Logger } from '../shared/logging.js';
import { toUnits, unitsToMoney, type Units } from '../shared/money.js';
import type { SharedState } from '../shared/redis.js';
import { loadWalletFigures, monthOf, WALLET_HOLD_TTL_MS, type HoldOwner, type ReserveRequest, type WalletHold, type WalletStore, type WalletView } from './wallets.js';

/**
 * Money in Redis is kept as whole units of 1e-10 USD (the ledger's precision), so HINCRBY is exact;
 * Lua compares them as doubles, exact below 2^53 units (about $900,000 per account).
 */
const unitsText = (amount: Decimal.Value | Units): string => String(toUnits(amount));
const fromUnits = (value: string | number): Decimal => unitsToMoney(BigInt(value));

/** An account hash unused this long drops out of Redis and is seeded again from PostgreSQL. */
const IDLE_TTL_MS = 60 * 60_000;

/**
 * Shared by every script: read the account hash (b balance, c credit limit, p partner-until ms, and one
 * field `h:<hold id>` = "amount|key id|expiry ms" per hold), dropping expired holds.
 */
const READ_ACCOUNT = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function read_account(key, keyId, now)
  local fields = redis.call('HGETALL', key)
  local a = { b = 0, c = 0, p = 0, held = 0, keyHeld = 0 }
  for i = 1, #fields, 2 do
    local name, value = fields[i], fields[i + 1]
    if string.sub(name, 1, 2) == 'h:' then
      local amount, holdKey, expiry = string.match(value, '^([^|]*)|([^|]*)|([^|]*)$')
      if tonumber(expiry) <= now then
        redis.call('HDEL', key, name)
      else
        a.held = a.held + tonumber(amount)
        if holdKey == keyId and keyId ~= '' then a.keyHeld = a.keyHeld + tonumber(amount) end
      end
    else
      a[name] = tonumber(value)
    end
  end
  return a
end
`;

/**
 * KEYS: account, key spend. ARGV: hold id, amount, key id ('' none), cap ('' none), ttl ms, month, idle ttl.
 * Returns {0} held, {1} insufficient balance, {2} spend cap, {-1} account not cached, {-2} key not cached.
 */
const RESERVE = `${READ_ACCOUNT}
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
local keyId, cap = ARGV[3], ARGV[4]
local spent = 0
if keyId ~= '' then
  if redis.call('HGET', KEYS[2], 'm') ~= ARGV[6] then return {-2} end
  spent = tonumber(redis.call('HGET', KEYS[2], 's'))
end
if redis.call('HEXISTS', KEYS[1], 'h:' .. ARGV[1]) == 1 then return {0} end
local now = now_ms()
local a = read_account(KEYS[1], keyId, now)
local amount = tonumber(ARGV[2])
local credit = 0
if a.p > now then credit = a.c end
if amount > a.b + credit - a.held then return {1} end
if cap ~= '' and spent + a.keyHeld + amount > tonumber(cap) then return {2} end
redis.call('HSET', KEYS[1], 'h:' .. ARGV[1], ARGV[2] .. '|' .. keyId .. '|' .. (now + tonumber(ARGV[5])))
redis.call('PEXPIRE', KEYS[1], ARGV[7])
if keyId ~= '' then redis.call('PEXPIRE', KEYS[2], ARGV[7]) end
return {0}
`;

/** KEYS: account, key spend. ARGV: hold id, cost, month. The hold goes; the cost is booked where cached. */
const SETTLE = `
redis.call('HDEL', KEYS[1], 'h:' .. ARGV[1])
if ARGV[2] ~= '0' then
  if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HINCRBY', KEYS[1], 'b', -tonumber(ARGV[2])) end
  if redis.call('HGET', KEYS[2], 'm') == ARGV[3] then redis.call('HINCRBY', KEYS[2], 's', ARGV[2]) end
end
return 1
`;

/** KEYS: account, key spend. ARGV: key id, month. Returns {b, c, p, held, keyHeld, spent} in units, or {-1}/{-2}. */
const VIEW = `${READ_ACCOUNT}
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
if ARGV[1] ~= '' and redis.call('HGET', KEYS[2], 'm') ~= ARGV[2] then return {-2} end
local now = now_ms()
local a = read_account(KEYS[1], ARGV[1], now)
local spent = 0
if ARGV[1] ~= '' then spent = tonumber(redis.call('HGET', KEYS[2], 's')) end
local credit = 0
if a.p > now then credit = a.c end
local function units(x) return string.format('%.0f', x) end
return {units(a.b), units(credit), units(a.held), units(a.keyHeld), units(spent)}
`;

/** KEYS: account. ARGV: field/value pairs, then the hold fields. Seeds only an absent account. */
const SEED_ACCOUNT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`;

/** KEYS: key spend. ARGV: month, spent, idle ttl. Seeds an absent key or one of another month. */
const SEED_KEY = `
if redis.call('HGET', KEYS[1], 'm') == ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'm', ARGV[1], 's', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;

/** KEYS: account. ARGV: field, value pairs (HINCRBY when the first ARGV is 'incr'). Only where cached. */
const UPDATE_ACCOUNT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] == 'incr' then return redis.call('HINCRBY', KEYS[1], 'b', ARGV[2]) end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
`;

/**
 * KEYS: the account of each hold. ARGV: lease ms, then the hold ids in the same order. Moves the expiry
 * of each hold that still exists; a process that died stops renewing, and its holds drop out.
 */
const RENEW_HOLDS = `
local t = redis.call('TIME')
local expiry = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 1, #KEYS do
  local field = 'h:' .. ARGV[i + 1]
  local value = redis.call('HGET', KEYS[i], field)
  if value then
    local amount, holdKey = string.match(value, '^([^|]*)|([^|]*)|')
    redis.call('HSET', KEYS[i], field, amount .. '|' .. holdKey .. '|' .. expiry)
  end
end
return #KEYS
`;

type Scripts = {
  walletReserve(account: string, key: string, ...args: string[]): Promise<number[]>;
  walletSettle(account: string, key: string, ...args: string[]): Promise<number>;
  walletView(account: string, key: string, ...args: string[]): Promise<string[] | number[]>;
  walletSeedAccount(account: string, ...args: string[]): Promise<number>;
  walletSeedKey(key: string, ...args: string[]): Promise<number>;
  walletUpdate(account: string, ...args: string[]): Promise<number>;
  walletRenew(...keysAndArgs: (string | number)[]): Promise<number>;
};

/**
 * Balances, holds and key spend shared by every gateway process through Redis: one atomic script
 * admits a hold against what all processes hold, so N processes cannot spend N times a balance.
 * Redis is a cache seeded from PostgreSQL (the ledger stays the truth and is written as before); when
 * Redis cannot answer, billable requests are refused with 503 rather than admitted unchecked.
 */
export class SharedWallets implements WalletStore {
  /** Holds this process made and has not closed yet (for `has` and the shutdown check). */
  private readonly holds = new Map<string, WalletHold>();
  /** Accounts whose cached figures missed an update while Redis was away: dropped once it is back. */
  private readonly stale = new Set<string>();
  /** Request holds (not durable ones) live on a lease this process renews, like concurrency slots. */
  private readonly leased = new Set<string>();
  private readonly renewTimer: NodeJS.Timeout;

  constructor(
    private readonly deps: { orm: MikroORM; shared: SharedState; log: Logger; leaseMs: number },
    private readonly now: () => number = Date.now,
  ) {
    const redis = deps.shared.command;
    redis.defineCommand('walletReserve', { numberOfKeys: 2, lua: RESERVE });
    redis.defineCommand('walletSettle', { numberOfKeys: 2, lua: SETTLE });
    redis.defineCommand('walletView', { numberOfKeys: 2, lua: VIEW });
    redis.defineCommand('walletSeedAccount', { numberOfKeys: 1, lua: SEED_ACCOUNT });
    redis.defineCommand('walletSeedKey', { numberOfKeys: 1, lua: SEED_KEY });
    redis.defineCommand('walletUpdate', { numberOfKeys: 1, lua: UPDATE_ACCOUNT });
    redis.defineCommand('walletRenew', { lua: RENEW_HOLDS });
    redis.on('ready', () => void this.dropStale());
    this.renewTimer = setInterval(() => void this.renew(), Math.max(100, Math.floor(deps.leaseMs / 3))).unref();
  }

  stop(): void {
    clearInterval(this.renewTimer);
  }

  /** Nothing to load up front: a reservation seeds what Redis does not have. */
  isWarm(): boolean {
    return true;
  }

  async warm(): Promise<void> {}

  async reserve(request: ReserveRequest): Promise<WalletHold> {
    const existing = this.holds.get(request.id);
    if (existing) return existing;
    const amount = request.amount;
    if (amount < 0n) throw new Error('a hold cannot be negative');
    // A request's hold is leased (a crashed process's holds free within one lease); a durable hold has its own expiry.
    const leased = request.ttlMs === undefined;
    const ttlMs = request.ttlMs ?? this.deps.leaseMs;
    const month = monthOf(this.now());
    const args = [request.id, unitsText(amount), request.keyId ?? '', request.monthlySpendCap === null ? '' : unitsText(request.monthlySpendCap), String(ttlMs), month, String(IDLE_TTL_MS)];
    const [verdict] = await this.call(async (scripts) => {
      for (let attempt = 0; ; attempt++) {
        const result = await scripts.walletReserve(this.accountKey(request.userId), this.keySpendKey(request.keyId), ...args);
        if ((result[0] !== -1 && result[0] !== -2) || attempt === 2) return result;
        await this.seed(request.userId, request.keyId, month);
      }
    });
    if (verdict === 1) throw new DomainError('insufficient_balance', 'Insufficient balance for this request; top up to continue');
    if (verdict === 2) throw new DomainError('spend_cap_reached', "This key's monthly spend cap is reached");
    if (verdict !== 0) throw unavailable();
    const hold: WalletHold = { id: request.id, userId: request.userId, keyId: request.keyId, amount, expiresAt: this.now() + (leased ? WALLET_HOLD_TTL_MS : ttlMs) };
    this.holds.set(hold.id, hold);
    if (leased) this.leased.add(hold.id);
    return hold;
  }

  settle(holdId: string, cost: Units, owner: HoldOwner): void {
    this.holds.delete(holdId);
    this.leased.delete(holdId);
    // The ledger row is written by the batch writer regardless; a missed cache update marks the account stale.
    this.scripts
      .walletSettle(this.accountKey(owner.userId), this.keySpendKey(owner.keyId), holdId, unitsText(cost), monthOf(this.now()))
      .catch((error: unknown) => this.missed(owner.userId, 'settle', error));
  }

  release(holdId: string, owner?: HoldOwner): boolean {
    const hold = this.holds.get(holdId);
    this.holds.delete(holdId);
    this.leased.delete(holdId);
    const userId = hold?.userId ?? owner?.userId;
    if (!userId) return false;
    // Otherwise it expires in Redis by itself.
    this.scripts.walletSettle(this.accountKey(userId), this.keySpendKey(hold?.keyId ?? owner?.keyId ?? null), holdId, '0', '').catch(() => {});
    return hold !== undefined || owner?.durableAmount !== undefined;
  }

  has(holdId: string): boolean {
    return this.holds.has(holdId);
  }

  credit(userId: string, amount: Decimal.Value): void {
    this.scripts.walletUpdate(this.accountKey(userId), 'incr', unitsText(amount)).catch((error: unknown) => this.missed(userId, 'credit', error));
  }

  setCreditLine(userId: string, until: Date | null, limit: Decimal.Value): void {
    this.scripts
      .walletUpdate(this.accountKey(userId), 'c', unitsText(limit), 'p', String(until ? until.getTime() : 0))
      .catch((error: unknown) => this.missed(userId, 'credit line', error));
  }

  async view(userId: string, keyId: string | null): Promise<WalletView> {
    const month = monthOf(this.now());
    const result = await this.call(async (scripts) => {
      for (let attempt = 0; ; attempt++) {
        const answer = await scripts.walletView(this.accountKey(userId), this.keySpendKey(keyId), keyId ?? '', month);
        if (answer.length > 1 || attempt === 2) return answer;
        await this.seed(userId, keyId, month);
      }
    });
    if (result.length < 5) throw unavailable();
    const [balance, credit, held, , spent] = result.map((units) => fromUnits(units));
    return { balance: balance!, held: held!, available: balance!.plus(credit!).minus(held!), keyMonthSpent: keyId === null ? null : spent! };
  }

  /** Holds expire inside Redis; here only this process's bookkeeping of them. */
  sweep(): number {
    const now = this.now();
    let expired = 0;
    for (const [id, hold] of this.holds) if (hold.expiresAt <= now) (this.holds.delete(id), this.leased.delete(id), (expired += 1));
    return expired;
  }

  private async renew(): Promise<void> {
    if (!this.leased.size || !this.deps.shared.healthy) return;
    const holds = [...this.leased].map((id) => this.holds.get(id)).filter((hold): hold is WalletHold => hold !== undefined);
    try {
      await this.scripts.walletRenew(holds.length, ...holds.map((hold) => this.accountKey(hold.userId)), this.deps.leaseMs, ...holds.map((hold) => hold.id));
    } catch (error) {
      this.deps.log.warn({ err: (error as Error).message, holds: holds.length }, 'could not renew balance holds');
    }
  }

  get activeHolds(): number {
    return this.holds.size;
  }

  private async seed(userId: string, keyId: string | null, month: string): Promise<void> {
    const figures = await loadWalletFigures(this.deps.orm, userId, keyId);
    const holdFields = figures.durableHolds.flatMap((h) => [`h:${h.id}`, `${unitsText(h.amount)}|${h.keyId ?? ''}|${h.expiresAt}`]);
    const fields = ['b', unitsText(figures.balance), 'c', unitsText(figures.creditLimit), 'p', String(figures.partnerUntil ?? 0), ...holdFields];
    await this.scripts.walletSeedAccount(this.accountKey(userId), String(IDLE_TTL_MS), ...fields);
    if (keyId !== null) await this.scripts.walletSeedKey(this.keySpendKey(keyId), month, unitsText(figures.keySpent ?? 0), String(IDLE_TTL_MS));
  }

  private async call<T>(work: (scripts: Scripts) => Promise<T>): Promise<T> {
    if (!this.deps.shared.healthy) throw unavailable();
    try {
      return await work(this.scripts);
    } catch (error) {
      if (error instanceof DomainError) throw error;
      this.deps.log.warn({ err: (error as Error).message }, 'shared wallet unavailable: refusing billable requests');
      throw unavailable();
    }
  }

  private missed(userId: string, what: string, error: unknown): void {
    this.stale.add(userId);
    this.deps.log.warn({ err: (error as Error).message, userId, what }, 'shared wallet update missed: the account is reloaded from PostgreSQL when Redis is back');
  }

  /** Accounts whose cached balance missed a change are dropped, so their next use reseeds them from PostgreSQL. */
  private async dropStale(): Promise<void> {
    if (!this.stale.size) return;
    const users = [...this.stale];
    this.stale.clear();
    await this.deps.shared.command.del(...users.map((userId) => this.accountKey(userId))).catch(() => users.forEach((u) => this.stale.add(u)));
  }

  private get scripts(): Scripts {
    return this.deps.shared.command as unknown as Scripts;
  }

  private accountKey(userId: string): string {
    return `${this.deps.shared.prefix}wallet:${userId}`;
  }

  /** A fixed placeholder for "no key" keeps the scripts' key count constant. */
  private keySpendKey(keyId: string | null): string {
    return `${this.deps.shared.prefix}keyspend:${keyId ?? '-'}`;
  }
}

function unavailable(): DomainError {
  return new DomainError('unavailable', 'Billing is temporarily unavailable; retry shortly', { retryAfterSeconds: 2, reason: 'billing_unavailable' });
}
