import type { RedisClient } from '../shared/redis.js';
import { Decimal } from 'decimal.js';
import { toUnits, unitsToMoney, type Units } from '../shared/money.js';
import type { WalletFigures } from './wallets.repository.js';
import { COMMON } from './shared-wallet-lua.js';

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

/** What an admission is: a request (money and a slot), a durable hold (money only) or a slot only (no money). */
export type AdmitKind = 'r' | 'd' | 's';

/**
 * One admission in one call: the account's money (balance with its credit line against the holds, the key's
 * month spend against its cap; for an organization's key also its member's month spend across their keys, and
 * the organization's own month spend, each against its cap), then the limits (the account's and the key's concurrency, the key's rate
 * window), then the hold, which is also the request's concurrency slot. A refusal changes nothing. The usual
 * admission makes five commands (TIME, HMGET, ZCOUNT, ZADD, HSET; two more with the gateway's slots): the window is trimmed and the expiries of the
 * hash and the window pushed back only every so often (the hash remembers when: x for itself, kx:<key> for the
 * key's window), and the epoch is checked where an account is seeded (after Redis lost its data every account
 * must be seeded again, so no admission passes a new epoch's re-assertion window).
 * KEYS: account, window[, the gateway's slots: on one Redis the global limit is one set of every process's
 * slots; on a cluster no key can sit beside every account's, and each process keeps a share of the limit].
 * ARGV: 1 hold id, 2 amount, 3 key id ('' none), 4 cap ('' none), 5 ttl ms, 6 month, 7 idle ttl, 8 kind,
 * 9 window ms, 10 rpm, 11 per key, 12 per account, 13 global, 14 member ('' none), 15 member's cap ('' none),
 * 16 the account's own monthly cap ('' none). A member's holds are summed (mh:<member>) whether capped or not,
 * so a cap set later counts what is in flight; the months' spends (mm:/ms:<member>, am/as) only where capped.
 * Returns {0, requests in the window with this one} admitted (0 for a durable hold or one held already),
 * {1} insufficient balance, {2} key's spend cap, {3} member's cap, {4} the account's cap, {-1} account not
 * seeded, {-2} a capped month not seeded; or a limit's
 * refusal with the window as it stands, {code, requests in the window, ms until it is empty[, ms until a place
 * frees]}: 11 gateway capacity, 12 key concurrency, 13 key rate (with the last figure), 14 account concurrency.
 */
