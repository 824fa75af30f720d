import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { runNode, spawnGateway, type ServerProcess } from '../helpers/process.js';
import { startTcpForwarder, type TcpForwarder } from '../helpers/tcp-forwarder.js';

/**
 * Starts an operator must fix, each one line of ours and exit code 2 (before: a fatal log entry with a stack trace
 * and exit code 1; with WORKERS=2, workers restarted every second for ever). The PostgreSQL of DATABASE_URL may come
 * up after the gateway (a compose file, a host's boot), so the gateway waits for it, saying so.
 */

const CANARY_PASSWORD = 'canary-db-password-5e1f';

let db: TestDatabase;
let forwarder: TcpForwarder | undefined;
let gateway: ServerProcess | undefined;
let busy: Server | undefined;
/** The first gateway's DATA_DIR, where the demo account's credentials are written. */
let dataDir: string;
const otherDataDir = path.join(tmpdir(), `baikal-start-${process.pid}-other`);

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await mkdtemp(path.join(tmpdir(), 'baikal-start-'));
}, 60_000);

afterAll(async () => {
  gateway?.child.kill('SIGTERM');
  await gateway?.exited;
  await forwarder?.close();
  busy?.close();
  await db?.drop();
  for (const dir of [dataDir, otherDataDir]) if (dir) await rm(dir, { recursive: true, force: true });
});

/** Runs the gateway to its exit (killed if it starts after all) and returns its stderr's lines, checking the exit code is 2 and nothing fatal was logged. */
async function failedStart(env: Record<string, string | undefined>): Promise<{ lines: string[]; output: string }> {
  const result = await runNode(['dist/src/main.js'], { NODE_ENV: 'test', LOG_LEVEL: 'info', DATA_DIR: dataDir, STATUS_PROBE_SECONDS: '0', HOST: '127.0.0.1', PORT: '0', ...env }, 40_000);
  expect(result.code, result.stdout + result.stderr).toBe(2);
  expect(result.stdout).not.toContain('"level":60');
  expect(result.stderr).not.toContain('    at ');
  return { lines: result.stderr.trim().split('\n'), output: result.stdout + result.stderr };
}

