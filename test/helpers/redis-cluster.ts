import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';

/**
 * A real Redis Cluster for tests, from Debian's `redis-server` and `redis-cli`: six nodes (three masters, three
 * replicas) on free local ports, each in a temp dir of its own, without persistence. cluster-node-timeout is short
 * (1 s), so a killed master's replica takes over within a few seconds.
 */
export interface ClusterNodeInfo {
  id: string;
  port: number;
  role: 'master' | 'replica';
  /** A replica's master. */
  masterId: string | null;
  /** A master's slot ranges, inclusive. */
  slots: [number, number][];
}

export interface RedisClusterHarness {
  /** REDIS_URL for it: `redis-cluster://127.0.0.1:<port>,…` (every node a seed). */
  url: string;
  ports: number[];
  /** The masters serving slots now, by their first slot. */
  masters(): Promise<ClusterNodeInfo[]>;
  /** The master serving `key`'s slot now. */
  masterOf(key: string): Promise<ClusterNodeInfo>;
  /** SIGKILLs the i-th of `masters()`; answers which node that was. */
  killMaster(i: number): Promise<ClusterNodeInfo>;
  /** Resolves once every slot is served by a live master again and every live node says cluster_state:ok; answers the ms since the last kill. */
  waitForFailover(timeoutMs?: number): Promise<number>;
  /** Starts a killed node again on its port and dir: it rejoins (a former master as its successor's replica). */
  restartNode(port: number): Promise<void>;
  /** SIGKILLs every node (Redis Cluster entirely away). */
  killAll(): Promise<void>;
  /** Starts every killed node again (with nodes.conf they form the same cluster, empty) and waits for it to be ok. */
  restartAll(): Promise<void>;
  /** Deletes every key under `prefix` on every master. */
  dropKeys(prefix: string): Promise<void>;
  /** Kills every node and removes the dirs. Safe to call twice. */
  stop(): Promise<void>;
}

const run = promisify(execFile);
const DIR_PREFIX = 'baikal-redis-cluster-';
const NODES = 6;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface LocalNode {
  port: number;
  busPort: number;
  dir: string;
  child: ChildProcess | null;
}

/**
 * `requireFullCoverage: false` is cluster-require-full-coverage no: while one shard fails over, the others keep
 * answering (with Redis's default, yes, every node answers CLUSTERDOWN from the moment a master is marked failed
 * until its replica is promoted).
 */
