import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { waitFor } from './reliability.js';

/**
 * A redis-server of a test's own (the machine's is shared: it may not be restarted or flushed), on a free
 * port, in a temp directory, with no persistence, so `restartEmpty()` is what a restart without persistence
 * or a failover to an empty replica does to the gateway: the same address, no data.
 */
export interface OwnRedis {
  url: string;
  port: number;
  /** Stops the server at once (SIGKILL: no save, no goodbye to clients) and starts it again, empty, on the same port. */
  restartEmpty(): Promise<void>;
  /** Times the server was (re)started, the first start included. */
  readonly starts: number;
  close(): Promise<void>;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const dir = await mkdtemp(path.join(tmpdir(), 'baikal-redis-'));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess;
  let starts = 0;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--loglevel', 'warning'], { stdio: 'ignore' });
    starts += 1;
    await waitFor(`redis-server on port ${port}`, async () => {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode} (port ${port} taken?)`);
      const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined);
      try {
        return (await probe.connect().then(() => probe.ping(), () => null)) === 'PONG';
      } finally {
        probe.disconnect();
      }
    }, 10_000, 50);
  };
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url,
    port,
    restartEmpty: async () => {
      await stop();
      await start();
    },
    get starts() {
      return starts;
    },
    close: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
