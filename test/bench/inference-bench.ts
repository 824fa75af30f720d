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
 * - scale-out: the gateway as WORKERS=1 and as WORKERS=2 on Redis, unpinned, saturated in turn.
 * Prints a table with the issue's targets and writes JSON (BENCH_OUT, default bench-results.json).
 *
 * Environment: BENCH_SECONDS (per saturation phase, default 4), BENCH_RATE_SECONDS (per fixed-rate phase, 8), BENCH_ROUNDS (3), BENCH_RATES (100,400),
 * BENCH_CONCURRENCY (48: SPEC.md's global concurrency limit, the most the gateway admits at once), BENCH_CORE (1), BENCH_KINDS (json,stream), BENCH_WARM_UP_SECONDS (3, closed loop per target and kind), BENCH_MEMORY_REQUESTS (100000; 0 skips), BENCH_SCALE (1; 0 skips the WORKERS=1 against WORKERS=2 phase), BENCH_SCALE_KINDS (json,stream,large), BENCH_SATURATION (1; 0 skips the closed-loop phases), BENCH_REDIS_URL, BENCH_PROFILE (a
 * directory for the gateway's CPU profile), BENCH_SEQUENTIAL_SECONDS (6; 0 skips the one-client phase), BENCH_GATEWAY_ENV (`NAME=value ...` for the
 * gateways), PG_ADMIN_URL.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Pool } from 'undici';
import { startSimulator } from '../../src/simulator/openai-simulator.js';
import { START_ARGS } from '../helpers/process.js';
import { cpuMs, cpuTimes, loopDelayMs, rssBytes, serviceCpuBetween, serviceSnapshot, type LoopDelay, type ServiceCpu } from './observe.js';

const ROOT = path.resolve(new URL('../../..', import.meta.url).pathname);
const NODE = path.join(ROOT, 'node_modules/.bin/node');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
/**
 * Per target, rate and round at fixed rates (default 8 s: 800 and 3,200 samples a round): a p50 gap of
 * tenths of a millisecond between two processes needs more samples than a saturation run.
 */
const RATE_SECONDS = Number(process.env.BENCH_RATE_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** BENCH_RATES= (empty) skips the fixed-rate phases, e.g. to run the one-client phase alone. */
const RATES = (process.env.BENCH_RATES ?? '100,400').split(',').filter(Boolean).map(Number);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 48);
const CORE = process.env.BENCH_CORE ?? '1';
const MEMORY_REQUESTS = Number(process.env.BENCH_MEMORY_REQUESTS ?? 100_000);
const OUT = process.env.BENCH_OUT ?? 'bench-results.json';
/** BENCH_KINDS=json (or stream) measures one kind only, e.g. for a focused CPU profile; empty: no saturation or fixed-rate phase (nor their warm-up). */
const KINDS = (process.env.BENCH_KINDS ?? 'json,stream').split(',').filter(Boolean) as Kind[];
/** BENCH_SCALE=0 skips the WORKERS=1 against WORKERS=2 phase (both on Redis, unpinned). */
const SCALE = process.env.BENCH_SCALE !== '0';
/** The kinds the scale-out phase saturates (BENCH_SCALE_KINDS, default json,stream,large). */
const SCALE_KINDS = (process.env.BENCH_SCALE_KINDS ?? 'json,stream,large').split(',') as Kind[];
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 3);
/** Fixed-rate phases run as slices of this length, the targets taking turns. */
const SLICE_SECONDS = Number(process.env.BENCH_SLICE_SECONDS ?? 1);
/** BENCH_SATURATION=0 skips the closed-loop phases (e.g. for a CPU profile of the fixed-rate phases alone). */
const SATURATION = process.env.BENCH_SATURATION !== '0';
const ADMIN_URL = process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const MODEL = 'gen-5.6-luna';
/** One client, requests back to back (the third-party "added latency" method): seconds per target and round. */
const SEQUENTIAL_SECONDS = Number(process.env.BENCH_SEQUENTIAL_SECONDS ?? 6);

interface Sample {
  ok: boolean;
  /** HTTP status, or 0 when the connection failed. */
  status: number;
  /** A refusal's error code (`concurrency_limit_exceeded`, ...), to explain an error count. */
  code?: string;
  ttfb: number;
  total: number;
  /**
   * Open loop only: how far behind its schedule the load generator sent this request (ms), and how many of
   * its requests to the same target were unanswered when it did (this one included). A refusal that
   * comes with a late send and 48 or more unanswered is the generator's own stall catching up in one
   * burst; one without is the target's.
   */
  late?: number;
  unanswered?: number;
}

