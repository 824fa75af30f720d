/** The bench's settings (from BENCH_* variables: see inference-bench.ts), paths and the names of what it measures. */
import path from 'node:path';

export const ROOT = path.resolve(new URL('../../..', import.meta.url).pathname);
export const NODE = path.join(ROOT, 'node_modules/.bin/node');
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
/**
 * Per target, rate and round at fixed rates (default 8 s: 800 and 3,200 samples a round): a p50 gap of
 * tenths of a millisecond between two processes needs more samples than a saturation run.
 */
export const RATE_SECONDS = Number(process.env.BENCH_RATE_SECONDS ?? 8);
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** BENCH_RATES= (empty) skips the fixed-rate phases, e.g. to run the one-client phase alone. */
export const RATES = (process.env.BENCH_RATES ?? '100,400').split(',').filter(Boolean).map(Number);
export const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 48);
export const CORE = process.env.BENCH_CORE ?? '1';
export const MEMORY_REQUESTS = Number(process.env.BENCH_MEMORY_REQUESTS ?? 100_000);
export const OUT = process.env.BENCH_OUT ?? 'bench-results.json';
/** BENCH_KINDS=json (or stream) measures one kind only, e.g. for a focused CPU profile; empty: no saturation or fixed-rate phase (nor their warm-up). */
export const KINDS = (process.env.BENCH_KINDS ?? 'json,stream').split(',').filter(Boolean) as Kind[];
/** BENCH_SCALE=0 skips the WORKERS=1 against WORKERS=2 phase (both on Redis, unpinned). */
export const SCALE = process.env.BENCH_SCALE !== '0';
/** The kinds the scale-out phase saturates (BENCH_SCALE_KINDS, default json,stream,large). */
export const SCALE_KINDS = (process.env.BENCH_SCALE_KINDS ?? 'json,stream,large').split(',') as Kind[];
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** BENCH_HOSTS=1,2,3: the hosts phase (hosts-phase.ts) with that many gateway hosts in network namespaces on Redis, beside the single-process default; unset or empty skips it. */
export const HOSTS = (process.env.BENCH_HOSTS ?? '').split(',').filter(Boolean).map(Number);
/** The kinds the hosts phase measures (BENCH_HOSTS_KINDS, default json,stream). */
export const HOSTS_KINDS = (process.env.BENCH_HOSTS_KINDS ?? 'json,stream').split(',').filter(Boolean) as Kind[];
/** The open-loop rate (requests/s, spread over the hosts) at which the hosts phase reads p50/p99 (BENCH_HOSTS_RATE, default 200). */
export const HOSTS_RATE = Number(process.env.BENCH_HOSTS_RATE ?? 200);
export const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 3);
/** Fixed-rate phases run as slices of this length, the targets taking turns. */
export const SLICE_SECONDS = Number(process.env.BENCH_SLICE_SECONDS ?? 1);
/** BENCH_SATURATION=0 skips the closed-loop phases (e.g. for a CPU profile of the fixed-rate phases alone). */
export const SATURATION = process.env.BENCH_SATURATION !== '0';
export const ADMIN_URL = process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const MODEL = 'gen-5.6-luna';
/** One client, requests back to back (the third-party "added latency" method): seconds per target and round. */
export const SEQUENTIAL_SECONDS = Number(process.env.BENCH_SEQUENTIAL_SECONDS ?? 6);
/**
 * The one-client phase again with every PostgreSQL and Redis process on the other core (BENCH_PINNED=0 skips it):
 * on separate hosts they do not share the gateway's core, and this is the gap the gateway makes alone.
 */
export const PINNED_SERVICES = process.env.BENCH_PINNED !== '0';

export type Kind = 'json' | 'stream' | 'large';

/** What each kind is called in the table: many, and one. */
export const KIND_NAMES: Record<Kind, [string, string]> = {
  json: ['JSON requests', 'JSON request'],
  stream: ['SSE streams', 'stream'],
  large: ['JSON requests with a 32 KB prompt', 'JSON request with a 32 KB prompt'],
};

export const log = (line: string) => process.stdout.write(`${line}\n`);

