import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { runNode, spawnGateway, type ServerProcess } from '../helpers/process.js';
import { startTcpForwarder, type TcpForwarder } from '../helpers/tcp-forwarder.js';

/**
 * The PostgreSQL of DATABASE_URL at start: it may come up after the gateway (a compose file, a host's boot), so the
 * gateway waits for it, saying so; what waiting cannot cure, or a wait that runs out, is one line of ours and exit
 * code 2 (before: a fatal log entry with a driver's stack trace and exit code 1, at the first refused connection).
 */

const CANARY_PASSWORD = 'canary-db-password-5e1f';

let db: TestDatabase;
let forwarder: TcpForwarder | undefined;
let gateway: ServerProcess | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
}, 60_000);

afterAll(async () => {
  gateway?.child.kill('SIGTERM');
  await gateway?.exited;
  await forwarder?.close();
  await db?.drop();
});

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
    const upAfterMs = 2_500;
    setTimeout(() => forwarder!.restore(), upAfterMs);
    const started = Date.now();
    gateway = await spawnGateway({ DATABASE_URL: forwarder.urlFor(db.url), NODE_ENV: 'test', LOG_LEVEL: 'info', STATUS_PROBE_SECONDS: '0', VIDEO_WORKERS: '0' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(upAfterMs);
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
    const result = await runNode(['dist/src/main.js'], {
      DATABASE_URL: `postgresql://baikal:${CANARY_PASSWORD}@127.0.0.1:${port}/baikal`,
      DATABASE_CONNECT_TIMEOUT_SECONDS: '1.5',
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
    });
    expect(result.code, result.stdout + result.stderr).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      `baikal: PostgreSQL at postgresql://127.0.0.1:${port}/baikal did not accept a connection within 1.5 s (connect ECONNREFUSED 127.0.0.1:${port}): start it, or check DATABASE_URL; DATABASE_CONNECT_TIMEOUT_SECONDS sets how long to wait`,
    );
    expect(result.stdout).toContain('waiting for PostgreSQL');
    expect(result.stdout).not.toContain('"level":60');
    expect(result.stdout + result.stderr).not.toContain(CANARY_PASSWORD);
  }, 30_000);

  it('one that refuses us (an unknown role): one line at once with its reason, exit code 2, no wait', async () => {
    const url = new URL(db.url);
    url.username = 'no_such_role_baikal';
    url.password = CANARY_PASSWORD;
    const started = Date.now();
    const result = await runNode(['dist/src/main.js'], { DATABASE_URL: url.toString(), DATABASE_CONNECT_TIMEOUT_SECONDS: '30', NODE_ENV: 'test', LOG_LEVEL: 'info' });
    expect(result.code, result.stdout + result.stderr).toBe(2);
    expect(Date.now() - started).toBeLessThan(15_000);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^baikal: PostgreSQL at postgresql:\/\/[^ ]+ refused the connection: .*no_such_role_baikal.*; check DATABASE_URL$/);
    expect(result.stdout).not.toContain('waiting for PostgreSQL');
    expect(result.stdout + result.stderr).not.toContain(CANARY_PASSWORD);
  }, 30_000);

  it('the same for a command (npm run migrate): one line, exit code 2', async () => {
    const port = await closedPort();
    const result = await runNode(['dist/src/cli/migrate.js'], { DATABASE_URL: `postgresql://baikal@127.0.0.1:${port}/baikal`, DATABASE_CONNECT_TIMEOUT_SECONDS: '0' });
    expect(result.code, result.stdout + result.stderr).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^baikal: PostgreSQL at postgresql:\/\/127\.0\.0\.1:\d+\/baikal did not accept a connection within 0 s/)]);
  }, 30_000);
});
