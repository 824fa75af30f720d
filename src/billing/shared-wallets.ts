import { randomUUID } from 'node:crypto';
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
 * Shared by the scripts that admit or read money: the wallet epoch this process joined must be the
 * current one, and past its re-assertion window (see the class comment). Returns nil when it is.
 */
const CHECK_EPOCH = `
local function epoch_problem(epochKey, known, now)
  local current = redis.call('GET', epochKey)
  if not current or current ~= known then return {-3} end
  local readyAt = tonumber(string.match(current, '|(%d+)$'))
  if readyAt and now < readyAt then return {-4, readyAt - now} end
  return nil
end
`;

/**
 * KEYS: account, key spend, epoch. ARGV: hold id, amount, key id ('' none), cap ('' none), ttl ms, month, idle ttl, epoch.
 * Returns {0} held, {1} insufficient balance, {2} spend cap, {-1} account not seeded, {-2} key not cached,
 * {-3} another epoch (rejoin), {-4, ms} the epoch's re-assertion window is still open.
 */
const RESERVE = `${READ_ACCOUNT}${CHECK_EPOCH}
local problem = epoch_problem(KEYS[3], ARGV[8], now_ms())
if problem then return problem end
if redis.call('HGET', KEYS[1], 's') ~= '1' then return {-1} end
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
  if redis.call('HGET', KEYS[1], 's') == '1' then redis.call('HINCRBY', KEYS[1], 'b', -tonumber(ARGV[2])) end
  if redis.call('HGET', KEYS[2], 'm') == ARGV[3] then redis.call('HINCRBY', KEYS[2], 's', ARGV[2]) end
end
return 1
`;

/** KEYS: account, key spend, epoch. ARGV: key id, month, epoch. Returns {b, c, held, keyHeld, spent} in units, or {-1}..{-4} as RESERVE. */
const VIEW = `${READ_ACCOUNT}${CHECK_EPOCH}
local problem = epoch_problem(KEYS[3], ARGV[3], now_ms())
if problem then return problem end
if redis.call('HGET', KEYS[1], 's') ~= '1' then return {-1} end
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

/**
 * KEYS: account. ARGV: idle ttl, then field/value pairs, then the hold fields. Seeds only an account not
 * seeded yet (marked by s = 1), keeping any hold another process re-asserted into it meanwhile.
 */
const SEED_ACCOUNT = `
if redis.call('HGET', KEYS[1], 's') == '1' then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('HSET', KEYS[1], 's', '1')
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
if redis.call('HGET', KEYS[1], 's') ~= '1' then return 0 end
if ARGV[1] == 'incr' then return redis.call('HINCRBY', KEYS[1], 'b', ARGV[2]) end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
`;

/**
 * KEYS: the epoch, then the account of each hold. ARGV: lease ms, idle ttl, epoch, then per hold its id,
 * amount and key id. Moves each hold's expiry, and puts back a hold its account lost (an evicted hash):
 * a process that died stops renewing, and only its holds drop out. Returns -3 when the epoch changed
 * (Redis lost its data: the process rejoins, re-asserting every hold), else the number of holds.
 */
const RENEW_HOLDS = `
local current = redis.call('GET', KEYS[1])
if not current or current ~= ARGV[3] then return -3 end
local t = redis.call('TIME')
local expiry = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #KEYS do
  local base = 4 + (i - 2) * 3
  redis.call('HSET', KEYS[i], 'h:' .. ARGV[base], ARGV[base + 1] .. '|' .. ARGV[base + 2] .. '|' .. expiry)
  redis.call('PEXPIRE', KEYS[i], ARGV[2])
