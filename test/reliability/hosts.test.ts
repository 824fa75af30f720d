import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Decimal } from 'decimal.js';
import { afterAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { SetTrustedPartnerDocument } from '../graphql/generated.js';
import { graphql } from '../helpers/clients.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createHostNetwork, startGatewayHosts, stopGatewayHosts, type GatewayHost, type HostNetwork } from '../helpers/hosts.js';
import { apiAccount, fund, processAdmin, requestId, setAccountLimits, setKeyLimits } from '../helpers/inference.js';
import { startOwnRedis } from '../helpers/redis-server.js';
import { eventsByRequest, leaks, METRICS_TOKEN, rawCall, sleep, waitFor } from '../helpers/reliability.js';
import type { TcpForwarder } from '../helpers/tcp-forwarder.js';
import { checkInvariants, loadBody, runLoad, type Invariants, type Outcome, type Payer } from './hosts-load.js';

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
const REDIS_KINDS: { kind: string; start(): Promise<RedisUnderTest> }[] = [{ kind: 'single', start: startOwnRedis }];

const HOSTS = 3;
const CLIENTS = 24;
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
async function startHostsStack(startRedis: () => Promise<RedisUnderTest>): Promise<HostsStack> {
  const closers: (() => Promise<unknown>)[] = [];
  const closeAll = async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  };
  try {
    const network = await createHostNetwork(HOSTS);
    closers.push(() => network.close());
    const redis = await startRedis();
    closers.push(() => redis.close());
    const db = await createTestDatabase();
    closers.push(() => db.drop());
    const credential = `sk-hosts-${randomBytes(8).toString('hex')}`;
    const simulator = await startSimulator({ apiKey: credential, name: 'hosts', retainRecords: false });
    closers.push(() => simulator.close());
    const upstream = await network.forward({ port: Number(new URL(simulator.url).port) });
    closers.push(() => upstream.close());
    const dir = await mkdtemp(path.join(tmpdir(), 'baikal-hosts-'));
    closers.push(() => rm(dir, { recursive: true, force: true }));
    const config = { upstreams: [{ id: 'sim', kind: 'openai-compatible', baseUrl: `http://${upstream.address}/v1`, credentialEnv: 'HOSTS_UPSTREAM_KEY', routes: [{ group: 'cheap', models: ['gen-5.6-luna'] }] }] };
    await writeFile(path.join(dir, 'baikal.json'), JSON.stringify(config));
    const env = { NODE_ENV: 'test', LOG_LEVEL: 'info', BAIKAL_CONFIG: path.join(dir, 'baikal.json'), HOSTS_UPSTREAM_KEY: credential, DATA_DIR: dir, WORKERS: '1', SLOT_LEASE_SECONDS: '2', STATUS_PROBE_SECONDS: '0', METRICS_TOKEN };
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
/** How long before a fault a pulse lands: the payer's clients are spending its last units when the fault hits. */
const PULSE_LEAD_MS = 500;

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
    payers.push({ label: plan.label, userId: account.userId, key: account.key, keyId: account.keyId, credit: new Decimal(plan.credit ? units(plan.credit) : 0), cap: plan.cap ? new Decimal(units(plan.cap)) : null });
  }
  const [pulsedBalance, pulsedCap] = payers.slice(5, 7) as [Payer, Payer];
  const pulse = async () => {
    pulsedCap.cap = pulsedCap.cap!.plus(units(PULSE_UNITS));
    await Promise.all([fund(front, admin, pulsedBalance.userId, units(PULSE_UNITS)), setKeyLimits(front, admin, pulsedCap.keyId, { monthlySpendCap: pulsedCap.cap.toFixed(10) })]);
  };
  return { payers, unit, pulse };
}

/** The faults on their schedule (each step at its time, none waiting for another), each logged with when it was done. */
interface Fault {
  /** Milliseconds since the load started, when the step was done. */
  at: number;
  what: string;
}

