/**
 * What the bench reads about other processes: CPU time and memory from /proc, and the gateway's event-loop
 * delay from its Prometheus metrics.
 */
import { readdir, readFile } from 'node:fs/promises';

const CLOCK_TICKS_PER_SECOND = 100;

/** user and system (kernel) CPU of one /proc/<pid>/stat text, in ms. */
function statCpu(stat: string): CpuTimes {
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return { user: (Number(fields[11]) * 1000) / CLOCK_TICKS_PER_SECOND, system: (Number(fields[12]) * 1000) / CLOCK_TICKS_PER_SECOND };
}

/** user + system CPU of one /proc/<pid>/stat text, in ms. */
function statCpuMs(stat: string): number {
  const { user, system } = statCpu(stat);
  return user + system;
}

/** CPU time in ms: user space and the kernel's work on the process's behalf (its system calls, page faults). */
export interface CpuTimes {
  user: number;
  system: number;
}

/** CPU time a process and its live children (a cluster primary's workers) have used, in ms. */
export async function cpuTimes(pid: number): Promise<CpuTimes> {
  const own = statCpu(await readFile(`/proc/${pid}/stat`, 'utf8'));
  const children = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '')).split(' ').filter(Boolean).map(Number);
  for (const child of await Promise.all(children.map(cpuTimes))) {
    own.user += child.user;
    own.system += child.system;
  }
  return own;
}

/** CPU time (user + system) a process and its live children have used, in ms. */
export async function cpuMs(pid: number): Promise<number> {
  const { user, system } = await cpuTimes(pid);
  return user + system;
}

export async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

export interface ServiceCpu {
  postgres: number;
  redis: number;
}

/** CPU used so far by each PostgreSQL and Redis process on the machine, by pid. */
export type ServiceSnapshot = Map<number, { service: keyof ServiceCpu; ms: number }>;

export async function serviceSnapshot(): Promise<ServiceSnapshot> {
  const snapshot: ServiceSnapshot = new Map();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => null);
    if (!stat) continue;
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const service = name === 'postgres' ? 'postgres' : name.startsWith('redis-server') ? 'redis' : null;
    if (service) snapshot.set(Number(entry), { service, ms: statCpuMs(stat) });
  }
  return snapshot;
}

/**
 * The CPU PostgreSQL (backends, WAL writer, checkpointer: a write's whole cost) and Redis used between two
 * snapshots, in ms; nothing else uses them while the bench runs. A process that started in between counts
 * from zero; one that ended is left out (its time went with it).
 */
export function serviceCpuBetween(before: ServiceSnapshot, after: ServiceSnapshot): ServiceCpu {
  const used: ServiceCpu = { postgres: 0, redis: 0 };
  for (const [pid, { service, ms }] of after) used[service] += ms - (before.get(pid)?.ms ?? 0);
  return used;
}

export interface LoopDelay {
  p50: number;
  p99: number;
  max: number;
}

/**
 * The gateway's event-loop delay since the previous call, in ms: how late its sampling timer fired while
 * it served requests (every 10 ms under load, every 50 ms between sparse requests; it resets its figures on
 * every scrape, so a call before a phase starts the phase's window).
 */
export async function loopDelayMs(url: string, token: string): Promise<LoopDelay> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
  const read = (name: string) => {
    const seconds = Number(new RegExp(`^baikal_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, 'm').exec(text)?.[1]);
    return seconds * 1000;
  };
  return { p50: read('p50'), p99: read('p99'), max: read('max') };
}
