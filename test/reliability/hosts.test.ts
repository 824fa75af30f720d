import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Decimal } from 'decimal.js';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { SetTrustedPartnerDocument } from '../graphql/generated.js';
import { graphql } from '../helpers/clients.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createHostNetwork, startGatewayHosts, stopGatewayHosts, type GatewayHost, type HostNetwork } from '../helpers/hosts.js';
import { apiAccount, fund, processAdmin, requestId, setAccountLimits, setKeyLimits } from '../helpers/inference.js';
import { startOwnRedis } from '../helpers/redis-server.js';
import { startRedisCluster } from '../helpers/redis-cluster.js';
import { eventsByRequest, leaks, METRICS_TOKEN, rawCall, sleep, waitFor } from '../helpers/reliability.js';
import type { TcpForwarder } from '../helpers/tcp-forwarder.js';
import { checkInvariants, loadBody, runLoad, type InFlight, type Invariants, type Outcome, type Payer } from './hosts-load.js';

/**
 * Issue 55, item 5: several hosts, proven. Three gateway hosts, each in a network namespace of its own
 * (test/helpers/hosts.ts), on one PostgreSQL and one Redis the test owns, with load spread over them. During
 * the load: one host is SIGKILLed (and started again), another is cut from Redis for 10 s, and Redis is
 * restarted empty. Afterwards, every host drained: every account's balance is at least minus its credit line,
 * no key spent past its cap, every answered request is billed exactly once (the tokens it was told), refused
 * requests are billed nothing, and the ledger equals the balances.
 *
 * The Redis kinds are a list so the same scenario runs against a Redis Cluster too: a kind starts a Redis and
 * gives its URL and a way to restart it empty.
 */
interface RedisUnderTest {
  url: string;
  restartEmpty(): Promise<void>;
  close(): Promise<void>;
}
const REDIS_KINDS: { kind: string; start(network: HostNetwork): Promise<RedisUnderTest> }[] = [
  { kind: 'single', start: () => startOwnRedis() },
  { kind: 'cluster (3 masters, 3 replicas)', start: startClusterForHosts },
];

/**
 * A Redis Cluster the hosts reach directly on the network's second address (its nodes announce it; no forwarder can
 * stand in for a cluster), so a host is cut from it by a blackhole route in its namespace.
 */
async function startClusterForHosts(network: HostNetwork): Promise<RedisUnderTest> {
  if (!network.directAddress) throw new Error(`the cluster kind needs network namespaces (${network.fallbackReason ?? 'none made'}): one host is cut from the cluster by a route in its own namespace`);
  const cluster = await startRedisCluster({ announce: network.directAddress, requireFullCoverage: false, nodeTimeoutMs: 5_000 });
  return {
    url: cluster.url,
    restartEmpty: async () => {
      await cluster.killAll();
      await cluster.restartAll();
    },
    close: () => cluster.stop(),
  };
}

const HOSTS = 3;
/** The two pulsed payers: their places in `seedPayers`' plans. */
const PULSED = [5, 6];
/**
 * Clients: most spend for the payers that run out on their own; a group of their own keeps the two pulsed payers
 * busy on every host (about three requests of each in flight per host), so a fault lands on several of their
 * requests at once: more than one request's worth of slack between a hold and its cost.
 */
const GROUPS = [
  { clients: 18, payers: [0, 1, 2, 3, 4, 7] },
  { clients: 18, payers: PULSED, slow: true },
];
/** The faults, in ms from the start of the load. */
const KILL_AT = 6_000;
const RESTART_KILLED_AT = 9_000;
const CUT_AT = 13_000;
const CUT_MS = 10_000;
const REDIS_RESTART_AT = 28_000;
const LOAD_MS = 36_000;

interface HostsStack {
  network: HostNetwork;
  hosts: GatewayHost[];
  db: TestDatabase;
  redis: RedisUnderTest;
  simulator: Simulator;
  upstream: TcpForwarder;
  credential: string;
  close(): Promise<void>;
}

