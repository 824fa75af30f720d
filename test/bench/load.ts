/** The bench's load: targets, one request, open and closed loops, and what a phase costs beside its requests. */
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import type { Pool } from 'undici';
import { cpuTimes, loopDelayMs, serviceCpuBetween, serviceSnapshot, type LoopDelay, type ServiceCpu } from './observe.js';
import { CONCURRENCY, log, MODEL, SECONDS, type Kind } from './settings.js';

export interface Sample {
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

export interface Target {
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
export interface PhaseCost {
  cpuMs: number;
  /** Of `cpuMs`, the kernel's (system time): the system calls, the TCP work on loopback, page faults. */
  systemMs: number;
  services: ServiceCpu;
  loop: LoopDelay | null;
}

export async function measured<T>(target: Target, run: () => Promise<T>): Promise<{ result: T } & PhaseCost> {
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
export async function withLoopDelay<T>(target: Target, run: () => Promise<T>): Promise<{ result: T; loop: LoopDelay | null }> {
  if (!target.metrics) return { result: await run(), loop: null };
  await loopDelayMs(target.metrics.url, target.metrics.token);
  const result = await run();
  return { result, loop: await loopDelayMs(target.metrics.url, target.metrics.token) };
}

export const payloads: Record<Kind, string> = {
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

export async function once(target: Target, kind: Kind, abortAfterFirstByte = false): Promise<Sample> {
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
export async function atRate(target: Target, kind: Kind, rate: number, seconds: number): Promise<Sample[]> {
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
export async function closedLoop(target: Target, kind: Kind, seconds: number): Promise<{ done: number; errors: Sample[] }> {
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
export async function saturate(target: Target, kind: Kind): Promise<{ perSecond: number; errors: Sample[]; cpuPerRequestMs: number | null; cost: PhaseCost; done: number }> {
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
export async function sequential(target: Target, seconds: number): Promise<Sample[]> {
  const samples: Sample[] = [];
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) samples.push(await once(target, 'json'));
  return samples;
}

/** Busy and total jiffies of each core, from /proc/stat: whether a saturation run was limited by the measured core or the other. */
export async function coreTimes(): Promise<{ busy: number; total: number }[]> {
  const lines = (await readFile('/proc/stat', 'utf8')).split('\n').filter((line) => /^cpu\d/.test(line));
  return lines.map((line) => {
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line.split(/\s+/).slice(1).map(Number) as number[];
    const busy = user! + nice! + system! + irq! + softirq! + steal!;
    return { busy, total: busy + idle! + iowait! };
  });
}

export function percentile(values: number[], p: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export const median = (values: number[]) => percentile(values, 50);

