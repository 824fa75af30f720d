import { dropRedisKeys } from '../helpers/redis.js';
/**
 * BENCH_HOSTS=1,2,3: the gateway on that many hosts, each a network namespace of its own with its own address
 * (test/helpers/hosts.ts), on one Redis (BENCH_REDIS_URL) and the bench's PostgreSQL, beside the single-process
 * default (one process, no Redis, in the root namespace on 127.0.0.1), everything unpinned. Per kind
 * (BENCH_HOSTS_KINDS) and round: throughput at saturation (BENCH_CONCURRENCY loops spread over the hosts), with
 * the gateways' CPU per request, and p50/p99 at BENCH_HOSTS_RATE requests/s spread over them (time to first byte
 * for streams). Reported, not judged: on a machine of few cores the hosts share them with the load generator,
 * the simulator, PostgreSQL and Redis, so throughput grows only with the cores the machine can give.
 *
 * The phase has a database of its own: upstreams live in the database, and hosts in namespaces reach the
 * simulator only through a forwarder on their bridge, so here every variant (the default too) calls the upstream
 * through that forwarder. The forwarders run in a process of their own (forwarders.ts), off the load generator.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { Pool } from 'undici';
import { createHostNetwork, startGatewayHosts, stopGatewayHosts, type Forwarder, type HostNetwork } from '../helpers/hosts.js';
import { spawnGateway } from '../helpers/process.js';
import { freePort } from '../helpers/redis-server.js';
import { atRate, once, percentile, type Sample, type Target } from './load.js';
import { cpuMs } from './observe.js';
import type { Recorder } from './recorder.js';
import { ADMIN_URL, CONCURRENCY, HOSTS, HOSTS_KINDS, HOSTS_RATE, log, MODEL, NODE, RATE_SECONDS, REDIS_URL, ROOT, ROUNDS, SECONDS, WARM_UP_SECONDS, type Kind } from './settings.js';

export interface HostsPhaseContext {
  recorder: Recorder;
  simulatorUrl: string;
  /** The environment the bench gives its gateways (the phase replaces the database, operator file, address and port). */
  gatewayEnv: Record<string, string | undefined>;
  /** The bench's account maker: an admin account on a gateway, and a maker of its keys. */
  benchAccount(gatewayUrl: string, dbUrl: URL): Promise<(label: string) => Promise<string>>;
  dir: string;
}

interface Variant {
  name: string;
  targets: Target[];
}

/** The forwarders' process: `forward` asks it for one more, listening on `listen`. */
async function forwarderProcess(listen: string): Promise<{ forward(target: { host?: string; port: number }): Promise<Forwarder>; close(): Promise<void> }> {
  const child = spawn(NODE, [path.join(ROOT, 'dist-bench/test/bench/forwarders.js'), listen], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const waiting = new Map<number, (port: number) => void>();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const { id, port } = JSON.parse(line) as { id: number; port: number };
    waiting.get(id)?.(port);
  });
  let next = 0;
  const forwarded = (port: number): Forwarder => ({
    address: `${listen}:${port}`,
    urlFor: (serviceUrl) => Object.assign(new URL(serviceUrl), { hostname: listen, port: String(port) }).toString(),
    close: async () => undefined, // all of them go with the process
  });
  return {
    forward: (target) =>
      new Promise((resolve) => {
        const id = ++next;
        waiting.set(id, (port) => resolve(forwarded(port)));
        child.stdin!.write(`${JSON.stringify({ id, host: target.host ?? '127.0.0.1', port: target.port })}\n`);
      }),
    close: async () => {
      child.stdin!.end();
      await exited;
    },
  };
}

/** Closed loops (BENCH_CONCURRENCY, spread over the variant's hosts) for `seconds`: requests/s and every sample. */
async function saturateSpread(variant: Variant, kind: Kind, seconds: number): Promise<{ perSecond: number; samples: Sample[] }> {
  const samples: Sample[] = [];
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, i) => {
      const target = variant.targets[i % variant.targets.length]!;
      const loop = { ...target, authorization: `Bearer ${target.keys![Math.floor(i / variant.targets.length) % target.keys!.length]}` };
      while (performance.now() - start < seconds * 1000) samples.push(await once(loop, kind));
    }),
  );
  return { perSecond: samples.length / ((performance.now() - start) / 1000), samples };
}