/** The simulator behind one forwarder every host reaches, the operator file naming it, a database, then the hosts. */
async function startHostsStack(startRedis: (network: HostNetwork) => Promise<RedisUnderTest>): Promise<HostsStack> {
  const closers: (() => Promise<unknown>)[] = [];
  const closeAll = async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  };
  try {
    const network = await createHostNetwork(HOSTS);
    closers.push(() => network.close());
    const redis = await startRedis(network);
    closers.push(() => redis.close());
    const db = await createTestDatabase();
    closers.push(() => db.drop());
    const credential = `sk-hosts-${randomBytes(8).toString('hex')}`;
    // Its records say which requests are at the upstream now (admitted, their holds taken): the faults wait for them.
    const simulator = await startSimulator({ apiKey: credential, name: 'hosts' });
    closers.push(() => simulator.close());
    const upstream = await network.forward({ port: Number(new URL(simulator.url).port) });
    closers.push(() => upstream.close());
    const dir = await mkdtemp(path.join(tmpdir(), 'baikal-hosts-'));
    closers.push(() => rm(dir, { recursive: true, force: true }));
    const config = { upstreams: [{ id: 'sim', kind: 'openai-compatible', baseUrl: `http://${upstream.address}/v1`, credentialEnv: 'HOSTS_UPSTREAM_KEY', routes: [{ group: 'cheap', models: ['gen-5.6-luna'] }] }] };
    await writeFile(path.join(dir, 'baikal.json'), JSON.stringify(config));
    // At warn: the harness waits for /ready, and the logs keep what went wrong (a settlement Redis missed), not every
    // request. A lease of 2 s (as the other Redis tests): a SIGKILLed host's slots and holds free soon, and the cut
    // (10 s) outlasts it, as a cut longer than the default 15 s would.
    const env = { NODE_ENV: 'test', LOG_LEVEL: 'warn', BAIKAL_CONFIG: path.join(dir, 'baikal.json'), HOSTS_UPSTREAM_KEY: credential, DATA_DIR: dir, WORKERS: '1', SLOT_LEASE_SECONDS: '2', STATUS_PROBE_SECONDS: '0', METRICS_TOKEN };
    const hosts = await startGatewayHosts(network, { env, databaseUrl: db.url, redisUrl: redis.url });
    closers.push(() => stopGatewayHosts(hosts));
    return { network, hosts, db, redis, simulator, upstream, credential, close: closeAll };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** What a pulse gives a pulsed payer: a few requests' worth, spent while the fault lands. */
const PULSE_UNITS = 12;

interface Seeded {
  payers: Payer[];
  /** What one request of the load costs. */
  unit: Decimal;
  /** Tops up the pulsed payers (one balance, one key cap) by PULSE_UNITS each. */
  pulse(): Promise<void>;
}

/**
 * Payers sized in units of one request's cost (probed): some run out on their own as the load goes on; two
 * are pulsed (a balance with nothing left, a key at its cap) just before each fault, so each fault hits while
 * money is being spent at the edge, on every host, whatever this machine's speed.
 */
async function seedPayers(stack: HostsStack): Promise<Seeded> {
  const front = { url: stack.hosts[0]!.url, db: stack.db };
  const admin = await processAdmin(front);
  const probe = await apiAccount(front, admin, '1');
  const rid = requestId('hosts-probe');
  expect((await rawCall(front.url, probe.key, loadBody(0, false), { requestId: rid })).status).toBe(200);
  const [event] = (await waitFor('the probe billed', async () => (await eventsByRequest(stack.db, [rid])).get(rid)))!;
  const unit = new Decimal(event!.amount_usd);
  expect(unit.greaterThan(0)).toBe(true);
  const units = (n: number) => unit.times(n).toFixed(10);
  const plans = [
    { label: 'balance 100', balance: 100, credit: 0, cap: null },
    { label: 'balance 200', balance: 200, credit: 0, cap: null },
    { label: 'balance 40 + credit 60', balance: 40, credit: 60, cap: null },
    { label: 'credit 150 only', balance: 0, credit: 150, cap: null },
    { label: 'key cap 120', balance: 100_000, credit: 0, cap: 120 },
    { label: `balance pulsed ${PULSE_UNITS} before each fault`, balance: 4, credit: 0, cap: null },
    { label: `key cap pulsed ${PULSE_UNITS} before each fault`, balance: 100_000, credit: 0, cap: 4 },
    { label: 'never runs out', balance: 100_000, credit: 0, cap: null },
  ];
  const payers: Payer[] = [];
  for (const plan of plans) {
    const account = await apiAccount(front, admin, plan.balance ? units(plan.balance) : null);
    await setKeyLimits(front, admin, account.keyId, { rpmLimit: 100_000, concurrencyLimit: 50, monthlySpendCap: plan.cap ? units(plan.cap) : null });
    await setAccountLimits(front, admin, account.userId, { concurrencyLimit: 50 });
    if (plan.credit) {
      const until = new Date(Date.now() + 86_400_000).toISOString();
      const granted = await graphql(front.url, SetTrustedPartnerDocument, { input: { userId: account.userId, validUntil: until, creditLimitUsd: units(plan.credit) } }, admin.token);
      expect(granted.errors).toBeUndefined();
    }
    const cap = plan.cap ? new Decimal(units(plan.cap)) : null;
    payers.push({ label: plan.label, userId: account.userId, key: account.key, keyId: account.keyId, credit: new Decimal(plan.credit ? units(plan.credit) : 0), cap, capHistory: cap ? [{ since: 0, cap }] : [] });
  }
  const [pulsedBalance, pulsedCap] = PULSED.map((i) => payers[i]!) as [Payer, Payer];
  const pulse = async () => {
    pulsedCap.cap = pulsedCap.cap!.plus(units(PULSE_UNITS));
    pulsedCap.capHistory.push({ since: Date.now(), cap: pulsedCap.cap });
    await Promise.all([fund(front, admin, pulsedBalance.userId, units(PULSE_UNITS)), setKeyLimits(front, admin, pulsedCap.keyId, { monthlySpendCap: pulsedCap.cap.toFixed(10) })]);
  };
  return { payers, unit, pulse };
}

interface Fault {
  /** Milliseconds since the load started, when the step was done. */
  at: number;
  what: string;
  /** A fault (set: its short name), not a pulse or a note. */
  fault?: string;
}

/** How long a fault waits, at most, for the pulsed payers to have requests in flight where it lands. */
const EDGE_WAIT_MS = 3_000;
/**
 * How many requests of each pulsed payer a fault waits for, admitted and at the upstream where it lands: more
 * than one request's worth of slack lies between a hold (the worst case) and a cost, so one is not enough to show.
 */
const EDGE_IN_FLIGHT = 2;

/**
 * The faults, three chains on their schedule side by side. Each fault first pulses the pulsed payers and waits
 * (at most EDGE_WAIT_MS) until EDGE_IN_FLIGHT requests of each are admitted where it lands, so it hits money
 * being spent at the edge whatever this machine's speed; each step is logged with when it was done and, for a
 * fault, how many of those requests were in flight.
 */
/**
 * Diagnostic, not an assertion: how far each payer's balance cached in Redis is from PostgreSQL's, read from the
 * shared wallets' hash as src/billing/shared-wallet-scripts.ts lays it out today (`<prefix>{acct:<user id>}`,
 * field `b` in units of 1e-10 USD); "not cached" when there is no such field (that layout changed, or no entry).
 */
async function cacheDrift(stack: HostsStack, payers: Payer[], unit: Decimal): Promise<string> {
  if (stack.redis.url.startsWith('redis-cluster://')) return 'not read on a cluster';
  const redis = new Redis(stack.redis.url);
  try {
    const drifts = await Promise.all(
      payers.map(async (payer) => {
        const cached = await redis.hget(`baikal:{acct:${payer.userId}}`, 'b');
        const [row] = await stack.db.query<{ balance: string }>('select (balance_paid_usd + balance_bonus_usd)::text balance from users where id = $1', [payer.userId]);
        return `"${payer.label}" ${cached === null ? 'not cached' : new Decimal(cached).dividedBy(1e10).minus(row!.balance).dividedBy(unit).toFixed(2)}`;
      }),
    );
    return drifts.join(', ');
  } finally {
    redis.disconnect();
  }
}

async function injectFaults(stack: HostsStack, seeded: Seeded, inFlight: Map<string, InFlight>, started: number, log: Fault[]): Promise<void> {
  const { pulse, payers, unit } = seeded;
  const [, cut, killed] = stack.hosts as [GatewayHost, GatewayHost, GatewayHost];
  const note = (what: string, fault?: string) => log.push({ at: Date.now() - started, what, fault });
  const at = (ms: number) => sleep(Math.max(0, started + ms - Date.now()));
  // Admitted and at the upstream: the simulator has the request and has not answered it yet (records are in arrival order).
  const edge = (host: number | null, payer?: number) => {
    const atUpstream = new Set(stack.simulator.requests.slice(-500).filter((r) => r.endedAt === undefined).map((r) => r.requestId));
    return [...inFlight.entries()].filter(([rid, r]) => (payer === undefined ? PULSED.includes(r.payer) : r.payer === payer) && (host === null || r.host === host) && atUpstream.has(rid)).length;
  };
  const atTheEdge = async (host: number | null) => {
    await pulse();
    note(`pulse: +${PULSE_UNITS} units of balance and of key cap`);
    await waitFor('the pulsed payers in flight', () => PULSED.every((payer) => edge(host, payer) >= EDGE_IN_FLIGHT), EDGE_WAIT_MS, 5).catch(() => undefined);
    return `${PULSED.map((payer) => edge(host, payer)).join(' + ')} of the pulsed payers' requests admitted and at the upstream ${host === null ? 'on all hosts' : `on host ${host + 1}`}`;
  };
  await Promise.all([
    (async () => {
      await at(KILL_AT);
      const edgeNow = await atTheEdge(2);
      await killed.kill();
      note(`host 3 SIGKILLed (${edgeNow})`, 'host 3 SIGKILLed');
      await at(RESTART_KILLED_AT);
      await killed.start();
      note('host 3 started again (ready)');
    })(),
    (async () => {
      await at(CUT_AT);
      const edgeNow = await atTheEdge(1);
      cut.redis!.cut('blackhole');
      note(`host 2 cut from Redis (blackhole; ${edgeNow})`, 'host 2 cut from Redis');
      // Half way, the other hosts admit alone against what Redis has.
      await sleep(CUT_MS / 2);
      note(`mid-cut, Redis's cached balance minus PostgreSQL's, in requests' worth: ${await cacheDrift(stack, payers, unit)}`);
      await pulse();
      note(`pulse: +${PULSE_UNITS} units of balance and of key cap`);
      await sleep(CUT_MS / 2);
      cut.redis!.restore();
      note('host 2 back on Redis');
    })(),
    (async () => {
      await at(REDIS_RESTART_AT);
      const edgeNow = await atTheEdge(null);
      await stack.redis.restartEmpty();
      note(`Redis restarted empty (${edgeNow})`, 'Redis restarted empty');
    })(),
  ]);
  log.sort((a, b) => a.at - b.at);
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * For each payer that passed a limit: its answered requests in flight when each fault landed (sent before,
 * answered after), by host. Spending past a limit comes from requests admitted before a fault and settled
 * after it where the others could not see it.
 */
function evidence(payers: Payer[], outcomes: Outcome[], faults: Fault[], found: Invariants): string[] {
  const broken = payers.map((p, i) => [p, i] as const).filter(([p]) => [...found.belowCredit, ...found.pastCap, ...found.dippedBelowCredit, ...found.passedCapOnTheWay].some((line) => line.startsWith(`${p.label}:`)));
  return broken.map(([payer, i]) => {
    const atEach = faults
      .filter((f) => f.fault)
      .map((f) => {
        const inFlight = outcomes.filter((o) => o.payer === i && o.answered && o.sentAt < f.at && o.at > f.at);
        return `${f.fault} (${seconds(f.at)}): ${[0, 1, 2].map((h) => inFlight.filter((o) => o.host === h).length).join(' / ')}`;
      });
    return `payer "${payer.label}": its answered requests in flight on hosts 1 / 2 / 3 when each fault landed: ${atEach.join('; ')}`;
  });
}

/** The settlements each host could not book in Redis (its log's warnings: its processes, a restarted one's too). */
function missedSettlements(hosts: GatewayHost[]): string {
  return hosts.map((host) => host.processes.flatMap((p) => p.lines).filter((line) => line.includes('shared wallet settlements missed')).length).join(' / ');
}

function table(stack: HostsStack, outcomes: Outcome[], faults: Fault[], found: Invariants, exits: (number | null)[]): string {
  const count = (filter: (o: Outcome) => boolean) => outcomes.filter(filter).length;
  const byCode = new Map<string, number>();
  for (const o of outcomes) if (!o.answered) byCode.set(o.code!, (byCode.get(o.code!) ?? 0) + 1);
  const verdict = (list: string[]) => (list.length ? `FAILED: ${list.length} (${list.slice(0, 3).join('; ')}${list.length > 3 ? '; ...' : ''})` : 'holds');
  const { money } = found;
  const rows: [string, string][] = [
    ['hosts', `${stack.hosts.length}, ${stack.network.mode === 'netns' ? `network namespaces ${stack.hosts.map((h) => `${h.name} ${h.address}`).join(', ')}` : `loopback addresses (${stack.network.fallbackReason})`}`],
    ['requests (per host)', `${outcomes.length} (${stack.hosts.map((_, i) => count((o) => o.host === i)).join(' / ')})`],
    ['answered (JSON / streams)', `${count((o) => o.answered)} (${count((o) => o.answered && !o.stream)} / ${count((o) => o.answered && o.stream)})`],
    ...[...byCode.entries()].sort((a, b) => b[1] - a[1]).map(([code, n]): [string, string] => [`not answered: ${code}`, String(n)]),
    ['unanswered but billed (cut by a fault; may be billed for what was delivered)', String(found.unansweredBilled)],
    ['slowest answer, refusals included (hosts 1 / 2 / 3)', stack.hosts.map((_, i) => seconds(Math.max(0, ...outcomes.filter((o) => o.host === i).map((o) => o.at - o.sentAt)))).join(' / ')],
    ...faults.map((fault, i): [string, string] => [`fault ${i + 1}`, `${seconds(fault.at)}: ${fault.what}`]),
    ['hosts exit codes after drain (SIGTERM)', exits.join(' / ')],
    ['settlements held back while Redis was away, times (hosts 1 / 2 / 3, from their logs; sent again once it was back)', missedSettlements(stack.hosts)],
    ['every balance >= -credit line (at the end)', verdict(found.belowCredit)],
    ['no key past its monthly cap (at the end)', verdict(found.pastCap)],
    ['every balance >= -credit line all along (the ledger replayed)', verdict(found.dippedBelowCredit)],
    ['no key past its cap of the moment all along (the ledger replayed)', verdict(found.passedCapOnTheWay)],
    ['every answered request billed exactly once', verdict(found.answeredNotBilledOnce)],
    ['refused requests billed nothing', verdict(found.refusedBilled)],
    ['ledger = balances', verdict([...money.balanceMismatches, ...money.settlementMismatches])],
    ['no request settled twice', verdict(money.duplicateRequests)],
    ['usage events / billed / ledger debits', `${money.usageEvents} / ${money.billedEvents} / ${money.usageTransactions}`],
    ...found.payers.map((p): [string, string] => [`payer "${p.label}"`, `balance ${p.balance}, credit ${p.credit}, cap ${p.cap}, spent ${p.spent}, answered ${p.answered}, first refused for money at ${p.firstMoneyRefusal}`]),
  ];
  return ['| figure | value |', '|---|---|', ...rows.map(([name, value]) => `| ${name} | ${value} |`)].join('\n');
}

describe.each(REDIS_KINDS)('three gateway hosts on one PostgreSQL and a $kind Redis', ({ kind, start }) => {
  let stack: HostsStack | undefined;

  afterAll(async () => {
    await stack?.close();
  });

  it('a host SIGKILLed, a host cut from Redis for 10 s, Redis restarted empty: no balance below its credit line, no key past its cap, every answer billed once, ledger = balances', async () => {
    stack = await startHostsStack(start);
    const seeded = await seedPayers(stack);
    const { payers, unit } = seeded;
    const received: string[] = [];
    const faults: Fault[] = [];
    const started = Date.now();
    const inFlight = new Map<string, InFlight>();
    const [outcomes] = await Promise.all([runLoad(stack.hosts, payers, GROUPS, () => Date.now() - started > LOAD_MS, received, inFlight), injectFaults(stack, seeded, inFlight, started, faults)]);
    // Drained: every host stops with SIGTERM, finishing its requests and writing its usage.
    const exits = await Promise.all(stack.hosts.map((host) => host.stop()));
    const found = await checkInvariants(stack.db, payers, outcomes, started);
    const why = evidence(payers, outcomes, faults, found);
    console.info(`[reliability] several hosts, ${kind} Redis (one request costs ${unit.toFixed(10)} USD):\n${table(stack, outcomes, faults, found, exits)}${why.map((line) => `\n${line}`).join('')}`);

    expect(outcomes.filter((o) => o.answered).length).toBeGreaterThan(0);
    // Every refusal is ours and clean (402 money, 429 limits, 503 retry later), never a 500 or a 401.
    expect(outcomes.filter((o) => o.status !== 0 && o.status !== 200 && ![402, 429, 503].includes(o.status)).map((o) => `${o.status} ${o.code}`)).toEqual([]);
    expect(exits).toEqual(stack.hosts.map(() => 0));
    expect(found.belowCredit).toEqual([]);
    expect(found.pastCap).toEqual([]);
    expect(found.dippedBelowCredit).toEqual([]);
    expect(found.passedCapOnTheWay).toEqual([]);
    expect(found.answeredNotBilledOnce).toEqual([]);
    expect(found.refusedBilled).toEqual([]);
    expect(found.money).toMatchObject({ balanceMismatches: [], settlementMismatches: [], duplicateRequests: [], expiredActiveHolds: 0 });
    expect(leaks(received, [stack.credential, stack.upstream.address])).toEqual([]);
  }, 180_000);
});