interface Target {
  name: 'direct' | 'bare' | 'gateway';
  pool: Pool;
  authorization: string;
  /** Several keys used round-robin by the closed loops, so a per-key requests/minute window never binds. */
  keys?: string[];
  pid?: number;
  /** The gateway's /metrics (its event-loop delay). */
  metrics?: { url: string; token: string };
}

/** A phase's costs beside its requests: the target's CPU, PostgreSQL's and Redis's, and the gateway's event-loop delay. */
interface PhaseCost {
  cpuMs: number;
  /** Of `cpuMs`, the kernel's (system time): the system calls, the TCP work on loopback, page faults. */
  systemMs: number;
  services: ServiceCpu;
  loop: LoopDelay | null;
}

async function measured<T>(target: Target, run: () => Promise<T>): Promise<{ result: T } & PhaseCost> {
  const none = { user: 0, system: 0 };
  const [cpuBefore, servicesBefore] = await Promise.all([target.pid ? cpuTimes(target.pid) : none, serviceSnapshot()]);
  const result = await run();
  const [cpuAfter, servicesAfter] = await Promise.all([target.pid ? cpuTimes(target.pid) : none, serviceSnapshot()]);
  const systemMs = cpuAfter.system - cpuBefore.system;
  return { result, cpuMs: cpuAfter.user - cpuBefore.user + systemMs, systemMs, services: serviceCpuBetween(servicesBefore, servicesAfter), loop: null };
}

/**
 * The gateway's event-loop delay over `run`: a scrape of its metrics before (which starts the window) and
 * after. Only two per phase: a scrape itself holds the loop for a few ms, which lands in the window once.
 */
async function withLoopDelay<T>(target: Target, run: () => Promise<T>): Promise<{ result: T; loop: LoopDelay | null }> {
  if (!target.metrics) return { result: await run(), loop: null };
  await loopDelayMs(target.metrics.url, target.metrics.token);
  const result = await run();
  return { result, loop: await loopDelayMs(target.metrics.url, target.metrics.token) };
}

type Kind = 'json' | 'stream' | 'large';

/** What each kind is called in the table: many, and one. */
const KIND_NAMES: Record<Kind, [string, string]> = {
  json: ['JSON requests', 'JSON request'],
  stream: ['SSE streams', 'stream'],
  large: ['JSON requests with a 32 KB prompt', 'JSON request with a 32 KB prompt'],
};

const log = (line: string) => process.stdout.write(`${line}\n`);

const payloads: Record<Kind, string> = {
  json: JSON.stringify({ model: MODEL, stream: false, max_tokens: 64, messages: [{ role: 'user', content: 'Describe lake Baikal briefly [sim:words=24]' }] }),
  stream: JSON.stringify({ model: MODEL, stream: true, max_tokens: 64, messages: [{ role: 'user', content: 'Describe lake Baikal briefly [sim:words=24]' }] }),
  // A long conversation: the gateway's own work (parse, validate, bound, re-encode) outweighs what the load
  // generator and the simulator do per request, so the scale-out phase can show what a second worker adds.
  large: JSON.stringify({
    model: MODEL,
    stream: false,
    max_tokens: 64,
    messages: [
      ...Array.from({ length: 46 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `Turn ${i}: ${'Lake Baikal is the deepest lake on Earth. '.repeat(17)}` })),
      { role: 'user', content: 'Describe lake Baikal briefly [sim:words=24]' },
    ],
  }),
};

async function once(target: Target, kind: Kind, abortAfterFirstByte = false): Promise<Sample> {
  const started = performance.now();
  const abort = new AbortController();
  try {
    const response = await target.pool.request({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json', authorization: target.authorization },
      body: payloads[kind],
      signal: abort.signal,
    });
    if (response.statusCode !== 200) {
      const text = await response.body.text();
      return { ok: false, status: response.statusCode, code: /"code":"([^"]*)"/.exec(text)?.[1] ?? text.slice(0, 80), ttfb: 0, total: performance.now() - started };
    }
    let first = 0;
    for await (const _ of response.body) {
      if (!first) first = performance.now();
      if (abortAfterFirstByte) {
        abort.abort();
        break;
      }
    }
    const ended = performance.now();
    return { ok: response.statusCode === 200, status: response.statusCode, ttfb: (first || ended) - started, total: ended - started };
  } catch {
    return { ok: abortAfterFirstByte, status: 0, ttfb: 0, total: performance.now() - started };
  }
}

