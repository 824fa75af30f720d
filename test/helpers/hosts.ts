import { execFile, execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { promisify } from 'node:util';
import { spawnGateway, type ServerProcess } from './process.js';
import { freePort } from './redis-server.js';
import { startTcpForwarder, type TcpForwarder } from './tcp-forwarder.js';

/**
 * Several gateway "hosts" on one machine (issue 55): each host is a network namespace of its own with its own
 * address, joined to the root namespace by a veth pair on a bridge, and the gateway runs inside it
 * (`ip netns exec`). PostgreSQL, Redis and the upstream simulator stay in the root namespace on 127.0.0.1,
 * which no namespace can reach, so each host reaches them through TCP forwarders listening on the bridge's
 * address: one per host for PostgreSQL and one for Redis (so one host can be cut from Redis while the others
 * keep it), and one shared by all for the upstream (upstreams live in the database: one URL for every host).
 * The load runs in the root namespace and reaches each host's gateway at its namespace address.
 *
 * Without the right to make namespaces (not root), or with TEST_HOSTS=loopback, the hosts run on loopback
 * addresses 127.0.0.2, 127.0.0.3, ... with the same forwarders on 127.0.0.1 (`mode` and `fallbackReason` say so).
 */
export type HostsMode = 'netns' | 'loopback';

/** Where one host lives: its name (the namespace's), its address, and the command prefix that runs a process there. */
export interface HostSlot {
  index: number;
  name: string;
  address: string;
  wrapper: string[];
}

export interface HostNetwork {
  mode: HostsMode;
  /** Why there are no namespaces (loopback mode only). */
  fallbackReason?: string;
  /** The root namespace's address every host reaches (forwarders listen there). */
  servicesAddress: string;
  slots: HostSlot[];
  /** A forwarder to a root-namespace service, reachable from every host. */
  forward(target: { host?: string; port: number }): Promise<TcpForwarder>;
  /**
   * A second root-namespace address every host reaches, for a service that must be reached directly (a Redis
   * Cluster's nodes announce where they are: no forwarder can stand in), and that one host can be cut from alone
   * (a blackhole route in its namespace). Namespaces only.
   */
  directAddress?: string;
  close(): Promise<void>;
}

const IP = '/usr/sbin/ip';
const run = promisify(execFile);
const ip = (...args: string[]) => run(IP, args);
/** Names carry the owning pid, so a later run can remove what a dead run left (`sweepStale`). */
const NAMESPACE = /^baikal-(\d+)-\d+-\d+$/;
const LINK = /^bk(\d+)x\d+/;
let networks = 0;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Removes namespaces and bridges of runs whose process is gone (a run killed before its teardown). */
export async function sweepStale(): Promise<string[]> {
  const removed: string[] = [];
  const namespaces = (await ip('netns', 'list').catch(() => ({ stdout: '' }))).stdout.split('\n').map((line) => line.split(' ')[0]!);
  for (const name of namespaces) {
    const pid = NAMESPACE.exec(name)?.[1];
    if (pid && !alive(Number(pid)) && (await ip('netns', 'del', name).then(() => true, () => false))) removed.push(name);
  }
  const links = (await ip('-o', 'link', 'show').catch(() => ({ stdout: '' }))).stdout.split('\n').map((line) => line.split(': ')[1]?.split('@')[0] ?? '');
  for (const link of links) {
    const pid = LINK.exec(link)?.[1];
    if (pid && !alive(Number(pid)) && (await ip('link', 'del', link).then(() => true, () => false))) removed.push(link);
  }
  return removed;
}

/** A /24 in 10.200-249.x.0 that no interface or route of the machine uses yet. */
async function freeSubnet(): Promise<string> {
  const used = (await ip('-4', 'addr')).stdout + (await ip('-4', 'route')).stdout;
  for (;;) {
    const subnet = `10.${200 + randomInt(50)}.${randomInt(256)}`;
    if (!used.includes(`${subnet}.`)) return subnet;
  }
}

/** `count` hosts in namespaces on a bridge of their own, or on loopback addresses when namespaces cannot be made. */
export async function createHostNetwork(count: number): Promise<HostNetwork> {
  const tag = `${process.pid}x${++networks}`;
  const swept = await sweepStale();
  if (swept.length) process.stdout.write(`[hosts] removed what dead runs left: ${swept.join(', ')}\n`);
  if (process.env.TEST_HOSTS === 'loopback') return loopbackNetwork(count, 'TEST_HOSTS=loopback');
  const namespaces = Array.from({ length: count }, (_, n) => `baikal-${process.pid}-${networks}-${n + 1}`);
  const bridge = `bk${tag}`;
  const made: string[] = [];
  const removeAll = () => Promise.all([...made.map((name) => ip('netns', 'del', name).catch(() => undefined)), ip('link', 'del', bridge).catch(() => undefined)]);
  // A teardown that never ran (the worker killed) still removes the namespaces; a dead pid is swept next run too.
  const onExit = () => {
    for (const args of [...made.map((name) => ['netns', 'del', name]), ['link', 'del', bridge]]) {
      try {
        execFileSync(IP, args, { stdio: 'ignore' });
      } catch {
        // Gone already, or the next run's sweep removes it.
      }
    }
  };
  try {
    const subnet = await freeSubnet();
    await ip('netns', 'add', namespaces[0]!);
    made.push(namespaces[0]!);
    process.once('exit', onExit);
    await ip('link', 'add', bridge, 'type', 'bridge');
    await ip('addr', 'add', `${subnet}.1/24`, 'dev', bridge);
    await ip('link', 'set', bridge, 'up');
    const slots: HostSlot[] = [];
    for (const [n, name] of namespaces.entries()) {
      if (n > 0) {
        await ip('netns', 'add', name);
        made.push(name);
      }
      // The veth's namespace end is that host's eth0; its root end is a port of the bridge.
      const veth = `${bridge}v${n + 1}`;
      await ip('link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', name);
      await ip('link', 'set', veth, 'master', bridge, 'up');
      await ip('-n', name, 'addr', 'add', `${subnet}.${n + 2}/24`, 'dev', 'eth0');
      await ip('-n', name, 'link', 'set', 'eth0', 'up');
      await ip('-n', name, 'link', 'set', 'lo', 'up');
      slots.push({ index: n, name, address: `${subnet}.${n + 2}`, wrapper: [IP, 'netns', 'exec', name] });
    }
    const servicesAddress = `${subnet}.1`;
    const directAddress = `${subnet}.250`;
    await ip('addr', 'add', `${directAddress}/24`, 'dev', bridge);
    return {
      mode: 'netns',
      servicesAddress,
      directAddress,
      slots,
      forward: (target) => startTcpForwarder(target, { listen: servicesAddress }),
      close: async () => {
        process.off('exit', onExit);
        await removeAll();
      },
    };
  } catch (error) {
    process.off('exit', onExit);
    await removeAll();
    const reason = ((error as { stderr?: string }).stderr || (error as Error).message).trim();
    return loopbackNetwork(count, `network namespaces cannot be made here (${reason})`);
  }
}

function loopbackNetwork(count: number, fallbackReason: string): HostNetwork {
  process.stdout.write(`[hosts] ${fallbackReason}: the ${count} hosts run on loopback addresses 127.0.0.2-${count + 1} instead\n`);
  return {
    mode: 'loopback',
    fallbackReason,
    servicesAddress: '127.0.0.1',
    slots: Array.from({ length: count }, (_, n) => ({ index: n, name: `loopback-${n + 1}`, address: `127.0.0.${n + 2}`, wrapper: [] })),
    forward: (target) => startTcpForwarder(target),
    close: async () => undefined,
  };
}

/** What a host needs of a forwarder: the test's own (in this process) also cut and restore; the bench's live in a process of their own. */
export type Forwarder = Pick<TcpForwarder, 'address' | 'urlFor' | 'close'>;

export interface GatewayHost<F extends Forwarder = TcpForwarder> extends HostSlot {
  /** The gateway's URL: the same across restarts (a fixed port on the host's address), as behind a load balancer. */
  url: string;
  /** The gateway process running now (a new one after `start()`). */
  gateway: ServerProcess;
  /** Every gateway process this host ran, the first first (their logs: `lines`). */
  processes: ServerProcess[];
  /** This host's own way to PostgreSQL and to Redis (cut one to cut this host alone). */
  postgres: F;
  redis?: F;
  /** SIGKILL, and wait until it is gone. */
  kill(): Promise<void>;
  /** SIGTERM (the gateway drains and writes its usage), and wait until it is gone. */
  stop(): Promise<number | null>;
  /** Starts the gateway again (after a kill or stop) with the same settings. */
  start(): Promise<void>;
  readonly running: boolean;
}

export interface GatewayHostsOptions<F extends Forwarder = TcpForwarder> {
  /** Settings every host's gateway gets (DATABASE_URL and REDIS_URL are replaced by each host's forwarders). */
  env: Record<string, string>;
  databaseUrl: string;
  /**
   * A single Redis's URL (each host gets a forwarder to it), or a Redis Cluster's on the network's `directAddress`
   * (each host reaches it directly, and is cut from it by a blackhole route in its namespace).
   */
  redisUrl?: string;
  /** Makes the forwarders (default: `network.forward`, in this process). */
  forward?: (target: { host: string; port: number }) => Promise<F>;
}

/** Starts a gateway on every host of `network`: the first alone (it applies the migrations), then the others together. */
export async function startGatewayHosts<F extends Forwarder = TcpForwarder>(network: HostNetwork, options: GatewayHostsOptions<F>): Promise<GatewayHost<F>[]> {
  const hosts = await Promise.all(network.slots.map((slot) => prepareHost(network, slot, options)));
  const [first, ...rest] = hosts;
  try {
    await first!.start();
    await Promise.all(rest.map((host) => host.start()));
  } catch (error) {
    await stopGatewayHosts(hosts);
    throw error;
  }
  return hosts;
}

/** Stops every host's gateway (SIGTERM: drained, usage written; SIGKILL after 20 s) and closes its forwarders. */
export async function stopGatewayHosts(hosts: GatewayHost<Forwarder>[]): Promise<void> {
  await Promise.all(
    hosts.map(async (host) => {
      const timer = setTimeout(() => void host.kill(), 20_000);
      await host.stop().finally(() => clearTimeout(timer));
      await Promise.all([host.postgres.close(), host.redis?.close()]);
    }),
  );
}

/** A host's way to a directly reached service: cut (a blackhole route to its address in the host's namespace) and restored. */
function routeCut(slot: HostSlot, target: string): Pick<TcpForwarder, 'address' | 'urlFor' | 'close' | 'cut' | 'restore' | 'isCut'> {
  let cut = false;
  const route = (verb: 'add' | 'del') => execFileSync(IP, ['-n', slot.name, 'route', verb, 'blackhole', `${target}/32`], { stdio: 'ignore' });
  return {
    address: target,
    urlFor: (url) => url,
    cut: () => void (cut || (route('add'), (cut = true))),
    restore: () => void (cut && (route('del'), (cut = false))),
    get isCut() {
      return cut;
    },
    close: async () => undefined,
  };
}

function address(url: string, defaultPort: number): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || defaultPort) };
}

