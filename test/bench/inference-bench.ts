import { dropRedisKeys } from '../helpers/redis.js';
/**
 * `npm run bench`: the gateway against the physical limit, on /v1/chat/completions.
 *
 * Three targets get the same load: the upstream simulator directly, a bare pass-through proxy
 * (bare-proxy.ts: node:http in, undici out) and the built gateway with its whole pipeline (key auth,
 * scope, limits, balance hold, settlement, usage event). The bare proxy and the gateway each run in
 * their own process pinned to one core (BENCH_CORE); this process (load generator and simulator, all
 * its threads) is pinned to the other, and so are the bench database's PostgreSQL backends. Phases are
 * interleaved and repeated (BENCH_ROUNDS); medians across rounds:
 * - saturation (closed loop, BENCH_CONCURRENCY loops): max JSON requests/s and SSE streams/s, and
 *   CPU time per request of the proxy process (from /proc, user + system), with each core's busy
 *   share (on two cores the load generator's core often runs out first);
 * - fixed rates (open loop, requests start on schedule: no coordinated omission; the targets take turns
 *   in slices of BENCH_SLICE_SECONDS): p50/p99 latency
 *   (JSON) and time to first byte (streams), as overhead over direct, and CPU time per request of
 *   each proxy at the same rate;
 * - one client at a time (c=1, back to back, the targets taking turns): added p50/p99 latency and CPU;
 * - beside each gateway phase: PostgreSQL's and Redis's CPU per request (all their processes, from /proc)
 *   and the gateway's event-loop delay p50/p99/max (from its metrics, scraped before and after);
 * - memory: the gateway's RSS after 10,000 and after BENCH_MEMORY_REQUESTS (default 100,000)
 *   requests (JSON, streams and streams aborted after the first byte);
 * - scale-out: the gateway as WORKERS=1 and as WORKERS=2 on Redis, unpinned, saturated in turn;
 * - hosts (opt-in, BENCH_HOSTS=1,2,3): the gateway on that many hosts in network namespaces on Redis, beside the
 *   single-process default, unpinned: throughput, CPU per request and p50/p99 side by side (hosts-phase.ts).
 * Prints a table with the targets and writes JSON (BENCH_OUT, default bench-results.json).
 *
 * Environment: BENCH_SECONDS (per saturation phase, default 4), BENCH_RATE_SECONDS (per fixed-rate phase, 8), BENCH_ROUNDS (3), BENCH_RATES (100,400),
 * BENCH_CONCURRENCY (48: SPEC.md's global concurrency limit, the most the gateway admits at once), BENCH_CORE (1), BENCH_KINDS (json,stream), BENCH_WARM_UP_SECONDS (3, closed loop per target and kind), BENCH_MEMORY_REQUESTS (100000; 0 skips), BENCH_SCALE (1; 0 skips the WORKERS=1 against WORKERS=2 phase), BENCH_SCALE_KINDS (json,stream,large), BENCH_HOSTS (unset: no hosts phase; 1,2,3: those host counts), BENCH_HOSTS_KINDS (json,stream), BENCH_HOSTS_RATE (200), BENCH_SATURATION (1; 0 skips the closed-loop phases), BENCH_REDIS_URL, BENCH_PROFILE (a
 * directory for the gateway's CPU profile), BENCH_SEQUENTIAL_SECONDS (6; 0 skips the one-client phase), BENCH_PINNED (0 skips the one-client phase with PostgreSQL and Redis on the other core), BENCH_GATEWAY_ENV (`NAME=value ...` for the
 * gateways), PG_ADMIN_URL.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';
import { startSimulator } from '../../src/simulator/openai-simulator.js';
import { START_ARGS } from '../helpers/process.js';
import { hostsPhase } from './hosts-phase.js';
import { atRate, closedLoop, once, saturate, sequential, type Target } from './load.js';
import { cpuMs, rssBytes } from './observe.js';
import { addLatencies, inTurns, Recorder } from './recorder.js';
import { report, type Memory } from './report.js';
import {
  ADMIN_URL,
  CONCURRENCY,
  CORE,
  HOSTS,
  KINDS,
  log,
  MEMORY_REQUESTS,
  MODEL,
  NODE,
  RATE_SECONDS,
  RATES,
  REDIS_URL,
  ROOT,
  ROUNDS,
  SATURATION,
  SCALE,
  SCALE_KINDS,
  SECONDS,
  SEQUENTIAL_SECONDS,
  PINNED_SERVICES,
  SLICE_SECONDS,
  WARM_UP_SECONDS,
} from './settings.js';

async function waitFor(check: () => Promise<boolean>, child: ChildProcess, what: string): Promise<void> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} not ready in 60 s`);
}

async function json(url: string, method: string, route: string, payload: unknown, token?: string): Promise<{ body: any; headers: Headers }> {
  const response = await fetch(url + route, { method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(payload) });
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
  return { body: await response.json(), headers: response.headers };
}

const ALL_CORES = `0-${cpus().length - 1}`;

/**
 * Puts every thread of a process on `cores` (`taskset -a`: `-p` alone moves only the named thread, and
 * V8's helper threads, started with the process, would stay free to run on the measured core). False
 * when the process is gone or may not be moved.
 */