const ADMIT = `${COMMON}
local account, window, global, id, keyId, kind, member = KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[3], ARGV[8], ARGV[14]
local memberCap, ownerCap = ARGV[15], ARGV[16]
local now = now_ms()
local f
local function read()
  f = redis.call('HMGET', account, 's', 'b', 'c', 'p', 'H', 'N', 'kh:' .. keyId, 'kn:' .. keyId, 'km:' .. keyId, 'ks:' .. keyId, 'h:' .. id, 'x', 'kx:' .. keyId, 'rs',
    'mh:' .. member, 'mm:' .. member, 'ms:' .. member, 'am', 'as')
end
read()
if f[11] then return {0, 0} end
if f[14] and now > tonumber(f[14]) then
  -- Holds lapsed a while ago (see drop_expired): the figures are seeded again from PostgreSQL.
  redis.call('HDEL', account, 's', 'rs')
  f[1] = nil
end
if kind ~= 's' then
  if f[1] ~= '1' then return {-1} end
  if keyId ~= '' and f[9] ~= ARGV[6] then return {-2} end
  if memberCap ~= '' and f[16] ~= ARGV[6] then return {-2} end
  if ownerCap ~= '' and f[18] ~= ARGV[6] then return {-2} end
end
local amount = tonumber(ARGV[2])
local function num(i) return tonumber(f[i] or '0') end
-- What the account's sums refuse, if anything: money first, then its and the key's concurrency.
local function refusal()
  if kind ~= 's' then
    local credit = 0
    if num(4) > now then credit = num(3) end
    if amount > num(2) + credit - num(5) then return 1 end
    if ARGV[4] ~= '' and num(10) + num(7) + amount > tonumber(ARGV[4]) then return 2 end
    if memberCap ~= '' and num(17) + num(15) + amount > tonumber(memberCap) then return 3 end
    if ownerCap ~= '' and num(19) + num(5) + amount > tonumber(ownerCap) then return 4 end
  end
  if kind ~= 'd' then
    if num(6) >= tonumber(ARGV[12]) then return 14 end
    if num(8) >= tonumber(ARGV[11]) then return 12 end
  end
  return nil
end
local refused = refusal()
if refused then
  drop_expired(account, now)
  read()
  refused = refusal()
end
if refused and refused < 10 then return {refused} end
local counted, sums = 0, {}
if kind ~= 'd' then
  local windowMs, rpm = tonumber(ARGV[9]), tonumber(ARGV[10])
  local n = redis.call('ZCOUNT', window, now - windowMs + 1, '+inf')
  local function refuse(code, extra)
    local newest = redis.call('ZRANGE', window, -1, -1, 'WITHSCORES')
    local reset = 0
    if newest[2] then reset = math.max(0, tonumber(newest[2]) + windowMs - now) end
    return {code, n, reset, extra}
  end
  if global and redis.call('ZCARD', global) >= tonumber(ARGV[13]) then
    redis.call('ZREMRANGEBYSCORE', global, '-inf', now)
    if redis.call('ZCARD', global) >= tonumber(ARGV[13]) then return refuse(11) end
  end
  if refused then return refuse(refused) end
  if n >= rpm then
    redis.call('ZREMRANGEBYSCORE', window, '-inf', now - windowMs)
    local oldest = redis.call('ZRANGE', window, n - rpm, n - rpm, 'WITHSCORES')
    return refuse(13, tonumber(oldest[2]) + windowMs - now)
  end
  redis.call('ZADD', window, now, id)
  if now - num(13) > windowMs / 2 then
    redis.call('ZREMRANGEBYSCORE', window, '-inf', now - windowMs)
    redis.call('PEXPIRE', window, windowMs * 2)
    sums = {'kx:' .. keyId, now}
  end
  if global then redis.call('ZADD', global, now + tonumber(ARGV[5]), id) end
  counted = n + 1
end
local slot = 'r'
if kind == 'd' then slot = 'd' end
local function set(name, value) table.insert(sums, name) table.insert(sums, value) end
set('h:' .. id, ARGV[2] .. '|' .. keyId .. '|' .. slot .. '|' .. (now + tonumber(ARGV[5])) .. '|' .. member)
set('H', units(num(5) + amount))
if keyId ~= '' then set('kh:' .. keyId, units(num(7) + amount)) end
if member ~= '' then set('mh:' .. member, units(num(15) + amount)) end
if slot == 'r' then
  set('N', num(6) + 1)
  if keyId ~= '' then set('kn:' .. keyId, num(8) + 1) end
end
local idle = tonumber(ARGV[7])
if now - num(12) > idle / 4 then
  set('x', now)
  redis.call('PEXPIRE', account, idle)
end
redis.call('HSET', account, unpack(sums))
return {0, counted}
`;

/**
 * Settles (or releases, at cost 0) a hold in one call (HMGET, HDEL, HSET, and ZREM of the gateway's slot), which
 * also frees its concurrency slot; the cost is booked where the account and the key's month are cached (settled
 * after its hold expired, too), and for a member's hold (the member is read from the hold itself, so any process
 * may settle it) where the member's month and the account's own month are. KEYS: account[, the gateway's slots].
 * ARGV: hold id, cost units, month, key id.
 */