export async function startRedisCluster(options: { nodeTimeoutMs?: number; requireFullCoverage?: boolean; announce?: string } = {}): Promise<RedisClusterHarness> {
  await removeStrayClusters();
  const dir = await mkdtemp(path.join(tmpdir(), DIR_PREFIX));
  // Whoever finds this dir after this process is gone kills its nodes and removes it (removeStrayClusters).
  await writeFile(path.join(dir, 'owner.pid'), String(process.pid));
  const ports = await freePorts(NODES * 2);
  const cluster = new LocalRedisCluster(dir, ports, options.nodeTimeoutMs ?? 1_000, options.requireFullCoverage ?? true, options.announce ?? '127.0.0.1');
  try {
    await cluster.create();
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

class LocalRedisCluster implements RedisClusterHarness {
  readonly url: string;
  readonly ports: number[];
  private readonly nodes: LocalNode[];
  private killedAt = Date.now();
  private readonly killAllNow = () => this.nodes.forEach((node) => node.child?.kill('SIGKILL'));

  constructor(
    private readonly dir: string,
    ports: number[],
    private readonly nodeTimeoutMs: number,
    private readonly requireFullCoverage: boolean,
    /** The address the nodes tell clients (and each other) to reach them at: 127.0.0.1, or one network namespaces reach. */
    private readonly announce: string,
  ) {
    this.nodes = Array.from({ length: NODES }, (_, i) => ({ port: ports[i]!, busPort: ports[NODES + i]!, dir: path.join(dir, `node-${i}`), child: null }));
    this.ports = this.nodes.map((node) => node.port);
    this.url = `redis-cluster://${this.ports.map((port) => `${announce}:${port}`).join(',')}`;
    process.once('exit', this.killAllNow);
  }

  async create(): Promise<void> {
    await Promise.all(this.nodes.map((node) => this.startNode(node)));
    await run('redis-cli', ['--cluster', 'create', ...this.ports.map((port) => `${this.announce}:${port}`), '--cluster-replicas', '1', '--cluster-yes'], { timeout: 60_000 });
    await waitUntil('the cluster to be ok with every replica in sync', () => settled(this.ports), 30_000);
  }

  async masters(): Promise<ClusterNodeInfo[]> {
    const alive = new Set(this.live().map((n) => n.port));
    const topology = parseClusterNodes(await firstAnswer([...alive], 'CLUSTER', 'NODES'));
    return topology.filter((n) => n.role === 'master' && n.slots.length && alive.has(n.port)).sort((a, b) => a.slots[0]![0] - b.slots[0]![0]);
  }

  async masterOf(key: string): Promise<ClusterNodeInfo> {
    const slot = Number(await firstAnswer(this.live().map((n) => n.port), 'CLUSTER', 'KEYSLOT', key));
    const owner = (await this.masters()).find((m) => m.slots.some(([from, to]) => slot >= from && slot <= to));
    if (!owner) throw new Error(`no live master serves slot ${slot}`);
    return owner;
  }

  async killMaster(i: number): Promise<ClusterNodeInfo> {
    const master = (await this.masters())[i];
    if (!master) throw new Error(`there is no master ${i}`);
    this.killedAt = Date.now();
    await killNode(this.nodes.find((n) => n.port === master.port)!.child);
    return master;
  }

  async waitForFailover(timeoutMs = 20_000): Promise<number> {
    await waitUntil('a replica to take over every slot of the killed master', async () => {
      const served = (await this.masters()).reduce((sum, m) => sum + m.slots.reduce((n, [from, to]) => n + to - from + 1, 0), 0);
      if (served !== 16_384) return false;
      const states = await Promise.all(this.live().map((n) => call(n.port, 'CLUSTER', 'INFO').catch(() => '')));
      return states.every((info) => String(info).includes('cluster_state:ok'));
    }, timeoutMs);
    return Date.now() - this.killedAt;
  }

  async restartNode(port: number): Promise<void> {
    const node = this.nodes.find((n) => n.port === port);
    if (!node) throw new Error(`no node on port ${port}`);
    await this.startNode(node);
    await waitUntil(`the node on ${port} to rejoin`, () => settled(this.live().map((n) => n.port)), 30_000);
  }

  async killAll(): Promise<void> {
    this.killedAt = Date.now();
    await Promise.all(this.nodes.map((node) => killNode(node.child)));
  }

  async restartAll(): Promise<void> {
    const live = this.live();
    await Promise.all(this.nodes.filter((node) => !live.includes(node)).map((node) => this.startNode(node)));
    await waitUntil('the cluster to be ok again', () => settled(this.ports), 30_000);
  }

  async dropKeys(prefix: string): Promise<void> {
    for (const master of await this.masters()) {
      const redis = connectTo(master.port);
      try {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
          cursor = next;
          // One UNLINK per key: keys of different slots cannot share a command on a cluster.
          if (keys.length) await Promise.all(keys.map((key) => redis.unlink(key)));
        } while (cursor !== '0');
      } finally {
        redis.disconnect();
      }
    }
  }

  async stop(): Promise<void> {
    process.removeListener('exit', this.killAllNow);
    await Promise.all(this.nodes.map((node) => killNode(node.child)));
    await rm(this.dir, { recursive: true, force: true });
  }

  private live(): LocalNode[] {
    return this.nodes.filter((node) => node.child && node.child.exitCode === null && node.child.signalCode === null);
  }

  private async startNode(node: LocalNode): Promise<void> {
    await mkdir(node.dir, { recursive: true });
    // Persistence off (no RDB, no AOF); nodes.conf stays, so a restarted node knows its cluster.
    // On another address than loopback, protected mode would refuse every client (no password is set).
    const bind = this.announce === '127.0.0.1' ? ['127.0.0.1'] : ['127.0.0.1', this.announce, '--protected-mode', 'no'];
    const args = ['--port', String(node.port), '--cluster-port', String(node.busPort), '--bind', ...bind, '--cluster-announce-ip', this.announce, '--cluster-enabled', 'yes'];
    args.push('--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', String(this.nodeTimeoutMs), '--dir', node.dir, '--logfile', 'redis.log');
    args.push('--cluster-require-full-coverage', this.requireFullCoverage ? 'yes' : 'no');
    args.push('--appendonly', 'no', '--save', '', '--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0', '--daemonize', 'no');
    node.child = spawn('redis-server', args, { stdio: 'ignore' });
    node.child.on('error', () => undefined);
    await writeFile(path.join(node.dir, 'redis.pid'), String(node.child.pid));
    await waitUntil(`redis-server on port ${node.port}`, async () => (await call(node.port, 'PING').catch(() => null)) === 'PONG', 10_000);
  }
}

/** Every node says cluster_state:ok and knows every other one, and every replica's link to its master is up and synced. */
async function settled(ports: number[]): Promise<boolean> {
  for (const port of ports) {
    const info = String(await call(port, 'CLUSTER', 'INFO').catch(() => ''));
    if (!info.includes('cluster_state:ok') || !info.includes(`cluster_known_nodes:${NODES}`)) return false;
    const replication = String(await call(port, 'INFO', 'replication').catch(() => ''));
    if (replication.includes('role:slave') && (!replication.includes('master_link_status:up') || replication.includes('master_sync_in_progress:1'))) return false;
  }
  return true;
}

/** CLUSTER NODES lines: `<id> <ip:port@bus> <flags> <master> <ping> <pong> <epoch> <link> <slot>…`; failed nodes left out. */
function parseClusterNodes(text: unknown): ClusterNodeInfo[] {
  return String(text)
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' '))
    .filter(([, , flags]) => !/fail|noaddr|handshake/.test(flags ?? ''))
    .map(([id, address, flags, master, , , , , ...slots]) => ({
      id: id!,
      port: Number(address!.split('@')[0]!.split(':').at(-1)),
      role: flags!.includes('master') ? ('master' as const) : ('replica' as const),
      masterId: master === '-' ? null : master!,
      slots: slots.filter((s) => !s.startsWith('[')).map((s) => (s.includes('-') ? (s.split('-').map(Number) as [number, number]) : [Number(s), Number(s)])),
    }));
}