/** Open loop: one request every 1000/rate ms, whether or not earlier ones finished. */
async function atRate(target: Target, kind: Kind, rate: number, seconds: number): Promise<Sample[]> {
  const pending: Promise<Sample>[] = [];
  const count = Math.round(rate * seconds);
  const start = performance.now();
  let unanswered = 0;
  for (let i = 0; i < count; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    // Measured after the wait: a timer the generator's own stall made late counts too.
    const late = Math.max(0, performance.now() - due);
    unanswered += 1;
    const sent = unanswered;
    pending.push(
      once(target, kind).then((sample) => {
        unanswered -= 1;
        return { ...sample, late, unanswered: sent };
      }),
    );
  }
  return Promise.all(pending);
}

/** CONCURRENCY back-to-back loops for `seconds`: how many requests were done, and the failed ones. */
async function closedLoop(target: Target, kind: Kind, seconds: number): Promise<{ done: number; errors: Sample[] }> {
  let done = 0;
  const errors: Sample[] = [];
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, i) => {
      const loopTarget = target.keys ? { ...target, authorization: `Bearer ${target.keys[i % target.keys.length]}` } : target;
      while (performance.now() < until) {
        const sample = await once(loopTarget, kind);
        done += 1;
        if (!sample.ok) errors.push(sample);
      }
    }),
  );
  return { done, errors };
}

/** Closed loop: throughput, errors, and the CPU per request of the proxy and of PostgreSQL and Redis. */
async function saturate(target: Target, kind: Kind): Promise<{ perSecond: number; errors: Sample[]; cpuPerRequestMs: number | null; cost: PhaseCost; done: number }> {
  const coresBefore = await coreTimes();
  const start = performance.now();
  const { result: phase, loop } = await withLoopDelay(target, () => measured(target, () => closedLoop(target, kind, SECONDS)));
  const { result, ...measuredCost } = phase;
  const cost = { ...measuredCost, loop };
  const { done, errors } = result;
  const seconds = (performance.now() - start) / 1000;
  const coresAfter = await coreTimes();
  const busy = coresAfter.map((after, i) => Math.round((100 * (after.busy - coresBefore[i]!.busy)) / (after.total - coresBefore[i]!.total)));
  const delay = loop ? `, event loop delay p50/p99/max ${loop.p50.toFixed(1)}/${loop.p99.toFixed(1)}/${loop.max.toFixed(1)} ms` : '';
  log(`  ${kind} ${target.name}: ${Math.round(done / seconds)}/s, cores busy ${busy.map((b, i) => `${i}: ${b}%`).join(', ')}, PostgreSQL ${((1000 * cost.services.postgres) / done).toFixed(0)} us/request${delay}`);
  return { perSecond: done / seconds, errors, cpuPerRequestMs: target.pid ? cost.cpuMs / done : null, cost, done };
}

/** One client at a time for `seconds`: every request's latency. */
async function sequential(target: Target, seconds: number): Promise<Sample[]> {
  const samples: Sample[] = [];
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) samples.push(await once(target, 'json'));
  return samples;
}

/** Busy and total jiffies of each core, from /proc/stat: whether a saturation run was limited by the measured core or the other. */
async function coreTimes(): Promise<{ busy: number; total: number }[]> {
  const lines = (await readFile('/proc/stat', 'utf8')).split('\n').filter((line) => /^cpu\d/.test(line));
  return lines.map((line) => {
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line.split(/\s+/).slice(1).map(Number) as number[];
    const busy = user! + nice! + system! + irq! + softirq! + steal!;
    return { busy, total: busy + idle! + iowait! };
  });
}

