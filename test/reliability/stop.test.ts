import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../helpers/clients.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { spawnGateway } from '../helpers/process.js';

/**
 * Issue 22, item 9: stopping must not depend on who reads the log. With its stdout and stderr readers gone
 * (a log pipe closed), SIGTERM left the process running past the grace period. A stop now always ends
 * within SHUTDOWN_GRACE_SECONDS plus a small margin, with one worker or several, with requests in flight.
 */
const GRACE_SECONDS = 2;
const MARGIN_MS = 4_000;

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

/**
 * `closed`: the reader closed its end (writes fail with EPIPE). `stalled`: the reader is alive but stopped
 * reading (the pipe fills, and a blocking log write would hold the process forever).
 */
async function stopsInTime(reader: 'closed' | 'stalled', env: Record<string, string>) {
  const gateway = await spawnGateway({ DATABASE_URL: db.url, SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS), STATUS_PROBE_SECONDS: '0', VIDEO_WORKERS: '0', ...env });
  for (const pipe of [gateway.child.stdout!, gateway.child.stderr!]) {
    if (reader === 'closed') pipe.destroy();
    else {
      pipe.removeAllListeners('data');
      pipe.pause();
    }
  }
  // Requests keep writing log lines (one per request, ~250 bytes): past any pipe buffer (64 KiB).
  for (let i = 0; i < 600; i++) {
    const answered = await Promise.race([http(gateway.url, 'GET', '/auth/me').then((r) => r.status), new Promise<'no answer'>((resolve) => setTimeout(() => resolve('no answer'), 2_000))]);
    if (answered === 'no answer') break; // the process is stuck on its log already
  }
  // A slow request in flight (a registration hashes a password) and more log lines while it drains.
  const inFlight = http(gateway.url, 'POST', '/auth/register', { body: { username: `stop_${randomBytes(4).toString('hex')}`, email: `stop-${randomBytes(4).toString('hex')}@example.com`, password: 'correct horse battery' } }).catch(() => null);
  const started = Date.now();
  gateway.child.kill('SIGTERM');
  const code = await Promise.race([gateway.exited, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), GRACE_SECONDS * 1000 + MARGIN_MS))]);
  const took = Date.now() - started;
  if (code === 'still running') gateway.child.kill('SIGKILL');
  await inFlight;
  return { code, took };
}

describe('SIGTERM with nobody reading the log', () => {
  const clustered = () => ({ WORKERS: '2', REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: `test-stop-${randomBytes(4).toString('hex')}:` });
  it.each([
    { reader: 'closed' as const, workers: 1 },
    { reader: 'stalled' as const, workers: 1 },
    { reader: 'closed' as const, workers: 2 },
    { reader: 'stalled' as const, workers: 2 },
  ])('log reader $reader, WORKERS=$workers: the process exits within the grace period plus a margin', async ({ reader, workers }) => {
    const { code, took } = await stopsInTime(reader, workers > 1 ? clustered() : {});
    expect({ code, withinMs: GRACE_SECONDS * 1000 + MARGIN_MS }).toEqual({ code: expect.any(Number), withinMs: GRACE_SECONDS * 1000 + MARGIN_MS });
    expect(took).toBeLessThan(GRACE_SECONDS * 1000 + MARGIN_MS);
  }, 60_000);
});
