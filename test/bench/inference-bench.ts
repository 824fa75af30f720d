/**
 * `npm run bench`: the gateway's latency overhead on /v1/chat/completions.
 *
 * Starts the upstream simulator (in this process) and the built gateway (its own process, over a
 * fresh PostgreSQL database), then drives both with the same load: the same request straight to the
 * simulator, and through the gateway. Reports p50/p99 of total latency (JSON) and of time to first
 * byte (streams) for each, and the difference: what the gateway adds. Fixed rates are open-loop
 * (requests start on schedule whether or not earlier ones finished); saturation is closed-loop with
 * a fixed number of workers, reporting throughput.
 *
 * Environment: BENCH_SECONDS (per phase, default 5), BENCH_RATES (default 50,200,400),
 * BENCH_WORKERS (default 32; the gateway's global concurrency baseline is 48), PG_ADMIN_URL.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { Pool } from 'undici';
import { startSimulator } from '../simulator/openai-simulator.js';

const ROOT = path.resolve(new URL('../../..', import.meta.url).pathname);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const RATES = (process.env.BENCH_RATES ?? '50,200,400').split(',').map(Number);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 32);
const ADMIN_URL = process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const MODEL = 'gen-5.6-luna';

interface Sample {
  ok: boolean;
  ttfb: number;
  total: number;
}

interface Target {
  name: string;
  pool: Pool;
  path: string;
  authorization: string;
}

const log = (line: string) => process.stdout.write(`${line}\n`);

function body(stream: boolean): string {
  return JSON.stringify({ model: MODEL, stream, max_tokens: 64, messages: [{ role: 'user', content: 'Describe lake Baikal briefly [sim:words=24]' }] });
}

async function once(target: Target, payload: string): Promise<Sample> {
  const started = performance.now();
  try {
    const response = await target.pool.request({ method: 'POST', path: target.path, headers: { 'content-type': 'application/json', authorization: target.authorization }, body: payload });
    let first = 0;
    for await (const _ of response.body) if (!first) first = performance.now();
    const ended = performance.now();
    return { ok: response.statusCode === 200, ttfb: (first || ended) - started, total: ended - started };
  } catch {
    return { ok: false, ttfb: 0, total: performance.now() - started };
  }
}

/** Open loop: one request every 1000/rate ms for SECONDS, regardless of how long each takes. */
async function atRate(target: Target, payload: string, rate: number, seconds = SECONDS): Promise<Sample[]> {
  const pending: Promise<Sample>[] = [];
  const count = Math.round(rate * seconds);
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(once(target, payload));
  }
  return Promise.all(pending);
}

/** Closed loop: WORKERS back-to-back request loops for SECONDS. */
async function saturate(target: Target, payload: string): Promise<{ samples: Sample[]; seconds: number }> {
  const samples: Sample[] = [];
  const start = performance.now();
  const until = start + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (performance.now() < until) samples.push(await once(target, payload));
    }),
  );
  return { samples, seconds: (performance.now() - start) / 1000 };
}