function percentile(values: number[], p: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const median = (values: number[]) => percentile(values, 50);

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

/** Deletes what the scale-out gateways left in Redis (rate windows, leases) under their prefix. */
async function redisCleanUp(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
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

const pinned = (args: string[]) => spawn('taskset', ['-c', CORE, NODE, ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], env: {} });

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
  const dbName = `baikal_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database "${dbName}"`);
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const dir = await mkdtemp(path.join(tmpdir(), 'baikal-bench-'));
  const configFile = path.join(dir, 'baikal.json');
  await writeFile(configFile, JSON.stringify({ upstreams: [{ id: 'sim', kind: 'openai-compatible', baseUrl: `${simulator.url}/v1`, credentialEnv: 'BENCH_UPSTREAM_KEY', routes: [{ group: 'cheap', models: [MODEL] }] }] }));
  // Four ports in a row (gateway, bare proxy, the two scale-out gateways), below Linux's ephemeral range
  // (32768 up), where the load generator's own connections would take them.
  const port = 20_000 + Math.floor(Math.random() * 12_000);
  const gatewayUrl = `http://127.0.0.1:${port}`;
  const bareUrl = `http://127.0.0.1:${port + 1}`;
  const gatewayEnv = { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', PORT: String(port), DATABASE_URL: dbUrl.toString(), BAIKAL_CONFIG: configFile, BENCH_UPSTREAM_KEY: credential, NODE_ENV: 'production', DATA_DIR: dir, WORKERS: '1', LOG_LEVEL: 'warn', STATUS_PROBE_SECONDS: '0',
    // One bench account drives the whole global limit: its own per-account limit (default 16) must not cut it short.
    ACCOUNT_CONCURRENCY_LIMIT: String(CONCURRENCY),
    // The bench reads the gateway's event-loop delay from its metrics.
    METRICS_TOKEN: metricsToken,
    // BENCH_GATEWAY_ENV='USAGE_FLUSH_MS=20 ...': settings to compare, given to every gateway the bench starts.
    ...Object.fromEntries((process.env.BENCH_GATEWAY_ENV ?? '').split(' ').filter(Boolean).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)])) };
  // The gateways log at warn (their output is shown): an error in the table comes with its cause.
  // BENCH_PROFILE=DIR: the gateway writes a V8 CPU profile there when it stops (open it in Chrome DevTools).
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_PROFILE)}`] : [];
  const gatewayProcess = spawn('taskset', ['-c', CORE, NODE, ...(process.env.BENCH_GATEWAY_FLAGS ?? '').split(' ').filter(Boolean), ...profile, ...START_ARGS], { cwd: ROOT, env: gatewayEnv, stdio: ['ignore', 'inherit', 'inherit'] });
  const bareProcess = pinned(['dist-bench/test/bench/bare-proxy.js', `${simulator.url}`, String(port + 1), credential]);
  const pools: Pool[] = [];
  const scaleProcesses: ChildProcess[] = [];
  try {
    await waitFor(() => fetch(`${gatewayUrl}/ready`).then((r) => r.ok), gatewayProcess, 'gateway');
    await waitFor(() => fetch(bareUrl).then(() => true), bareProcess, 'bare proxy');
    // An account with a large balance and one key without practical rate limits.
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
    /** A key with the highest limits a key can have (100,000 requests/minute). */
    const benchKey = async (label: string) => {
      const created = (await json(gatewayUrl, 'POST', '/keys', { label }, session)).body as { id: string; key: string };
      await gql('mutation($input: KeyLimitsInput!) { setKeyLimits(input: $input) { keyId } }', { input: { keyId: created.id, rpmLimit: 100_000, concurrencyLimit: 1_000 } });
      return created.key;
    };
    await gql('mutation($input: AdjustBalanceInput!) { adjustBalance(input: $input) { applied } }', { input: { userId, amountUsd: '100000', reason: 'benchmark balance' } });
    const key = { key: await benchKey('bench') };

    const direct: Target = { name: 'direct', pool: new Pool(simulator.url, { connections: 256 }), authorization: `Bearer ${credential}` };
    const bare: Target = { name: 'bare', pool: new Pool(bareUrl, { connections: 256 }), authorization: 'Bearer none', pid: bareProcess.pid };
    const gateway: Target = { name: 'gateway', pool: new Pool(gatewayUrl, { connections: 256 }), authorization: `Bearer ${key.key}`, pid: gatewayProcess.pid, metrics: { url: gatewayUrl, token: metricsToken } };
    const targets = [direct, bare, gateway];
    pools.push(...targets.map((t) => t.pool));

    log(`Baikal inference benchmark: ${ROUNDS} rounds x ${SECONDS} s per saturation phase and ${RATE_SECONDS} s per fixed-rate phase (in ${SLICE_SECONDS} s turns), model ${MODEL}, 24-word answers, simulator without added latency`);
    log(`machine: ${cpus().length} cores, node ${process.version}; bare proxy and gateway pinned to core ${CORE}, load generator + simulator + the bench database's PostgreSQL backends on core ${otherCore}; saturation with ${CONCURRENCY} loops (the gateway's global concurrency baseline is 48)`);
    // PostgreSQL's backends for the bench database are external to the gateway, like the simulator: they
    // run beside the load generator, not on the measured core (their CPU is reported, not the gateway's).
    // Moved again before every phase: a backend the gateway's pool opens later (after its idle timeout,
    // say) would otherwise run on the measured core until the next round. PostgreSQL's shared background
    // processes (autovacuum, the WAL writer) stay where the machine puts them.
    const pinDatabase = async () => {
      const { rows } = await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [dbName]);
      return rows.filter(({ pid }) => setAffinity(pid, otherCore)).length;
    };
    // Warm-up: connections, caches and JIT (a few hundred requests leave the first round's figures well below the later ones').
    for (const kind of KINDS) for (const target of targets) await closedLoop(target, kind, WARM_UP_SECONDS);
    log(`PostgreSQL backends moved to core ${otherCore}: ${await pinDatabase()}`);
    // What each proxy costs doing nothing (timers, housekeeping): part of every request's CPU at a fixed rate.
    const idleBefore = await Promise.all([bare, gateway].map((t) => cpuMs(t.pid!)));
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const idleAfter = await Promise.all([bare, gateway].map((t) => cpuMs(t.pid!)));
    log(`idle CPU: bare proxy ${((idleAfter[0]! - idleBefore[0]!) / 3).toFixed(1)} ms/s, gateway ${((idleAfter[1]! - idleBefore[1]!) / 3).toFixed(1)} ms/s`);

    const results: Record<string, number[]> = {};
    const add = (name: string, value: number) => (results[name] ??= []).push(value);
    /** Gateway failures by phase, HTTP status (0: connection failed) and error code, so an error count can be explained. */
    const failures = new Map<string, number>();
    const countFailures = (samples: Sample[], phase: string) =>
      samples
        .filter((s) => !s.ok)
        .forEach((s) => {
          const detail = `${phase}: ${s.status} ${s.code ?? ''}`;
          failures.set(detail, (failures.get(detail) ?? 0) + 1);
        });
    /** A gateway phase's event-loop delay and every target's PostgreSQL and Redis CPU per request, under `phase`. */
    const addCost = (phase: string, name: string, cost: PhaseCost, requests: number) => {
      add(`${phase}.${name}.postgres_ms_per_request`, cost.services.postgres / requests);
      add(`${phase}.${name}.redis_ms_per_request`, cost.services.redis / requests);
      if (cost.loop) for (const q of ['p50', 'p99', 'max'] as const) add(`${phase}.${name}.loop_${q}_ms`, cost.loop[q]);
    };
    /**
     * The targets take turns in short slices (their order rotating), so a drift in the machine's speed over
     * the phase weighs on all three alike instead of on whichever ran during it. Per target: its samples and
     * its costs summed over the slices, and the gateway's event-loop delay over the whole phase.
     */
    const inTurns = async (seconds: number, run: (target: Target, seconds: number) => Promise<Sample[]>) => {
      const { result, loop } = await withLoopDelay(gateway, () => slicesInTurns(seconds, run));
      result.get('gateway')!.cost.loop = loop;
      return result;
    };
    const slicesInTurns = async (seconds: number, run: (target: Target, seconds: number) => Promise<Sample[]>) => {
      const byTarget = new Map(targets.map((t) => [t.name, { samples: [] as Sample[], cost: { cpuMs: 0, systemMs: 0, services: { postgres: 0, redis: 0 }, loop: null } as PhaseCost }]));
      const slices = Math.max(1, Math.round(seconds / SLICE_SECONDS));
      for (let slice = 0; slice < slices; slice++) {
        for (let turn = 0; turn < targets.length; turn++) {
          const target = targets[(slice + turn) % targets.length]!;
          const { result, ...cost } = await measured(target, () => run(target, seconds / slices));
          const sum = byTarget.get(target.name)!;
          sum.samples.push(...result);
          sum.cost.cpuMs += cost.cpuMs;
          sum.cost.systemMs += cost.systemMs;
          sum.cost.services.postgres += cost.services.postgres;
          sum.cost.services.redis += cost.services.redis;
        }
      }
      return byTarget;
    };
    /** Latency added over the upstream (the direct target) and CPU per request, per proxy, under `phase`. */
    const addLatencies = (phase: string, byTarget: Awaited<ReturnType<typeof inTurns>>, metric: 'ttfb' | 'total') => {
      const p = (name: Target['name'], q: number) => percentile(byTarget.get(name)!.samples.filter((s) => s.ok).map((s) => s[metric]), q);
      for (const target of targets) {
        const { samples, cost } = byTarget.get(target.name)!;
        addCost(phase, target.name, cost, samples.length);
        if (target.pid) {
          add(`${phase}.${target.name}.cpu_ms_per_request`, cost.cpuMs / samples.length);
          add(`${phase}.${target.name}.system_ms_per_request`, cost.systemMs / samples.length);
        }
      }
      for (const name of ['bare', 'gateway'] as const) {
        add(`${phase}.${name}.overhead_p50_ms`, p(name, 50) - p('direct', 50));
        add(`${phase}.${name}.overhead_p99_ms`, p(name, 99) - p('direct', 99));
      }
      add(`${phase}.direct.p50_ms`, p('direct', 50));
      const lagOf = (samples: Sample[]) => ({ late: Math.max(...samples.map((s) => s.late!)), unanswered: Math.max(...samples.map((s) => s.unanswered!)) });
      for (const target of targets) {
        const samples = byTarget.get(target.name)!.samples;
        if (samples[0]?.late === undefined) continue;
        const lag = lagOf(samples);
        add(`${phase}.${target.name}.generator_late_max_ms`, lag.late);
        add(`${phase}.${target.name}.unanswered_max`, lag.unanswered);
        const refused = samples.filter((s) => !s.ok);
        if (target === gateway && refused.length) {
          // Whether the load generator's own stall sent the refused requests in one burst, or the gateway slowed down.
          const at = lagOf(refused);
          log(`  ${phase} gateway: ${refused.length} failed; sent up to ${at.late.toFixed(0)} ms late with up to ${at.unanswered} unanswered (the phase's latest send: ${lag.late.toFixed(0)} ms)`);
        }
      }
      countFailures(byTarget.get('gateway')!.samples, phase);
    };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const kind of KINDS) {
        for (const target of SATURATION ? [bare, gateway, direct] : []) {
          await pinDatabase();
          const saturated = await saturate(target, kind);
          add(`${kind}.${target.name}.per_second`, saturated.perSecond);
          if (saturated.cpuPerRequestMs !== null) add(`${kind}.${target.name}.cpu_ms_per_request`, saturated.cpuPerRequestMs);
          addCost(kind, target.name, saturated.cost, saturated.done);
          if (target === gateway) countFailures(saturated.errors, `${kind} saturation`);
        }
        // CPU per request at the same fixed rate for both proxies: not confounded by which core runs out
        // first at saturation, but carrying each idle wakeup's cost.
        for (const rate of RATES) {
          await pinDatabase();
          addLatencies(`${kind}@${rate}`, await inTurns(RATE_SECONDS, (target, seconds) => atRate(target, kind, rate, seconds)), kind === 'stream' ? 'ttfb' : 'total');
        }
      }
      if (SEQUENTIAL_SECONDS > 0) {
        await pinDatabase();
        addLatencies('sequential', await inTurns(SEQUENTIAL_SECONDS, sequential), 'total');
      }
      log(`round ${round}/${ROUNDS} done`);
    }
    const m = (name: string) => median(results[name] ?? []);

    let memory: { rssAfter10k: number; rssAfterAll: number; requests: number; growth: number } | null = null;
    if (MEMORY_REQUESTS > 0) {
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
      memory = { rssAfter10k, rssAfterAll, requests: MEMORY_REQUESTS, growth: rssAfterAll / rssAfter10k - 1 };
    }

    // Scale-out: the same gateway as WORKERS=1 and as WORKERS=2 (node's cluster; limits, slots and holds
    // shared through Redis), run side by side, unpinned, saturated in turn. Reported, not judged: on this
    // machine the load generator and the simulator need a core of their own at saturation, so the two
    // workers share what is left with them.
    if (SCALE) {
      setAffinity(process.pid, ALL_CORES);
      const prefix = `bench-${randomBytes(4).toString('hex')}:`;
      const variants = await Promise.all(
        [1, 2].map(async (workers, i) => {
          const variantPort = port + 2 + i;
          const child = spawn(NODE, START_ARGS, { cwd: ROOT, env: { ...gatewayEnv, PORT: String(variantPort), WORKERS: String(workers), REDIS_URL, REDIS_PREFIX: prefix }, stdio: ['ignore', 'inherit', 'inherit'] });
          scaleProcesses.push(child);
          await waitFor(() => fetch(`http://127.0.0.1:${variantPort}/ready`).then((r) => r.ok), child, `gateway with WORKERS=${workers}`);
          const keys = await Promise.all([1, 2, 3, 4].map((n) => benchKey(`bench-scale-${workers}-${n}`)));
          const target: Target = { name: 'gateway', pool: new Pool(`http://127.0.0.1:${variantPort}`, { connections: 256 }), authorization: `Bearer ${keys[0]}`, keys, pid: child.pid };
          pools.push(target.pool);
          return { workers, target };
        }),
      );
      log(`scale-out: WORKERS=1 and WORKERS=2 on Redis, unpinned, beside the load generator and simulator`);
      for (const kind of SCALE_KINDS) for (const { target } of variants) await closedLoop(target, kind, WARM_UP_SECONDS);
      for (let round = 1; round <= ROUNDS; round++) {
        for (const kind of SCALE_KINDS) {
          for (const { workers, target } of variants) {
            const saturated = await saturate(target, kind);
            add(`${kind}.workers${workers}.per_second`, saturated.perSecond);
            add(`${kind}.workers${workers}.cpu_ms_per_request`, saturated.cpuPerRequestMs!);
            addCost(kind, `workers${workers}`, saturated.cost, saturated.done);
            countFailures(saturated.errors, `${kind} WORKERS=${workers}`);
          }
        }
      }
      await redisCleanUp(prefix);
    }
    const gatewayErrors = [...failures.values()].reduce((a, b) => a + b, 0);
    if (gatewayErrors) log(`gateway failures: ${JSON.stringify(Object.fromEntries(failures))}`);

    const rows: { metric: string; bare: string; gateway: string; measured: string; target: string; pass: boolean }[] = [];
    const fmt = (value: number, digits = 0) => value.toFixed(digits);
    /** A gateway/bare ratio row; `limit` null: reported, not judged. */
    const ratioRow = (metric: string, key: string, digits: number, limit: { at: number; most?: boolean } | null) => {
      const [b, g] = [m(key.replace('{}', 'bare')), m(key.replace('{}', 'gateway'))];
      const ratio = g / b;
      const target = limit ? `${limit.most ? '<=' : '>='} ${limit.at}x` : '(reported)';
      rows.push({ metric, bare: fmt(b, digits), gateway: fmt(g, digits), measured: `${fmt(ratio, 2)}x`, target, pass: !limit || (limit.most ? ratio <= limit.at : ratio >= limit.at) });
    };
    /** Added latency: the gateway's over the upstream against the bare proxy's, judged as bare + `allowedMs`. */
    const overheadRow = (metric: string, phase: string, q: 'p50' | 'p99', allowedMs: number | null) => {
      const [b, g] = [m(`${phase}.bare.overhead_${q}_ms`), m(`${phase}.gateway.overhead_${q}_ms`)];
      rows.push({ metric, bare: fmt(b, 2), gateway: fmt(g, 2), measured: `${g - b >= 0 ? '+' : ''}${fmt(g - b, 2)} ms`, target: allowedMs === null ? '(reported)' : `<= bare + ${allowedMs} ms`, pass: allowedMs === null || g - b <= allowedMs });
    };
    /** PostgreSQL's and Redis's CPU per gateway request, and the gateway's event-loop delay, in one phase (reported). */
    const costRows = (label: string, phase: string) => {
      const us = (service: string) => fmt(1000 * m(`${phase}.gateway.${service}_ms_per_request`));
      rows.push({ metric: `PostgreSQL / Redis CPU per request, ${label} (us)`, bare: `${fmt(1000 * m(`${phase}.bare.postgres_ms_per_request`))} / ${fmt(1000 * m(`${phase}.bare.redis_ms_per_request`))}`, gateway: `${us('postgres')} / ${us('redis')}`, measured: '', target: '(reported)', pass: true });
      const loop = ['p50', 'p99', 'max'].map((q) => fmt(m(`${phase}.gateway.loop_${q}_ms`), 1)).join(' / ');
      rows.push({ metric: `gateway event-loop delay p50 / p99 / max, ${label} (ms)`, bare: '', gateway: loop, measured: '', target: '(reported)', pass: true });
      if (results[`${phase}.gateway.generator_late_max_ms`]) {
        // The load generator's own stalls: a send this late catches up with every overdue request at once.
        const worst = (name: string) => Math.max(...results[name]!);
        const lag = (name: string) => `${fmt(worst(`${phase}.${name}.generator_late_max_ms`), 1)} / ${fmt(worst(`${phase}.${name}.unanswered_max`))}`;
        rows.push({ metric: `load generator's latest send (ms) / most requests unanswered, ${label}, worst round`, bare: lag('bare'), gateway: lag('gateway'), measured: '', target: '(reported)', pass: true });
      }
    };
    // Targets (docs/benchmarks.md): judged rows say whether they are met.
    const SATURATION_TARGETS: Record<Kind, { throughput: number; cpu: number }> = { json: { throughput: 0.75, cpu: 1.3 }, stream: { throughput: 0.7, cpu: 1.4 }, large: { throughput: 0.75, cpu: 1.3 } };
    for (const kind of KINDS) {
      const [many, one] = KIND_NAMES[kind];
      // Skipped phases (BENCH_SATURATION=0) have no rows, rather than rows that fail.
      if (SATURATION) {
        ratioRow(`${many}/s at saturation`, `${kind}.{}.per_second`, 0, { at: SATURATION_TARGETS[kind].throughput });
        ratioRow(`CPU ms per ${one} at saturation`, `${kind}.{}.cpu_ms_per_request`, 3, { at: SATURATION_TARGETS[kind].cpu, most: true });
        costRows(`${kind} saturation`, kind);
      }
      for (const rate of RATES) {
        ratioRow(`CPU ms per ${one} @ ${rate}/s`, `${kind}@${rate}.{}.cpu_ms_per_request`, 3, rate === 100 ? { at: 1.3, most: true } : null);
        // Both proxies make the same system calls per request (docs/benchmarks-history.md): a gap here is the kernel's, elsewhere user space's.
        ratioRow(`of which in the kernel, CPU ms per ${one} @ ${rate}/s`, `${kind}@${rate}.{}.system_ms_per_request`, 3, null);
      }
    }
    for (const kind of KINDS) {
      for (const rate of RATES) {
        const label = kind === 'stream' ? `stream TTFB overhead p50 @ ${rate}/s (ms)` : `p50 latency overhead${kind === 'large' ? ' (32 KB prompt)' : ''} @ ${rate}/s (ms)`;
        overheadRow(label, `${kind}@${rate}`, 'p50', 0.3);
        overheadRow(label.replace('p50', 'p99'), `${kind}@${rate}`, 'p99', kind === 'json' && rate === 400 ? 2 : null);
        costRows(`${kind} @ ${rate}/s`, `${kind}@${rate}`);
      }
    }
    if (SEQUENTIAL_SECONDS > 0) {
      overheadRow('one client, back to back: added p50 (ms)', 'sequential', 'p50', 0.3);
      overheadRow('one client, back to back: added p99 (ms)', 'sequential', 'p99', 1);
      ratioRow('one client, back to back: CPU ms per request', 'sequential.{}.cpu_ms_per_request', 3, null);
      costRows('one client', 'sequential');
    }
    if (SCALE) {
      for (const kind of SCALE_KINDS) {
        const [one, two] = [m(`${kind}.workers1.per_second`), m(`${kind}.workers2.per_second`)];
        const [label, single] = KIND_NAMES[kind];
        rows.push({ metric: `${label}/s, WORKERS=1 -> WORKERS=2 (Redis, unpinned)`, bare: '', gateway: `${fmt(one)} -> ${fmt(two)}`, measured: `${fmt(two / one, 2)}x`, target: '(reported)', pass: true });
        const [cpuOne, cpuTwo] = [m(`${kind}.workers1.cpu_ms_per_request`), m(`${kind}.workers2.cpu_ms_per_request`)];
        rows.push({ metric: `CPU ms per ${single}, WORKERS=1 -> WORKERS=2 (all processes)`, bare: '', gateway: `${fmt(cpuOne, 3)} -> ${fmt(cpuTwo, 3)}`, measured: `${fmt(cpuTwo / cpuOne, 2)}x`, target: '(reported)', pass: true });
        const services = (workers: number) => `${fmt(1000 * m(`${kind}.workers${workers}.postgres_ms_per_request`))} / ${fmt(1000 * m(`${kind}.workers${workers}.redis_ms_per_request`))}`;
        rows.push({ metric: `PostgreSQL / Redis CPU per ${single} (us), WORKERS=1 -> WORKERS=2`, bare: '', gateway: `${services(1)} -> ${services(2)}`, measured: '', target: '(reported)', pass: true });
      }
    }
    rows.push({ metric: 'gateway errors', bare: '', gateway: String(gatewayErrors), measured: String(gatewayErrors), target: '0', pass: gatewayErrors === 0 });
    if (memory) {
      rows.push({ metric: `RSS after 10k -> ${memory.requests / 1000}k requests (MB)`, bare: '', gateway: `${fmt(memory.rssAfter10k / 2 ** 20)} -> ${fmt(memory.rssAfterAll / 2 ** 20)}`, measured: `${memory.growth >= 0 ? '+' : ''}${fmt(memory.growth * 100, 1)} %`, target: '<= +20 %', pass: memory.growth <= 0.2 });
    }
    log('');
    log('| metric | bare proxy | gateway | gateway vs bare | target | met |');
    log('|---|---|---|---|---|---|');
    for (const row of rows) log(`| ${row.metric} | ${row.bare} | ${row.gateway} | ${row.measured} | ${row.target} | ${row.target === '(reported)' ? '' : row.pass ? 'yes' : 'NO'} |`);
    await writeFile(OUT, JSON.stringify({ at: new Date().toISOString(), settings: { seconds: SECONDS, rateSeconds: RATE_SECONDS, sliceSeconds: SLICE_SECONDS, rounds: ROUNDS, rates: RATES, concurrency: CONCURRENCY, core: CORE }, medians: Object.fromEntries(Object.keys(results).map((k) => [k, m(k)])), runs: results, memory, gatewayErrors, gatewayFailures: Object.fromEntries(failures), rows }, null, 2));
    log(`\nwritten: ${OUT}`);
  } finally {
    await Promise.all(pools.map((p) => p.close()));
    const children = [gatewayProcess, bareProcess, ...scaleProcesses];
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)))));
    await simulator.close();
    await admin.query(`drop database if exists "${dbName}" with (force)`);
    await admin.end();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