function setAffinity(pid: number, cores: string): boolean {
  try {
    execFileSync('taskset', ['-a', '-cp', cores, String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Every process of the machine's PostgreSQL and Redis (the postmaster, its backends and background writers). */
function servicePids(): number[] {
  const pids = (name: string) => {
    try {
      return execFileSync('pgrep', ['-x', name], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  return [...pids('postgres'), ...pids('redis-server')];
}

const pinned = (args: string[]) => spawn('taskset', ['-c', CORE, NODE, ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], env: {} });

/** The bench's own database on the machine's PostgreSQL (dropped at the end), and the admin connection that made it. */
async function benchDatabase(): Promise<{ admin: pg.Client; name: string; url: URL }> {
  const name = `baikal_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { admin, name, url };
}

/** What every gateway the bench starts is given. */
function gatewayEnvironment(port: number, dbUrl: URL, configFile: string, credential: string, dir: string, metricsToken: string): Record<string, string | undefined> {
  return { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', PORT: String(port), DATABASE_URL: dbUrl.toString(), BAIKAL_CONFIG: configFile, BENCH_UPSTREAM_KEY: credential, NODE_ENV: 'production', DATA_DIR: dir, WORKERS: '1', LOG_LEVEL: 'warn', STATUS_PROBE_SECONDS: '0',
    // One bench account drives the whole global limit: its own per-account limit (default 16) must not cut it short.
    ACCOUNT_CONCURRENCY_LIMIT: String(CONCURRENCY),
    // The bench reads the gateway's event-loop delay from its metrics.
    METRICS_TOKEN: metricsToken,
    // BENCH_GATEWAY_ENV='USAGE_FLUSH_MS=20 ...': settings to compare, given to every gateway the bench starts.
    ...Object.fromEntries((process.env.BENCH_GATEWAY_ENV ?? '').split(' ').filter(Boolean).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)])) };
}

/** An account with a large balance, and a maker of its keys with the highest limits a key can have (100,000 requests/minute). */
async function benchAccount(gatewayUrl: string, dbUrl: URL): Promise<(label: string) => Promise<string>> {
  const registered = await json(gatewayUrl, 'POST', '/auth/register', { username: `bench${randomBytes(3).toString('hex')}`, email: `bench-${randomBytes(3).toString('hex')}@example.test`, password: 'bench-password-1' });
  const session = registered.headers.get('x-session-token')!;
  const userId = registered.body.user_id as string;
  const dbClient = new pg.Client({ connectionString: dbUrl.toString() });
  await dbClient.connect();
  await dbClient.query('update users set is_admin = true where id = $1', [userId]);
  await dbClient.end();
  const gql = async (query: string, variables: object) => {
    const result = await json(gatewayUrl, 'POST', '/graphql', { query, variables }, session);
    if (result.body.errors) throw new Error(JSON.stringify(result.body.errors));
  };
  const benchKey = async (label: string) => {
    const created = (await json(gatewayUrl, 'POST', '/keys', { label }, session)).body as { id: string; key: string };
    await gql('mutation($input: KeyLimitsInput!) { setKeyLimits(input: $input) { keyId } }', { input: { keyId: created.id, rpmLimit: 100_000, concurrencyLimit: 1_000 } });
    return created.key;
  };
  await gql('mutation($input: AdjustBalanceInput!) { adjustBalance(input: $input) { applied } }', { input: { userId, amountUsd: '100000', reason: 'benchmark balance' } });
  return benchKey;
}

/** Connections, caches and JIT warmed on every target (a few hundred requests leave the first round's figures well below the later ones'), then each proxy's idle CPU. */
async function warmUp(targets: Target[], bare: Target, gateway: Target, pinDatabase: () => Promise<number>, otherCore: string): Promise<void> {
  for (const kind of KINDS) for (const target of targets) await closedLoop(target, kind, WARM_UP_SECONDS);
  log(`PostgreSQL backends moved to core ${otherCore}: ${await pinDatabase()}`);
  // What each proxy costs doing nothing (timers, housekeeping): part of every request's CPU at a fixed rate.
  const idleBefore = await Promise.all([bare, gateway].map((t) => cpuMs(t.pid!)));
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const idleAfter = await Promise.all([bare, gateway].map((t) => cpuMs(t.pid!)));
  log(`idle CPU: bare proxy ${((idleAfter[0]! - idleBefore[0]!) / 3).toFixed(1)} ms/s, gateway ${((idleAfter[1]! - idleBefore[1]!) / 3).toFixed(1)} ms/s`);
}

/** BENCH_ROUNDS rounds of saturation, fixed rates and one client at a time, every figure recorded per round. */
async function rounds(recorder: Recorder, targets: Target[], pinDatabase: () => Promise<number>, otherCore: string): Promise<void> {
  const [direct, bare, gateway] = targets as [Target, Target, Target];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const kind of KINDS) {
      for (const target of SATURATION ? [bare, gateway, direct] : []) {
        await pinDatabase();
        const saturated = await saturate(target, kind);
        recorder.add(`${kind}.${target.name}.per_second`, saturated.perSecond);
        if (saturated.cpuPerRequestMs !== null) recorder.add(`${kind}.${target.name}.cpu_ms_per_request`, saturated.cpuPerRequestMs);
        recorder.addCost(kind, target.name, saturated.cost, saturated.done);
        if (target === gateway) recorder.countFailures(saturated.errors, `${kind} saturation`);
      }
      // CPU per request at the same fixed rate for both proxies: not confounded by which core runs out
      // first at saturation, but carrying each idle wakeup's cost.
      for (const rate of RATES) {
        await pinDatabase();
        addLatencies(recorder, targets, gateway, `${kind}@${rate}`, await inTurns(targets, gateway, RATE_SECONDS, (target, seconds) => atRate(target, kind, rate, seconds)), kind === 'stream' ? 'ttfb' : 'total');
      }
    }
    if (SEQUENTIAL_SECONDS > 0) {
      await pinDatabase();
      addLatencies(recorder, targets, gateway, 'sequential', await inTurns(targets, gateway, SEQUENTIAL_SECONDS, sequential), 'total');
      if (PINNED_SERVICES) {
        // As on separate hosts: PostgreSQL and Redis (every process of theirs, background writers too) off the
        // gateway's core, so what is left of the gap is the gateway's own.
        const moved = servicePids().filter((pid) => setAffinity(pid, otherCore)).length;
        try {
          addLatencies(recorder, targets, gateway, 'sequential-pinned', await inTurns(targets, gateway, SEQUENTIAL_SECONDS, sequential), 'total');
        } finally {
          for (const pid of servicePids()) setAffinity(pid, ALL_CORES);
        }
        if (round === 1) log(`one client with PostgreSQL and Redis on core ${otherCore}: ${moved} of their processes moved there for the phase`);
      }
    }
    log(`round ${round}/${ROUNDS} done`);
  }
}

/** The gateway's RSS after 10,000 and after BENCH_MEMORY_REQUESTS requests; null when skipped. */
async function memoryPhase(gateway: Target): Promise<Memory | null> {
  if (MEMORY_REQUESTS <= 0) return null;
  log(`memory: ${MEMORY_REQUESTS} requests through the gateway (JSON, streams, and every 10th stream aborted after its first byte)`);
  let sent = 0;
  let rssAfter10k = 0;
  const loop = async () => {
    while (sent < MEMORY_REQUESTS) {
      const i = sent++;
      await once(gateway, i % 2 ? 'stream' : 'json', i % 10 === 5);
      if (sent === 10_000 && !rssAfter10k) rssAfter10k = await rssBytes(gateway.pid!);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  const rssAfterAll = await rssBytes(gateway.pid!);
  return { rssAfter10k, rssAfterAll, requests: MEMORY_REQUESTS, growth: rssAfterAll / rssAfter10k - 1 };
}

/**
 * Scale-out: the same gateway as WORKERS=1 and as WORKERS=2 (node's cluster; limits, slots and holds
 * shared through Redis), run side by side, unpinned, saturated in turn. Reported, not judged: on this
 * machine the load generator and the simulator need a core of their own at saturation, so the two
 * workers share what is left with them. Their processes and pools go to `started` (stopped by the caller).
 */
async function scaleOut(recorder: Recorder, port: number, gatewayEnv: Record<string, string | undefined>, benchKey: (label: string) => Promise<string>, started: { pools: Pool[]; processes: ChildProcess[] }): Promise<void> {
  setAffinity(process.pid, ALL_CORES);
  const prefix = `bench-${randomBytes(4).toString('hex')}:`;
  const variants = await Promise.all(
    [1, 2].map(async (workers, i) => {
      const variantPort = port + 2 + i;
      const child = spawn(NODE, START_ARGS, { cwd: ROOT, env: { ...gatewayEnv, PORT: String(variantPort), WORKERS: String(workers), REDIS_URL, REDIS_PREFIX: prefix }, stdio: ['ignore', 'inherit', 'inherit'] });
      started.processes.push(child);
      await waitFor(() => fetch(`http://127.0.0.1:${variantPort}/ready`).then((r) => r.ok), child, `gateway with WORKERS=${workers}`);
      const keys = await Promise.all([1, 2, 3, 4].map((n) => benchKey(`bench-scale-${workers}-${n}`)));
      const target: Target = { name: 'gateway', pool: new Pool(`http://127.0.0.1:${variantPort}`, { connections: 256 }), authorization: `Bearer ${keys[0]}`, keys, pid: child.pid };
      started.pools.push(target.pool);
      return { workers, target };
    }),
  );
  log(`scale-out: WORKERS=1 and WORKERS=2 on Redis, unpinned, beside the load generator and simulator`);
  for (const kind of SCALE_KINDS) for (const { target } of variants) await closedLoop(target, kind, WARM_UP_SECONDS);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const kind of SCALE_KINDS) {
      for (const { workers, target } of variants) {
        const saturated = await saturate(target, kind);
        recorder.add(`${kind}.workers${workers}.per_second`, saturated.perSecond);
        recorder.add(`${kind}.workers${workers}.cpu_ms_per_request`, saturated.cpuPerRequestMs!);
        recorder.addCost(kind, `workers${workers}`, saturated.cost, saturated.done);
        recorder.countFailures(saturated.errors, `${kind} WORKERS=${workers}`);
      }
    }
  }
  await dropRedisKeys(prefix, REDIS_URL);
}

/** The three targets' processes: the gateway (`npm start`'s command line) and the bare proxy, pinned to BENCH_CORE. */
function startProxies(port: number, gatewayEnv: Record<string, string | undefined>, upstreamUrl: string, credential: string): { gatewayProcess: ChildProcess; bareProcess: ChildProcess } {
  // The gateways log at warn (their output is shown): an error in the table comes with its cause.
  // BENCH_PROFILE=DIR: the gateway writes a V8 CPU profile there when it stops (open it in Chrome DevTools).
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_PROFILE)}`] : [];
  const gatewayProcess = spawn('taskset', ['-c', CORE, NODE, ...(process.env.BENCH_GATEWAY_FLAGS ?? '').split(' ').filter(Boolean), ...profile, ...START_ARGS], { cwd: ROOT, env: gatewayEnv, stdio: ['ignore', 'inherit', 'inherit'] });
  const bareProcess = pinned(['dist-bench/test/bench/bare-proxy.js', `${upstreamUrl}`, String(port + 1), credential]);
  return { gatewayProcess, bareProcess };
}

async function main(): Promise<void> {
  // The load generator and the simulator keep off the core the proxies are measured on.
  const otherCore = CORE === '0' ? '1' : '0';
  setAffinity(process.pid, otherCore);
  const credential = `bench-${randomBytes(8).toString('hex')}`;
  const metricsToken = `bench-metrics-${randomBytes(8).toString('hex')}`;
  // The simulator keeps no record of what it received (tests read those records; the bench sends it millions
  // of requests): kept, about 1 KB a JSON request and 33 KB a 32 KB-prompt one stayed live for the whole run,
  // this process's mark-compacts traced more of it phase after phase, and they stalled the load generator and the
  // simulator together for hundreds of ms, after which the fixed-rate generator sent every overdue request at once
  // (docs/benchmarks-history.md, seventh step).
  const simulator = await startSimulator({ apiKey: credential, retainRecords: false });
  const database = await benchDatabase();
  const dir = await mkdtemp(path.join(tmpdir(), 'baikal-bench-'));
  const configFile = path.join(dir, 'baikal.json');
  await writeFile(configFile, JSON.stringify({ upstreams: [{ id: 'sim', kind: 'openai-compatible', baseUrl: `${simulator.url}/v1`, credentialEnv: 'BENCH_UPSTREAM_KEY', routes: [{ group: 'cheap', models: [MODEL] }] }] }));
  // Four ports in a row (gateway, bare proxy, the two scale-out gateways), below Linux's ephemeral range
  // (32768 up), where the load generator's own connections would take them.
  const port = 20_000 + Math.floor(Math.random() * 12_000);
  const gatewayUrl = `http://127.0.0.1:${port}`;
  const bareUrl = `http://127.0.0.1:${port + 1}`;
  const gatewayEnv = gatewayEnvironment(port, database.url, configFile, credential, dir, metricsToken);
  const { gatewayProcess, bareProcess } = startProxies(port, gatewayEnv, simulator.url, credential);
  const started = { pools: [] as Pool[], processes: [] as ChildProcess[] };
  try {
    await waitFor(() => fetch(`${gatewayUrl}/ready`).then((r) => r.ok), gatewayProcess, 'gateway');
    await waitFor(() => fetch(bareUrl).then(() => true), bareProcess, 'bare proxy');
    const benchKey = await benchAccount(gatewayUrl, database.url);
    const key = { key: await benchKey('bench') };

    const direct: Target = { name: 'direct', pool: new Pool(simulator.url, { connections: 256 }), authorization: `Bearer ${credential}` };
    const bare: Target = { name: 'bare', pool: new Pool(bareUrl, { connections: 256 }), authorization: 'Bearer none', pid: bareProcess.pid };
    const gateway: Target = { name: 'gateway', pool: new Pool(gatewayUrl, { connections: 256 }), authorization: `Bearer ${key.key}`, pid: gatewayProcess.pid, metrics: { url: gatewayUrl, token: metricsToken } };
    const targets = [direct, bare, gateway];
    started.pools.push(...targets.map((t) => t.pool));

    log(`Baikal inference benchmark: ${ROUNDS} rounds x ${SECONDS} s per saturation phase and ${RATE_SECONDS} s per fixed-rate phase (in ${SLICE_SECONDS} s turns), model ${MODEL}, 24-word answers, simulator without added latency`);
    log(`machine: ${cpus().length} cores, node ${process.version}; bare proxy and gateway pinned to core ${CORE}, load generator + simulator + the bench database's PostgreSQL backends on core ${otherCore}; saturation with ${CONCURRENCY} loops (the gateway's global concurrency baseline is 48)`);
    // PostgreSQL's backends for the bench database are external to the gateway, like the simulator: they
    // run beside the load generator, not on the measured core (their CPU is reported, not the gateway's).
    // Moved again before every phase: a backend the gateway's pool opens later (after its idle timeout,
    // say) would otherwise run on the measured core until the next round. PostgreSQL's shared background
    // processes (autovacuum, the WAL writer) stay where the machine puts them.
    const pinDatabase = async () => {
      const { rows } = await database.admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [database.name]);
      return rows.filter(({ pid }) => setAffinity(pid, otherCore)).length;
    };
    await warmUp(targets, bare, gateway, pinDatabase, otherCore);
    const recorder = new Recorder();
    await rounds(recorder, targets, pinDatabase, otherCore);
    const memory = await memoryPhase(gateway);
    if (SCALE) await scaleOut(recorder, port, gatewayEnv, benchKey, started);
    if (HOSTS.length) {
      setAffinity(process.pid, ALL_CORES);
      await hostsPhase({ recorder, simulatorUrl: simulator.url, gatewayEnv, benchAccount, dir });
    }
    await report(recorder, memory);
  } finally {
    await Promise.all(started.pools.map((p) => p.close()));
    const children = [gatewayProcess, bareProcess, ...started.processes];
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)))));
    await simulator.close();
    await database.admin.query(`drop database if exists "${database.name}" with (force)`);
    await database.admin.end();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