async function injectFaults(stack: HostsStack, pulse: () => Promise<void>, started: number, log: Fault[]): Promise<void> {
  const [, cut, killed] = stack.hosts as [GatewayHost, GatewayHost, GatewayHost];
  const steps: [number, string, () => Promise<unknown>][] = [
    [KILL_AT, 'host 3 SIGKILLed', () => killed.kill()],
    [RESTART_KILLED_AT, 'host 3 started again (ready)', () => killed.start()],
    [CUT_AT, 'host 2 cut from Redis (blackhole)', async () => cut.redis!.cut('blackhole')],
    [CUT_AT + CUT_MS, 'host 2 back on Redis', async () => cut.redis!.restore()],
    [REDIS_RESTART_AT, 'Redis restarted empty', () => stack.redis.restartEmpty()],
    // Spending at the edge when each fault lands; one in the middle of the cut too (the other hosts admit alone).
    ...[KILL_AT, CUT_AT, CUT_AT + CUT_MS / 2, REDIS_RESTART_AT].map((at): [number, string, () => Promise<unknown>] => [at - PULSE_LEAD_MS, `pulse: +${PULSE_UNITS} units of balance and of key cap`, pulse]),
  ];
  await Promise.all(
    steps.map(async ([at, what, step]) => {
      await sleep(Math.max(0, started + at - Date.now()));
      await step();
      log.push({ at: Date.now() - started, what });
    }),
  );
  log.sort((a, b) => a.at - b.at);
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * For each payer that passed its limit: its answered requests in flight when each fault landed (sent before,
 * answered after), by host. Spending that passed a limit comes from requests admitted before a fault and
 * settled after it.
 */
function evidence(payers: Payer[], outcomes: Outcome[], faults: Fault[], found: Invariants): string[] {
  const broken = payers.map((p, i) => [p, i] as const).filter(([p]) => [...found.belowCredit, ...found.pastCap].some((line) => line.startsWith(`${p.label}:`)));
  return broken.flatMap(([payer, i]) =>
    faults
      .filter((fault) => !fault.what.startsWith('pulse'))
      .map((fault) => {
        const inFlight = outcomes.filter((o) => o.payer === i && o.answered && o.sentAt < fault.at && o.at > fault.at);
        const byHost = [1, 2, 3].map((h) => `${inFlight.filter((o) => o.host === h - 1).length} on host ${h}`).join(', ');
        const last = outcomes.filter((o) => o.payer === i && o.answered).reduce((max, o) => Math.max(max, o.at), 0);
        return `payer "${payer.label}" (last answer at ${seconds(last)}): answered requests in flight at "${fault.what}" (${seconds(fault.at)}): ${byHost}`;
      }),
  );
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
    ...faults.map((fault, i): [string, string] => [`fault ${i + 1}`, `${seconds(fault.at)}: ${fault.what}`]),
    ['hosts exit codes after drain (SIGTERM)', exits.join(' / ')],
    ['every balance >= -credit line', verdict(found.belowCredit)],
    ['no key past its monthly cap', verdict(found.pastCap)],
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
    const { payers, unit, pulse } = await seedPayers(stack);
    const received: string[] = [];
    const faults: Fault[] = [];
    const started = Date.now();
    const [outcomes] = await Promise.all([runLoad(stack.hosts, payers, CLIENTS, () => Date.now() - started > LOAD_MS, received), injectFaults(stack, pulse, started, faults)]);
    // Drained: every host stops with SIGTERM, finishing its requests and writing its usage.
    const exits = await Promise.all(stack.hosts.map((host) => host.stop()));
    const found = await checkInvariants(stack.db, payers, outcomes);
    const why = evidence(payers, outcomes, faults, found);
    console.info(`[reliability] several hosts, ${kind} Redis (one request costs ${unit.toFixed(10)} USD):\n${table(stack, outcomes, faults, found, exits)}${why.map((line) => `\n${line}`).join('')}`);

    expect(outcomes.filter((o) => o.answered).length).toBeGreaterThan(0);
    // Every refusal is ours and clean (402 money, 429 limits, 503 retry later), never a 500 or a 401.
    expect(outcomes.filter((o) => o.status !== 0 && o.status !== 200 && ![402, 429, 503].includes(o.status)).map((o) => `${o.status} ${o.code}`)).toEqual([]);
    expect(exits).toEqual(stack.hosts.map(() => 0));
    expect(found.belowCredit).toEqual([]);
    expect(found.pastCap).toEqual([]);
    expect(found.answeredNotBilledOnce).toEqual([]);
    expect(found.refusedBilled).toEqual([]);
    expect(found.money).toMatchObject({ balanceMismatches: [], settlementMismatches: [], duplicateRequests: [], expiredActiveHolds: 0 });
    expect(leaks(received, [stack.credential, stack.upstream.address])).toEqual([]);
  }, 180_000);
});