end
return #KEYS - 1
`;

/**
 * KEYS: the epoch. ARGV: a new epoch id, the re-assertion window ms. Starts an epoch unless one exists;
 * returns the current one, "<id>|<ms on Redis's clock when admissions may start>".
 */
const JOIN_EPOCH = `
local current = redis.call('GET', KEYS[1])
if current then return current end
local t = redis.call('TIME')
local readyAt = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[2])
current = ARGV[1] .. '|' .. string.format('%.0f', readyAt)
redis.call('SET', KEYS[1], current)
return current
`;

type Scripts = {
  walletReserve(account: string, key: string, epoch: string, ...args: string[]): Promise<number[]>;
  walletSettle(account: string, key: string, ...args: string[]): Promise<number>;
  walletView(account: string, key: string, epoch: string, ...args: string[]): Promise<string[] | number[]>;
  walletSeedAccount(account: string, ...args: string[]): Promise<number>;
  walletSeedKey(key: string, ...args: string[]): Promise<number>;
  walletUpdate(account: string, ...args: string[]): Promise<number>;
  walletRenew(...keysAndArgs: (string | number)[]): Promise<number>;
  walletJoinEpoch(epoch: string, id: string, windowMs: string): Promise<string>;
};

/**
 * Balances, holds and key spend shared by every gateway process through Redis: one atomic script
 * admits a hold against what all processes hold, so N processes cannot spend N times a balance.
 * Redis is a cache seeded from PostgreSQL (the ledger stays the truth and is written as before); when
 * Redis cannot answer, billable requests are refused with 503 rather than admitted unchecked.
 *
 * Redis losing its data (a restart without persistence, a failover, an eviction) must not lose the holds
 * of requests in flight: those live only here, and a reseed from PostgreSQL would admit against a balance
 * without them. So the state lives in an epoch (`wallet-epoch`, "<id>|<ready at>"): every script that
 * admits or reads money names the epoch its process joined, and a missing or different epoch sends the
 * process to rejoin. Joining starts a new epoch when there is none; if PostgreSQL (`wallet_epochs`) says
 * Redis had one before, the new epoch admits nothing for one lease (SLOT_LEASE_SECONDS), while every live
 * process notices (at its next request or hold renewal, every third of a lease) and re-asserts its
 * in-flight holds. A process that does not re-assert within a lease is as good as dead, and its holds
 * would have expired anyway. The renewal also puts back holds an evicted account hash lost, and an
 * account is seeded (its figures from PostgreSQL, marked `s`) without dropping holds already re-asserted
 * into it. Admission stays free of PostgreSQL round trips; only starting an epoch reads it.
 */
export class SharedWallets implements WalletStore {
  /** Holds this process made and has not closed yet (for `has` and the shutdown check). */
  private readonly holds = new Map<string, WalletHold>();
  /** Accounts whose cached figures missed an update while Redis was away: dropped once it is back. */
  private readonly stale = new Set<string>();
  /** Request holds (not durable ones) live on a lease this process renews, like concurrency slots. */
  private readonly leased = new Set<string>();
  /** The wallet epoch this process joined (null: not yet, or Redis lost it). */
  private epoch: string | null = null;
  private joining: Promise<void> | null = null;
  private readonly renewTimer: NodeJS.Timeout;

  constructor(
    private readonly deps: { orm: MikroORM; shared: SharedState; log: Logger; leaseMs: number },
    private readonly now: () => number = Date.now,
  ) {
    const redis = deps.shared.command;
    redis.defineCommand('walletReserve', { numberOfKeys: 3, lua: RESERVE });
    redis.defineCommand('walletSettle', { numberOfKeys: 2, lua: SETTLE });
    redis.defineCommand('walletView', { numberOfKeys: 3, lua: VIEW });
    redis.defineCommand('walletJoinEpoch', { numberOfKeys: 1, lua: JOIN_EPOCH });
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
    const [verdict, waitMs] = await this.call((scripts) =>
      this.withEpoch(request.userId, request.keyId, month, (epoch) => scripts.walletReserve(this.accountKey(request.userId), this.keySpendKey(request.keyId), this.epochKey, ...args, epoch)),
    );
    if (verdict === 1) throw new DomainError('insufficient_balance', 'Insufficient balance for this request; top up to continue');
    if (verdict === 2) throw new DomainError('spend_cap_reached', "This key's monthly spend cap is reached");
    if (verdict !== 0) throw unavailable(waitMs);
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
    const result = await this.call((scripts) => this.withEpoch(userId, keyId, month, (epoch) => scripts.walletView(this.accountKey(userId), this.keySpendKey(keyId), this.epochKey, keyId ?? '', month, epoch)));
    if (result.length < 5) throw unavailable(Number(result[1] ?? 0));
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

  /**
   * Runs a money script in the current epoch: joins it first when this process has not (or Redis lost
   * the old one), seeds what the script found missing, and answers the script's last verdict.
   */
  private async withEpoch<T extends (number | string)[]>(userId: string, keyId: string | null, month: string, run: (epoch: string) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (this.epoch === null) await this.join();
      const result = await run(this.epoch!);
      const verdict = Number(result[0]);
      if (attempt === 3) return result;
      if (verdict === -3) this.epoch = null;
      else if (verdict === -1 || verdict === -2) await this.seed(userId, keyId, month);
      else return result;
    }
  }

  /** Joins the current epoch (starting one if Redis has none), re-asserting every hold this process has in flight. */
  private join(): Promise<void> {
    this.joining ??= (async () => {
      const started = await this.startEpoch();
      await this.reassert(started);
    })().finally(() => (this.joining = null));
    return this.joining;
  }

  private async startEpoch(): Promise<string> {
    const existing = await this.deps.shared.command.get(this.epochKey);
    if (existing) return existing;
    // Redis has no epoch: a first start, or it lost its data. PostgreSQL remembers whether one existed,
    // and only then must admissions wait one lease for every live process to re-assert its holds.
    const lost = await this.witnessedEpoch();
    const epoch = await this.scripts.walletJoinEpoch(this.epochKey, randomUUID(), String(lost ? this.deps.leaseMs : 0));
    await this.witnessEpoch(epoch);
    if (lost) this.deps.log.warn({ epoch, waitMs: this.deps.leaseMs }, 'Redis lost the shared wallets: a new epoch starts; billable requests wait one lease while every process re-asserts its holds');
    return epoch;
  }

  /** Puts this process's in-flight holds back into the epoch (into account hashes seeded or not), then adopts it. */
  private async reassert(epoch: string): Promise<void> {
    const holds = [...this.leased].map((id) => this.holds.get(id)).filter((hold): hold is WalletHold => hold !== undefined);
    if (holds.length) {
      const verdict = await this.renewScript(epoch, holds);
      if (verdict === -3) throw new Error('the wallet epoch changed while holds were re-asserted');
      this.deps.log.info({ holds: holds.length, epoch }, 'in-flight holds re-asserted into the shared wallets');
    }
    this.epoch = epoch;
  }

  private renewScript(epoch: string, holds: WalletHold[]): Promise<number> {
    return this.scripts.walletRenew(
      holds.length + 1,
      this.epochKey,
      ...holds.map((hold) => this.accountKey(hold.userId)),
      this.deps.leaseMs,
      IDLE_TTL_MS,
      epoch,
      ...holds.flatMap((hold) => [hold.id, unitsText(hold.amount), hold.keyId ?? '']),
    );
  }

  private async renew(): Promise<void> {
    if (!this.leased.size || !this.deps.shared.healthy || this.joining) return;
    // Taken and sent without a pause: on one connection, a settlement sent before it is applied before it.
    const holds = [...this.leased].map((id) => this.holds.get(id)).filter((hold): hold is WalletHold => hold !== undefined);
    try {
      if (this.epoch === null || (await this.renewScript(this.epoch, holds)) === -3) {
        this.epoch = null;
        await this.join();
      }
    } catch (error) {
      this.deps.log.warn({ err: (error as Error).message, holds: holds.length }, 'could not renew balance holds');
    }
  }

  /** Whether PostgreSQL recorded a wallet epoch for this Redis prefix (Redis had state to lose). */
  private async witnessedEpoch(): Promise<boolean> {
    const rows = await this.deps.orm.em.fork().execute<{ n: number }[]>('select count(*)::int as n from wallet_epochs where prefix = ?', [this.deps.shared.prefix]);
    return (rows[0]?.n ?? 0) > 0;
  }

  private async witnessEpoch(epoch: string): Promise<void> {
    await this.deps.orm.em
      .fork()
      .execute('insert into wallet_epochs (prefix, epoch) values (?, ?) on conflict (prefix) do update set epoch = excluded.epoch, started_at = now()', [this.deps.shared.prefix, epoch]);
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
    // Only the figures go: holds (this process's and others') stay, and the next use reseeds the figures.
    const pipeline = this.deps.shared.command.multi();
    for (const userId of users) pipeline.hdel(this.accountKey(userId), 's', 'b', 'c', 'p');
    await pipeline.exec().catch(() => users.forEach((u) => this.stale.add(u)));
  }

  private get scripts(): Scripts {
    return this.deps.shared.command as unknown as Scripts;
  }

  private get epochKey(): string {
    return `${this.deps.shared.prefix}wallet-epoch`;
  }

  private accountKey(userId: string): string {
    return `${this.deps.shared.prefix}wallet:${userId}`;
  }

  /** A fixed placeholder for "no key" keeps the scripts' key count constant. */
  private keySpendKey(keyId: string | null): string {
    return `${this.deps.shared.prefix}keyspend:${keyId ?? '-'}`;
  }
}

function unavailable(waitMs = 0): DomainError {
  return new DomainError('unavailable', 'Billing is temporarily unavailable; retry shortly', { retryAfterSeconds: Math.max(2, Math.ceil(waitMs / 1000)), reason: 'billing_unavailable' });
}
