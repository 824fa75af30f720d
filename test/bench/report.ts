/** The bench's table (each figure against its target in docs/benchmarks.md) and its JSON file. */
import { writeFile } from 'node:fs/promises';
import type { Recorder } from './recorder.js';
import { CONCURRENCY, CORE, HOSTS, HOSTS_KINDS, HOSTS_RATE, KIND_NAMES, KINDS, log, OUT, PINNED_SERVICES, RATE_SECONDS, RATES, ROUNDS, SATURATION, SCALE, SCALE_KINDS, SECONDS, SEQUENTIAL_SECONDS, SLICE_SECONDS, type Kind } from './settings.js';

export interface Memory {
  rssAfter10k: number;
  rssAfterAll: number;
  requests: number;
  growth: number;
}

interface Row {
  metric: string;
  bare: string;
  gateway: string;
  measured: string;
  target: string;
  pass: boolean;
}

const fmt = (value: number, digits = 0) => value.toFixed(digits);

/** Targets (docs/benchmarks.md): judged rows say whether they are met. */
const SATURATION_TARGETS: Record<Kind, { throughput: number; cpu: number }> = { json: { throughput: 0.75, cpu: 1.3 }, stream: { throughput: 0.7, cpu: 1.4 }, large: { throughput: 0.75, cpu: 1.3 } };

/** The kinds of row the table has, each reading the medians of `recorder` and adding to `rows`. */
function rowWriters(recorder: Recorder, rows: Row[]) {
  const m = (name: string) => recorder.m(name);
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
    if (recorder.results[`${phase}.gateway.generator_late_max_ms`]) {
      // The load generator's own stalls: a send this late catches up with every overdue request at once.
      const worst = (name: string) => Math.max(...recorder.results[name]!);
      const lag = (name: string) => `${fmt(worst(`${phase}.${name}.generator_late_max_ms`), 1)} / ${fmt(worst(`${phase}.${name}.unanswered_max`))}`;
      rows.push({ metric: `load generator's latest send (ms) / most requests unanswered, ${label}, worst round`, bare: lag('bare'), gateway: lag('gateway'), measured: '', target: '(reported)', pass: true });
    }
  };
  return { ratioRow, overheadRow, costRows };
}

/** Saturation, fixed rates and one client: the gateway against the bare proxy. */
function proxyRows(recorder: Recorder, rows: Row[]): void {
  const { ratioRow, overheadRow, costRows } = rowWriters(recorder, rows);
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
    if (PINNED_SERVICES) {
      overheadRow('one client, PostgreSQL and Redis on the other core: added p50 (ms)', 'sequential-pinned', 'p50', 0.3);
      overheadRow('one client, PostgreSQL and Redis on the other core: added p99 (ms)', 'sequential-pinned', 'p99', 1);
      ratioRow('one client, PostgreSQL and Redis on the other core: CPU ms per request', 'sequential-pinned.{}.cpu_ms_per_request', 3, null);
    }
  }
}

/** WORKERS=1 against WORKERS=2 (reported, not judged). */
function scaleRows(recorder: Recorder, rows: Row[]): void {
  const m = (name: string) => recorder.m(name);
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

/** The single-process default against 1, 2, 3 hosts in namespaces on Redis (hosts-phase.ts; reported, not judged). */
function hostsRows(recorder: Recorder, rows: Row[]): void {
  const m = (name: string) => recorder.m(name);
  const side = (kind: Kind, figure: string, digits: number) => `${fmt(m(`hosts.${kind}.single.${figure}`), digits)} -> ${HOSTS.map((n) => fmt(m(`hosts.${kind}.hosts${n}.${figure}`), digits)).join(' / ')}`;
  const most = Math.max(...HOSTS);
  const against = HOSTS.includes(1) ? 1 : Math.min(...HOSTS);
  const header = `single process -> ${HOSTS.join(' / ')} host(s)`;
  for (const kind of HOSTS_KINDS) {
    const [many, one] = KIND_NAMES[kind];
    const scaling = m(`hosts.${kind}.hosts${most}.per_second`) / m(`hosts.${kind}.hosts${against}.per_second`);
    rows.push({ metric: `${many}/s at saturation, ${header} (Redis, namespaces, unpinned)`, bare: '', gateway: side(kind, 'per_second', 0), measured: `${most} vs ${against}: ${fmt(scaling, 2)}x`, target: '(reported)', pass: true });
    rows.push({ metric: `CPU ms per ${one} at saturation (all gateways), ${header}`, bare: '', gateway: side(kind, 'cpu_ms_per_request', 3), measured: '', target: '(reported)', pass: true });
    const latency = kind === 'stream' ? 'TTFB' : 'latency';
    rows.push({ metric: `${latency} p50 @ ${HOSTS_RATE}/s spread over the hosts (ms), ${header}`, bare: '', gateway: side(kind, 'p50_ms', 2), measured: '', target: '(reported)', pass: true });
    rows.push({ metric: `${latency} p99 @ ${HOSTS_RATE}/s spread over the hosts (ms), ${header}`, bare: '', gateway: side(kind, 'p99_ms', 2), measured: '', target: '(reported)', pass: true });
  }
}

/** Prints the gateway's failures and the table, and writes every figure to BENCH_OUT. */
export async function report(recorder: Recorder, memory: Memory | null): Promise<void> {
  const gatewayErrors = [...recorder.failures.values()].reduce((a, b) => a + b, 0);
  if (gatewayErrors) log(`gateway failures: ${JSON.stringify(Object.fromEntries(recorder.failures))}`);
  const rows: Row[] = [];
  proxyRows(recorder, rows);
  if (SCALE) scaleRows(recorder, rows);
  if (HOSTS.length) hostsRows(recorder, rows);
  rows.push({ metric: 'gateway errors', bare: '', gateway: String(gatewayErrors), measured: String(gatewayErrors), target: '0', pass: gatewayErrors === 0 });
  if (memory) {
    rows.push({ metric: `RSS after 10k -> ${memory.requests / 1000}k requests (MB)`, bare: '', gateway: `${fmt(memory.rssAfter10k / 2 ** 20)} -> ${fmt(memory.rssAfterAll / 2 ** 20)}`, measured: `${memory.growth >= 0 ? '+' : ''}${fmt(memory.growth * 100, 1)} %`, target: '<= +20 %', pass: memory.growth <= 0.2 });
  }
  log('');
  log('| metric | bare proxy | gateway | gateway vs bare | target | met |');
  log('|---|---|---|---|---|---|');
  for (const row of rows) log(`| ${row.metric} | ${row.bare} | ${row.gateway} | ${row.measured} | ${row.target} | ${row.target === '(reported)' ? '' : row.pass ? 'yes' : 'NO'} |`);
  const { results, failures } = recorder;
  await writeFile(OUT, JSON.stringify({ at: new Date().toISOString(), settings: { seconds: SECONDS, rateSeconds: RATE_SECONDS, sliceSeconds: SLICE_SECONDS, rounds: ROUNDS, rates: RATES, concurrency: CONCURRENCY, core: CORE }, medians: Object.fromEntries(Object.keys(results).map((k) => [k, recorder.m(k)])), runs: results, memory, gatewayErrors, gatewayFailures: Object.fromEntries(failures), rows }, null, 2));
  log(`\nwritten: ${OUT}`);
}
