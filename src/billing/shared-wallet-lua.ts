/*
 * The Lua every wallet script shares (src/billing/shared-wallet-scripts.ts), and the layout of an account in Redis.
 */

/*
 * An account's state in Redis is one hash under its hash tag (`{acct:<id>}`: on a Redis Cluster every script
 * touches one hash slot), beside the rate windows of its keys (`{acct:<id>}:w:<key>`, the admission times of the
 * last window). The hash: b balance, c credit limit, p partner-until ms, s = 1 once seeded from PostgreSQL; the
 * sums over its live holds, H held (units) and N requests in flight; per key kh:<key> held, kn:<key> in flight,
 * km:<key> the month its spend is for and ks:<key> that spend; for an organization (issue 56) per member
 * mh:<member> held, mm:<member> and ms:<member> the month and its spend across the member's keys, and am/as the
 * organization's own month and spend (its held is H); and one field h:<hold id> = "amount|key id|kind|expiry
 * ms|member" per hold, kind r (a request: it is also a concurrency slot) or d (durable: a video task's phase, or a
 * request whose slot is taken elsewhere). A request's hold is on a lease its process renews; a durable one has its
 * own expiry.
 *
 * Redis's work per script is mostly its number of commands (each costs about as much as the command itself), so
 * the usual admission reads the sums in one HMGET and writes them in one HSET, and never looks at the other
 * holds: sums instead of a scan keep it O(1) in the holds an account has (a busy account has dozens; scanning
 * them was most of Redis's work per request). Expired holds (a dead process's) are swept only when the sums
 * would refuse, since they only ever make the sums stricter, and when the balance is viewed.
 */
export const COMMON = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- Amounts go back to Redis as integer strings: a Lua number passed to Redis is formatted with 14 digits.
local function units(x) if x == 0 then return '0' end return string.format('%.0f', x) end
-- amount, key id, kind, expiry, member (the fifth is absent in holds written before organizations).
local function parse_hold(value) return string.match(value, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|?([^|]*)$') end
-- Adds a hold (absent ones only) to the account's sums; present ones get the new expiry.
local function put_hold(account, id, amount, keyId, kind, expiry, member)
  local field, value = 'h:' .. id, amount .. '|' .. keyId .. '|' .. kind .. '|' .. expiry .. '|' .. member
  if redis.call('HSET', account, field, value) == 0 then return end
  redis.call('HINCRBY', account, 'H', amount)
  if keyId ~= '' then redis.call('HINCRBY', account, 'kh:' .. keyId, amount) end
  if member ~= '' then redis.call('HINCRBY', account, 'mh:' .. member, amount) end
  if kind == 'r' then
    redis.call('HINCRBY', account, 'N', 1)
    if keyId ~= '' then redis.call('HINCRBY', account, 'kn:' .. keyId, 1) end
  end
end
-- Takes expired holds off the account's sums (one pass over its fields: only on a refusal, or a view). A request's
-- hold that lapsed (its process stopped renewing: dead, or cut from Redis while PostgreSQL still takes its bills)
-- is charged in full, since what it cost is not known here (l:<id> = "amount|key id" remembers it, for the late
-- settlement that corrects it, and s is dropped after RESEED_AFTER_MS so the account is seeded again from
-- PostgreSQL, which has every bill by then); a durable hold that expired charges nothing.
local RESEED_AFTER_MS = 600000
local function drop_expired(account, now)
  local fields = redis.call('HGETALL', account)
  local sums, gone, lapsed = {}, {}, {}
  local seeded = false
  local function add(name, x) sums[name] = (sums[name] or 0) + x end
  for i = 1, #fields, 2 do
    if fields[i] == 's' then seeded = fields[i + 1] == '1' end
    if string.sub(fields[i], 1, 2) == 'h:' then
      local amount, keyId, kind, expiry, member = parse_hold(fields[i + 1])
      if tonumber(expiry) <= now then
        table.insert(gone, fields[i])
        add('H', -tonumber(amount))
        if keyId ~= '' then add('kh:' .. keyId, -tonumber(amount)) end
        if member ~= '' then add('mh:' .. member, -tonumber(amount)) end
        if kind == 'r' then
          add('N', -1)
          if keyId ~= '' then add('kn:' .. keyId, -1) end
          if amount ~= '0' then
            table.insert(lapsed, 'l:' .. string.sub(fields[i], 3)) table.insert(lapsed, amount .. '|' .. keyId .. '|' .. member)
            add('b', -tonumber(amount))
            if keyId ~= '' then add('ks:' .. keyId, tonumber(amount)) end
            if member ~= '' then add('ms:' .. member, tonumber(amount)) end
            add('as', tonumber(amount))
          end
        end
      end
    end
  end
  if #gone == 0 then return end
  redis.call('HDEL', account, unpack(gone))
  if not seeded then sums['b'] = nil end
  -- A month's spend (key, member, the account's own) moves only where it is seeded: an absent one is seeded from PostgreSQL.
  for name, x in pairs(sums) do
    local prefix = string.sub(name, 1, 3)
    local spend = prefix == 'ks:' or prefix == 'ms:' or name == 'as'
    if not spend or redis.call('HEXISTS', account, name) == 1 then redis.call('HINCRBY', account, name, units(x)) end
  end
  if #lapsed > 0 then
    redis.call('HSET', account, unpack(lapsed))
    if not redis.call('HGET', account, 'rs') then redis.call('HSET', account, 'rs', now + RESEED_AFTER_MS) end
  end
end
-- The wallet epoch this process joined must be the current one, and past its re-assertion window (see
-- shared-wallets.ts). Returns nil when it is.
local function epoch_problem(epochKey, known, now)
  local current = redis.call('GET', epochKey)
  if not current or current ~= known then return {-3} end
  local readyAt = tonumber(string.match(current, '|(%d+)$'))
  if readyAt and now < readyAt then return {-4, readyAt - now} end
  return nil
end
`;