async function measure(recorder: Recorder, variants: Variant[]): Promise<void> {
  for (const kind of HOSTS_KINDS) for (const variant of variants) await saturateSpread(variant, kind, WARM_UP_SECONDS);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const kind of HOSTS_KINDS) {
      for (const variant of variants) {
        const pids = variant.targets.map((t) => t.pid!);
        const cpuBefore = await Promise.all(pids.map(cpuMs));
        const { perSecond, samples } = await saturateSpread(variant, kind, SECONDS);
        const cpu = (await Promise.all(pids.map(cpuMs))).reduce((sum, ms, i) => sum + ms - cpuBefore[i]!, 0);
        recorder.add(`hosts.${kind}.${variant.name}.per_second`, perSecond);
        recorder.add(`hosts.${kind}.${variant.name}.cpu_ms_per_request`, cpu / samples.length);
        recorder.countFailures(samples, `hosts ${kind} saturation ${variant.name}`);
        log(`  hosts ${kind} ${variant.name}: ${Math.round(perSecond)}/s at saturation, ${(cpu / samples.length).toFixed(3)} CPU ms per request (gateways)`);
      }
      for (const variant of variants) {
        const perHost = HOSTS_RATE / variant.targets.length;
        const samples = (await Promise.all(variant.targets.map((t) => atRate(t, kind, perHost, RATE_SECONDS)))).flat();
        const ok = samples.filter((s) => s.ok).map((s) => (kind === 'stream' ? s.ttfb : s.total));
        recorder.add(`hosts.${kind}.${variant.name}.p50_ms`, percentile(ok, 50));
        recorder.add(`hosts.${kind}.${variant.name}.p99_ms`, percentile(ok, 99));
        recorder.countFailures(samples, `hosts ${kind} @ ${HOSTS_RATE}/s ${variant.name}`);
      }
    }
    log(`hosts: round ${round}/${ROUNDS} done`);
  }
}

/** The phase's own database on the machine's PostgreSQL, dropped by `drop()`. */
async function phaseDatabase(): Promise<{ url: URL; drop(): Promise<void> }> {
  const name = `baikal_bench_hosts_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url,
    drop: async () => {
      await admin.query(`drop database if exists "${name}" with (force)`);
      await admin.end();
    },
  };
}

function describeNetwork(network: HostNetwork): string {
  return network.mode === 'netns' ? `network namespaces ${network.slots.map((s) => `${s.name} (${s.address})`).join(', ')}` : `loopback addresses (${network.fallbackReason})`;
}

export async function hostsPhase(context: HostsPhaseContext): Promise<void> {
  const network = await createHostNetwork(Math.max(...HOSTS));
  const cleanUp: (() => Promise<unknown>)[] = [() => network.close()];
  try {
    const forwarders = await forwarderProcess(network.servicesAddress);
    cleanUp.unshift(() => forwarders.close());
    const database = await phaseDatabase();
    cleanUp.push(() => database.drop());
    const upstream = await forwarders.forward({ port: Number(new URL(context.simulatorUrl).port) });
    const configFile = path.join(context.dir, 'baikal-hosts.json');
    await writeFile(configFile, JSON.stringify({ upstreams: [{ id: 'sim', kind: 'openai-compatible', baseUrl: `http://${upstream.address}/v1`, credentialEnv: 'BENCH_UPSTREAM_KEY', routes: [{ group: 'cheap', models: [MODEL] }] }] }));
    const env = { ...context.gatewayEnv, DATABASE_URL: database.url.toString(), BAIKAL_CONFIG: configFile };
    // The single-process default first: it applies the migrations. (At the bench's log level, warn: ready by /ready.)
    const port = await freePort();
    const single = await spawnGateway({ ...env, HOST: '127.0.0.1', PORT: String(port) }, 60_000, [], `http://127.0.0.1:${port}`);
    cleanUp.unshift(async () => {
      single.child.kill('SIGTERM');
      await single.exited;
    });
    const benchKey = await context.benchAccount(single.url, database.url);
    const prefix = `bench-hosts-${randomBytes(4).toString('hex')}:`;
    cleanUp.push(() => dropRedisKeys(prefix, REDIS_URL));
    const hosts = await startGatewayHosts(network, { env: Object.fromEntries(Object.entries({ ...env, REDIS_PREFIX: prefix }).filter(([, v]) => v !== undefined)) as Record<string, string>, databaseUrl: database.url.toString(), redisUrl: REDIS_URL, forward: forwarders.forward });
    cleanUp.unshift(() => stopGatewayHosts(hosts));
    const target = async (url: string, pid: number, label: string): Promise<Target> => {
      const keys = await Promise.all([1, 2, 3, 4].map((n) => benchKey(`bench-${label}-${n}`)));
      const pool = new Pool(url, { connections: 256 });
      cleanUp.unshift(() => pool.close());
      return { name: 'gateway', pool, authorization: `Bearer ${keys[0]}`, keys, pid };
    };
    const singleTarget = await target(single.url, single.child.pid!, 'single');
    const hostTargets = await Promise.all(hosts.map((host) => target(host.url, host.gateway.child.pid!, host.name)));
    const variants: Variant[] = [{ name: 'single', targets: [singleTarget] }, ...HOSTS.map((n) => ({ name: `hosts${n}`, targets: hostTargets.slice(0, n) }))];
    log(`hosts: the single-process default (no Redis) and ${HOSTS.join(', ')} host(s) on Redis in ${describeNetwork(network)}, unpinned; the upstream through a forwarder for all`);
    await measure(context.recorder, variants);
  } finally {
    for (const step of cleanUp) await step().catch((error: unknown) => log(`hosts clean-up: ${(error as Error).message}`));
  }
}