const SETTLE = `${COMMON}
local account, id, cost, keyId = KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[4]
local f = redis.call('HMGET', account, 'h:' .. id, 'H', 'N', 'kh:' .. keyId, 'kn:' .. keyId, 's', 'b', 'km:' .. keyId, 'ks:' .. keyId, 'l:' .. id, 'am', 'as')
if not f[1] and f[10] then
  -- Its hold lapsed and was charged in full (drop_expired): what it really cost replaces that charge.
  local charged, _, member = string.match(f[10], '^([^|]*)|?([^|]*)|?([^|]*)$')
  charged = tonumber(charged)
  redis.call('HDEL', account, 'l:' .. id)
  if f[6] == '1' then redis.call('HINCRBY', account, 'b', units(charged - cost)) end
  if keyId ~= '' and f[9] then redis.call('HINCRBY', account, 'ks:' .. keyId, units(cost - charged)) end
  if f[12] then redis.call('HINCRBY', account, 'as', units(cost - charged)) end
  if member ~= '' and redis.call('HEXISTS', account, 'ms:' .. member) == 1 then redis.call('HINCRBY', account, 'ms:' .. member, units(cost - charged)) end
  return 1
end
local function num(i) return tonumber(f[i] or '0') end
local sums = {}
local function set(name, value) table.insert(sums, name) table.insert(sums, value) end
if f[1] then
  local amount, _, kind, _, member = parse_hold(f[1])
  amount = tonumber(amount)
  set('H', units(num(2) - amount))
  if keyId ~= '' then set('kh:' .. keyId, units(num(4) - amount)) end
  if member ~= '' then
    local m = redis.call('HMGET', account, 'mh:' .. member, 'mm:' .. member, 'ms:' .. member)
    set('mh:' .. member, units(tonumber(m[1] or '0') - amount))
    if cost ~= 0 and m[2] == ARGV[3] then set('ms:' .. member, units(tonumber(m[3] or '0') + cost)) end
  end
  if kind == 'r' then
    set('N', num(3) - 1)
    if keyId ~= '' then set('kn:' .. keyId, num(5) - 1) end
  end
  redis.call('HDEL', account, 'h:' .. id)
end
if cost ~= 0 then
  if f[6] == '1' then set('b', units(num(7) - cost)) end
  if keyId ~= '' and f[8] == ARGV[3] then set('ks:' .. keyId, units(num(9) + cost)) end
  if f[11] == ARGV[3] then set('as', units(num(12) + cost)) end
end
if #sums > 0 then redis.call('HSET', account, unpack(sums)) end
if KEYS[2] then redis.call('ZREM', KEYS[2], id) end
return 1
`;

/** KEYS: account, epoch. ARGV: key id, month, epoch. Returns {b, c, held, keyHeld, spent} in units, or {-1}..{-4} as ADMIT. */
const VIEW = `${COMMON}
local now = now_ms()
local problem = epoch_problem(KEYS[2], ARGV[3], now)
if problem then return problem end
drop_expired(KEYS[1], now)
local keyId = ARGV[1]
local f = redis.call('HMGET', KEYS[1], 's', 'b', 'c', 'p', 'H', 'kh:' .. keyId, 'km:' .. keyId, 'ks:' .. keyId)
if f[1] ~= '1' then return {-1} end
if keyId ~= '' and f[7] ~= ARGV[2] then return {-2} end
local credit = 0
if tonumber(f[4] or '0') > now then credit = tonumber(f[3] or '0') end
local spent = 0
if keyId ~= '' then spent = tonumber(f[8]) end
return {f[2], units(credit), f[5] or '0', f[6] or '0', units(spent)}
`;

/**
 * KEYS: account, epoch. ARGV: idle ttl, the epoch this process joined, the figures' field/value count,
 * field/value pairs, then per durable hold its id, amount, key id, expiry and member ('' none). Seeds only an account not seeded
 * yet (marked by s = 1), keeping any hold another process re-asserted into it meanwhile, and only in the current
 * epoch past its re-assertion window: returns {1} seeded, {0} seeded already, or {-3} / {-4, ms} as VIEW.
 */
const SEED_ACCOUNT = `${COMMON}
if redis.call('HGET', KEYS[1], 's') == '1' then return {0} end
local problem = epoch_problem(KEYS[2], ARGV[2], now_ms())
if problem then return problem end
local figures = tonumber(ARGV[3])
-- Charges of lapsed holds (drop_expired) are PostgreSQL's to tell now, the months' spends too (seeded again at their next use).
local fields, lapsed = redis.call('HKEYS', KEYS[1]), {'rs', 'am'}
for _, name in ipairs(fields) do
  local prefix = string.sub(name, 1, 3)
  if string.sub(name, 1, 2) == 'l:' or prefix == 'km:' or prefix == 'mm:' then table.insert(lapsed, name) end
end
redis.call('HDEL', KEYS[1], unpack(lapsed))
redis.call('HSET', KEYS[1], unpack(ARGV, 4, 3 + figures))
for i = 4 + figures, #ARGV, 5 do put_hold(KEYS[1], ARGV[i], ARGV[i + 1], ARGV[i + 2], 'd', ARGV[i + 3], ARGV[i + 4]) end
redis.call('HSET', KEYS[1], 's', '1')
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return {1}
`;

/**
 * KEYS: account. ARGV: idle ttl, month, then per spend its month field, spend field and spent units (a key's
 * km:/ks:<key>, a member's mm:/ms:<member>, the account's own am/as). Seeds each absent or of another month.
 */