/** A local port nobody listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('the database at start', () => {
  it('a PostgreSQL that comes up while the gateway starts: it waits, says so, and serves once it is up', async () => {
    // Down at first: every connection is reset, as by a server not yet listening behind a proxy.
    forwarder = await startTcpForwarder({ host: new URL(db.url).hostname, port: Number(new URL(db.url).port || 5432) }, { cut: 'reset' });
    // It comes up once the gateway has been turned away three times, however long the gateway took to load (a
    // fixed delay raced a slow start: PostgreSQL was up before the first attempt, and nothing was waited for).
    const refusedAttempts = 3;
    const comingUp = setInterval(() => {
      if (forwarder!.accepted < refusedAttempts) return;
      forwarder!.restore();
      clearInterval(comingUp);
    }, 20);
    // In demo mode (development, no upstreams), so that it also makes the demo account the last test needs.
    gateway = await spawnGateway({ DATABASE_URL: forwarder.urlFor(db.url), DATA_DIR: dataDir, NODE_ENV: 'development', LOG_LEVEL: 'info', STATUS_PROBE_SECONDS: '0', VIDEO_WORKERS: '0' }).finally(() => clearInterval(comingUp));
    expect(forwarder.accepted).toBeGreaterThan(refusedAttempts);
    const waiting = gateway.lines.filter((line) => line.includes('waiting for PostgreSQL'));
    expect(waiting.length).toBeGreaterThanOrEqual(1);
    expect(waiting[0]).toContain(`127.0.0.1:${forwarder.port}`);
    expect(gateway.lines.some((line) => line.includes('is up') && line.includes('"attempts"'))).toBe(true);
    const ready = await fetch(`${gateway.url}/ready`);
    expect(ready.status).toBe(200);
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    gateway = undefined;
  }, 60_000);

  it('one that never answers: one line naming the server and the wait, exit code 2, no password', async () => {
    const port = await closedPort();
    const started = Date.now();
    const { lines, output } = await failedStart({ DATABASE_URL: `postgresql://baikal:${CANARY_PASSWORD}@127.0.0.1:${port}/baikal`, DATABASE_CONNECT_TIMEOUT_SECONDS: '1.5' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
    expect(lines).toEqual([
      `baikal: PostgreSQL at postgresql://127.0.0.1:${port}/baikal did not accept a connection within 1.5 s (connect ECONNREFUSED 127.0.0.1:${port}): start it, or check DATABASE_URL; DATABASE_CONNECT_TIMEOUT_SECONDS sets how long to wait`,
    ]);
    expect(output).toContain('waiting for PostgreSQL');
    expect(output).not.toContain(CANARY_PASSWORD);
  }, 30_000);

  it('one that refuses us (an unknown role): one line at once with its reason, exit code 2, no wait', async () => {
    const url = new URL(db.url);
    url.username = 'no_such_role_baikal';
    url.password = CANARY_PASSWORD;
    const started = Date.now();
    const { lines, output } = await failedStart({ DATABASE_URL: url.toString(), DATABASE_CONNECT_TIMEOUT_SECONDS: '30' });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(lines).toEqual([expect.stringMatching(/^baikal: PostgreSQL at postgresql:\/\/[^ ]+ refused the connection: .*no_such_role_baikal.*; check DATABASE_URL$/)]);
    expect(output).not.toContain('waiting for PostgreSQL');
    expect(output).not.toContain(CANARY_PASSWORD);
  }, 30_000);

  it('the same for a command (npm run migrate): one line, exit code 2', async () => {
    const port = await closedPort();
    const result = await runNode(['dist/src/cli/migrate.js'], { DATABASE_URL: `postgresql://baikal@127.0.0.1:${port}/baikal`, DATABASE_CONNECT_TIMEOUT_SECONDS: '0' });
    expect(result.code, result.stdout + result.stderr).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^baikal: PostgreSQL at postgresql:\/\/127\.0\.0\.1:\d+\/baikal did not accept a connection within 0 s/)]);
  }, 30_000);
});

describe('the port and the demo account at start', () => {
  const taken = async () => {
    busy = createServer();
    return new Promise<number>((resolve) => busy!.listen(0, '127.0.0.1', () => resolve((busy!.address() as { port: number }).port)));
  };

  it('a port already in use: one line naming it, exit code 2, no WebSocket server stack', async () => {
    const port = await taken();
    const { lines } = await failedStart({ DATABASE_URL: db.url, HOST: '127.0.0.1', PORT: String(port) });
    expect(lines).toEqual([`baikal: cannot listen on 127.0.0.1:${port}: the port is already in use (another gateway?); stop what holds it, or set PORT`]);
  }, 60_000);

  it('the same with WORKERS=2: the cluster stops with exit code 2 instead of restarting workers every second', async () => {
    const port = busy ? (busy.address() as { port: number }).port : await taken();
    const started = Date.now();
    const { lines, output } = await failedStart({ DATABASE_URL: db.url, HOST: '127.0.0.1', PORT: String(port), WORKERS: '2', REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: `baikal-start-${process.pid}:` });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(lines.filter((line) => line.startsWith('baikal: '))[0]).toBe(`baikal: cannot listen on 127.0.0.1:${port}: the port is already in use (another gateway?); stop what holds it, or set PORT`);
    expect(output).toContain('a worker could not start');
    expect(output).not.toContain('worker died: starting a new one');
  }, 60_000);

  it('a catalog file that is not JSON, or not a catalog, on a database without one: one line naming the file, exit 2', async () => {
    const fresh = await createTestDatabase();
    try {
      const broken = path.join(dataDir, 'broken-catalog.json');
      await writeFile(broken, '{"version": 1, ');
      const unreadable = await failedStart({ DATABASE_URL: fresh.url, BAIKAL_CATALOG: broken });
      expect(unreadable.lines).toEqual([expect.stringMatching(/^baikal: BAIKAL_CATALOG: cannot read .*broken-catalog\.json: .*JSON/)]);
      const wrong = path.join(dataDir, 'wrong-catalog.json');
      await writeFile(wrong, JSON.stringify({ version: 1, models: [{ id: 1 }] }));
      const invalid = await failedStart({ DATABASE_URL: fresh.url, BAIKAL_CATALOG: wrong });
      expect(invalid.lines).toEqual([expect.stringMatching(/^baikal: BAIKAL_CATALOG: Invalid catalog \(.*wrong-catalog\.json\): /)]);
    } finally {
      await fresh.drop();
    }
  }, 90_000);

  it('a demo account whose credentials file is elsewhere (another DATA_DIR): one line saying what to do', async () => {
    // The first test's gateway made the demo account in this database, its credentials in dataDir.
    const { lines } = await failedStart({ DATABASE_URL: db.url, DATA_DIR: otherDataDir, NODE_ENV: 'development' });
    expect(lines).toEqual([expect.stringMatching(/^baikal: the demo account exists but .*demo-credentials\.json is missing or stale .*restore the file, or remove the "demo" account$/)]);
  }, 60_000);
});