function percentile(values: number[], p: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const ms = (value: number) => `${value.toFixed(2)} ms`.padStart(10);

function report(label: string, metric: 'total' | 'ttfb', direct: Sample[], gateway: Sample[], extra = ''): void {
  const pick = (samples: Sample[]) => samples.filter((s) => s.ok).map((s) => s[metric]);
  const [d, g] = [pick(direct), pick(gateway)];
  const failed = gateway.filter((s) => !s.ok).length + direct.filter((s) => !s.ok).length;
  const row = (p: number) => `p${p} direct ${ms(percentile(d, p))} gateway ${ms(percentile(g, p))} overhead ${ms(percentile(g, p) - percentile(d, p))}`;
  log(`${label.padEnd(34)} ${metric === 'total' ? 'latency' : 'ttfb   '}  ${row(50)} | ${row(99)}  n=${g.length} failed=${failed}${extra}`);
}

async function waitReady(url: string, child: ReturnType<typeof spawn>): Promise<void> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}`);
    const ready = await fetch(`${url}/ready`).then((r) => r.ok, () => false);
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('gateway not ready in 60 s');
}

async function json(url: string, method: string, route: string, payload: unknown, token?: string): Promise<{ body: any; headers: Headers }> {
  const response = await fetch(url + route, { method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(payload) });
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
  return { body: await response.json(), headers: response.headers };
}

async function main(): Promise<void> {
  const credential = `bench-${randomBytes(8).toString('hex')}`;
  const simulator = await startSimulator({ apiKey: credential });
  const dbName = `baikal_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database "${dbName}"`);
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const dir = await mkdtemp(path.join(tmpdir(), 'baikal-bench-'));
  const configFile = path.join(dir, 'baikal.json');
  await writeFile(configFile, JSON.stringify({ upstreams: [{ id: 'sim', kind: 'openai-compatible', baseUrl: `${simulator.url}/v1`, credentialEnv: 'BENCH_UPSTREAM_KEY', routes: [{ group: 'cheap', models: [MODEL] }] }] }));
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const gatewayUrl = `http://127.0.0.1:${port}`;
  const child = spawn(path.join(ROOT, 'node_modules/.bin/node'), ['dist/src/main.js'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', PORT: String(port), DATABASE_URL: dbUrl.toString(), BAIKAL_CONFIG: configFile, BENCH_UPSTREAM_KEY: credential, NODE_ENV: 'production', DATA_DIR: dir },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const pools: Pool[] = [];
  try {
    await waitReady(gatewayUrl, child);
    // An account with a large balance and one key without practical rate limits.
    const registered = await json(gatewayUrl, 'POST', '/auth/register', { username: `bench${randomBytes(3).toString('hex')}`, email: `bench-${randomBytes(3).toString('hex')}@example.test`, password: 'bench-password-1' });
    const session = registered.headers.get('x-session-token')!;
    const userId = registered.body.user_id as string;
    const dbClient = new pg.Client({ connectionString: dbUrl.toString() });
    await dbClient.connect();
    await dbClient.query('update users set is_admin = true where id = $1', [userId]);
    await dbClient.end();
    const key = (await json(gatewayUrl, 'POST', '/keys', { label: 'bench' }, session)).body as { id: string; key: string };
    const gql = async (query: string, variables: object) => {
      const result = await json(gatewayUrl, 'POST', '/graphql', { query, variables }, session);
      if (result.body.errors) throw new Error(JSON.stringify(result.body.errors));
    };
    await gql('mutation($input: AdjustBalanceInput!) { adjustBalance(input: $input) { applied } }', { input: { userId, amountUsd: '100000', reason: 'benchmark balance' } });
    await gql('mutation($input: KeyLimitsInput!) { setKeyLimits(input: $input) { keyId } }', { input: { keyId: key.id, rpmLimit: 100_000, concurrencyLimit: 1_000 } });

    const direct: Target = { name: 'direct', pool: new Pool(simulator.url, { connections: 256 }), path: '/v1/chat/completions', authorization: `Bearer ${credential}` };
    const gateway: Target = { name: 'gateway', pool: new Pool(gatewayUrl, { connections: 256 }), path: '/v1/chat/completions', authorization: `Bearer ${key.key}` };
    pools.push(direct.pool, gateway.pool);

    log(`Baikal inference benchmark: ${SECONDS} s per phase, model ${MODEL}, 24-word answers, simulator without added latency`);
    log(`machine: ${(await import('node:os')).cpus().length} cores, node ${process.version} (load generator and simulator share one process; the gateway runs in another)`);
    // Warm-up: connections, key and balance caches, JIT.
    for (const stream of [false, true]) for (const target of [direct, gateway]) await atRate(target, body(stream), 100, 2);

    for (const stream of [false, true]) {
      const payload = body(stream);
      const metric = stream ? 'ttfb' : 'total';
      for (const rate of RATES) {
        const d = await atRate(direct, payload, rate);
        const g = await atRate(gateway, payload, rate);
        report(`${stream ? 'stream' : 'json  '} @ ${rate} req/s`, metric, d, g);
      }
      const d = await saturate(direct, payload);
      const g = await saturate(gateway, payload);
      const throughput = ` | throughput direct ${(d.samples.length / d.seconds).toFixed(0)} req/s, gateway ${(g.samples.length / g.seconds).toFixed(0)} req/s`;
      report(`${stream ? 'stream' : 'json  '} saturation, ${WORKERS} workers`, metric, d.samples, g.samples, throughput);
    }
  } finally {
    await Promise.all(pools.map((p) => p.close()));
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
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