const SEED_MONTHS = `
for i = 3, #ARGV, 3 do
  if redis.call('HGET', KEYS[1], ARGV[i]) ~= ARGV[2] then redis.call('HSET', KEYS[1], ARGV[i], ARGV[2], ARGV[i + 1], ARGV[i + 2]) end
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
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
 * KEYS: the epoch[, the gateway's slots], then the account of each hold. ARGV: lease ms, idle ttl, epoch, 1 when
 * the gateway's slots are given, then per hold its id, amount, key id, kind and member ('' none). Moves each hold's lease (and its
 * gateway slot's), and puts back a hold its account lost (an evicted or lost hash): a process that died stops
 * renewing, and only its holds drop out. Returns -3 when the epoch changed (Redis lost
 * its data: the process rejoins, re-asserting every hold), else the number of holds.
 */
const RENEW = `${COMMON}
local current = redis.call('GET', KEYS[1])
if not current or current ~= ARGV[3] then return -3 end
local expiry = now_ms() + tonumber(ARGV[1])
local global, first = nil, 2
if ARGV[4] == '1' then global, first = KEYS[2], 3 end
for i = first, #KEYS do
  local base = 5 + 5 * (i - first)
  put_hold(KEYS[i], ARGV[base], ARGV[base + 1], ARGV[base + 2], ARGV[base + 3], expiry, ARGV[base + 4])
  redis.call('PEXPIRE', KEYS[i], ARGV[2])
  if global and ARGV[base + 3] == 'r' then redis.call('ZADD', global, expiry, ARGV[base]) end
end
return #KEYS - first + 1
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

/** KEYS: window. ARGV: window ms. Returns {requests in the window, ms until it is empty}; counts nothing. */
const PEEK = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if not newest[2] then return {0, 0} end
return {redis.call('ZCARD', KEYS[1]), math.max(0, tonumber(newest[2]) + window - now)}
`;

type Keys = (string | number)[];

export type WalletScripts = {
  walletAdmit(numberOfKeys: number, ...keysAndArgs: Keys): Promise<number[]>;
  walletSettle(numberOfKeys: number, ...keysAndArgs: Keys): Promise<number>;
  walletView(account: string, epoch: string, ...args: string[]): Promise<string[] | number[]>;
  walletSeedAccount(account: string, epoch: string, ...args: string[]): Promise<number[]>;
  walletSeedMonths(account: string, ...args: string[]): Promise<number>;
  walletUpdate(account: string, ...args: string[]): Promise<number>;
  walletRenew(numberOfKeys: number, ...keysAndArgs: Keys): Promise<number>;
  walletJoinEpoch(epoch: string, id: string, windowMs: string): Promise<string>;
  walletPeek(window: string, windowMs: number): Promise<number[]>;
};

/** Makes the scripts commands of this connection (ioredis runs each by its SHA, sending its text when Redis lacks it). */
export function defineWalletScripts(redis: RedisClient): WalletScripts {
  if ('walletAdmit' in redis) return redis as unknown as WalletScripts;
  redis.defineCommand('walletAdmit', { lua: ADMIT });
  redis.defineCommand('walletSettle', { lua: SETTLE });
  redis.defineCommand('walletView', { numberOfKeys: 2, lua: VIEW });
  redis.defineCommand('walletJoinEpoch', { numberOfKeys: 1, lua: JOIN_EPOCH });
  redis.defineCommand('walletSeedAccount', { numberOfKeys: 2, lua: SEED_ACCOUNT });
  redis.defineCommand('walletSeedMonths', { numberOfKeys: 1, lua: SEED_MONTHS });
  redis.defineCommand('walletUpdate', { numberOfKeys: 1, lua: UPDATE_ACCOUNT });
  redis.defineCommand('walletRenew', { lua: RENEW });
  redis.defineCommand('walletPeek', { numberOfKeys: 1, lua: PEEK });
  return redis as unknown as WalletScripts;
}

/** SEED_ACCOUNT's arguments after the idle ttl: the figures as field/value pairs (counted), then each durable hold. */
export function accountSeedArgs(figures: WalletFigures): string[] {
  const fields = ['b', unitsText(figures.balance), 'c', unitsText(figures.creditLimit), 'p', String(figures.partnerUntil ?? 0)];
  const holds = figures.durableHolds.flatMap((h) => [h.id, unitsText(h.amount), h.keyId ?? '', String(h.expiresAt), h.memberId ?? '']);
  return [String(fields.length), ...fields, ...holds];
}