async function prepareHost<F extends Forwarder>(network: HostNetwork, slot: HostSlot, options: GatewayHostsOptions<F>): Promise<GatewayHost<F>> {
  const forward = options.forward ?? (network.forward as unknown as (target: { host: string; port: number }) => Promise<F>);
  const postgres = await forward(address(options.databaseUrl, 5432));
  const direct = options.redisUrl?.startsWith('redis-cluster://');
  const redis = options.redisUrl ? (direct ? (routeCut(slot, network.directAddress!) as unknown as F) : await forward(address(options.redisUrl, 6379))) : undefined;
  // In a namespace of its own every port is free; on a shared loopback address, one that is free now.
  const port = network.mode === 'netns' ? 8080 : await freePort(slot.address);
  const env = {
    ...options.env,
    HOST: slot.address,
    PORT: String(port),
    DATABASE_URL: postgres.urlFor(options.databaseUrl),
    ...(redis ? { REDIS_URL: direct ? options.redisUrl! : redis.urlFor(options.redisUrl!) } : {}),
  };
  let gateway: ServerProcess | undefined;
  const processes: ServerProcess[] = [];
  const running = () => Boolean(gateway && gateway.child.exitCode === null && gateway.child.signalCode === null);
  const exitHook = () => gateway?.child.kill('SIGKILL');
  const end = async (signal: NodeJS.Signals) => {
    if (!gateway) return null;
    if (running()) gateway.child.kill(signal);
    const code = await gateway.exited;
    process.off('exit', exitHook);
    return code;
  };
  return {
    ...slot,
    url: `http://${slot.address}:${port}`,
    get gateway() {
      if (!gateway) throw new Error(`host ${slot.name} was never started`);
      return gateway;
    },
    processes,
    postgres,
    redis,
    kill: async () => void (await end('SIGKILL')),
    stop: () => end('SIGTERM'),
    start: async () => {
      if (running()) throw new Error(`host ${slot.name} is running`);
      gateway = await spawnGateway(env, 60_000, slot.wrapper, `http://${slot.address}:${port}`);
      processes.push(gateway);
      process.once('exit', exitHook);
    },
    get running() {
      return running();
    },
  };
}
