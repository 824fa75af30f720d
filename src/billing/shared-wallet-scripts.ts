import type { Redis } from 'ioredis';
import { Decimal } from 'decimal.js';
import { toUnits, unitsToMoney, type Units } from '../shared/money.js';
import type { WalletFigures } from './wallets.repository.js';

/*
 * The Lua scripts of the shared wallets (shared-wallets.ts) and the layout of what they keep in Redis.
 * Each script runs atomically in Redis: that is what makes an admission exact across processes.
 */

/**
 * Money in Redis is kept as whole units of 1e-10 USD (the ledger's precision), so HINCRBY is exact;
 * Lua compares them as doubles, exact below 2^53 units (about $900,000 per account).
 */
export const unitsText = (amount: Decimal.Value | Units): string => String(toUnits(amount));
export const fromUnits = (value: string | number): Decimal => unitsToMoney(BigInt(value));

/** An account hash unused this long drops out of Redis and is seeded again from PostgreSQL. */
export const IDLE_TTL_MS = 60 * 60_000;

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

export type WalletScripts = {
  walletReserve(account: string, key: string, epoch: string, ...args: string[]): Promise<number[]>;
  walletSettle(account: string, key: string, ...args: string[]): Promise<number>;
  walletView(account: string, key: string, epoch: string, ...args: string[]): Promise<string[] | number[]>;
  walletSeedAccount(account: string, ...args: string[]): Promise<number>;
  walletSeedKey(key: string, ...args: string[]): Promise<number>;
  walletUpdate(account: string, ...args: string[]): Promise<number>;
  walletRenew(...keysAndArgs: (string | number)[]): Promise<number>;
  walletJoinEpoch(epoch: string, id: string, windowMs: string): Promise<string>;
};

/** Makes the scripts commands of this connection (ioredis runs each by its SHA, sending its text when Redis lacks it). */
export function defineWalletScripts(redis: Redis): WalletScripts {
  redis.defineCommand('walletReserve', { numberOfKeys: 3, lua: RESERVE });
  redis.defineCommand('walletSettle', { numberOfKeys: 2, lua: SETTLE });
  redis.defineCommand('walletView', { numberOfKeys: 3, lua: VIEW });
  redis.defineCommand('walletJoinEpoch', { numberOfKeys: 1, lua: JOIN_EPOCH });
  redis.defineCommand('walletSeedAccount', { numberOfKeys: 1, lua: SEED_ACCOUNT });
  redis.defineCommand('walletSeedKey', { numberOfKeys: 1, lua: SEED_KEY });
  redis.defineCommand('walletUpdate', { numberOfKeys: 1, lua: UPDATE_ACCOUNT });
  redis.defineCommand('walletRenew', { lua: RENEW_HOLDS });
  return redis as unknown as WalletScripts;
}

/** An account hash's fields as SEED_ACCOUNT writes them: its figures, then one `h:<id>` per durable hold. */
export function accountSeedFields(figures: WalletFigures): string[] {
  const holdFields = figures.durableHolds.flatMap((h) => [`h:${h.id}`, `${unitsText(h.amount)}|${h.keyId ?? ''}|${h.expiresAt}`]);
  return ['b', unitsText(figures.balance), 'c', unitsText(figures.creditLimit), 'p', String(figures.partnerUntil ?? 0), ...holdFields];
}