function connectTo(port: number): Redis {
  const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 1_000 });
  redis.on('error', () => undefined);
  return redis;
}

/** One command on one node, on a connection of its own. */
async function call(port: number, command: string, ...args: string[]): Promise<unknown> {
  const redis = connectTo(port);
  try {
    return await redis.call(command, ...args);
  } finally {
    redis.disconnect();
  }
}

/** The answer of the first node (in order) that gives one. */
async function firstAnswer(ports: number[], command: string, ...args: string[]): Promise<unknown> {
  let last: unknown = new Error('no live node');
  for (const port of ports) {
    try {
      return await call(port, command, ...args);
    } catch (error) {
      last = error;
    }
  }
  throw last;
}

async function killNode(child: ChildProcess | null): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

/** `count` distinct free local ports, held together while chosen so none is handed out twice. */
async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
    }
    return servers.map((server) => (server.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** Kills the nodes of clusters whose test process is gone (a run killed before its stop()) and removes their dirs. */
async function removeStrayClusters(): Promise<void> {
  for (const entry of await readdir(tmpdir())) {
    if (!entry.startsWith(DIR_PREFIX)) continue;
    const dir = path.join(tmpdir(), entry);
    const owner = Number(await readFile(path.join(dir, 'owner.pid'), 'utf8').catch(() => '0'));
    if (owner && alive(owner)) continue;
    // No owner yet: another run may have just made it (mkdtemp, then owner.pid); only an old one is left over.
    if (!owner && Date.now() - (await stat(dir).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs < 600_000) continue;
    for (const node of await readdir(dir).catch(() => [])) {
      const pid = Number(await readFile(path.join(dir, node, 'redis.pid'), 'utf8').catch(() => '0'));
      // Only a redis-server: the pid may have been reused by another process since.
      if (pid && alive(pid) && existsSync(`/proc/${pid}/cmdline`) && (await readFile(`/proc/${pid}/cmdline`, 'utf8')).includes('redis-server')) process.kill(pid, 'SIGKILL');
    }
    await rm(dir, { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
