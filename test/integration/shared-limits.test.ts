import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SharedWallets } from '../../src/billing/shared-wallets.js';
import { loadConfig } from '../../src/config.js';
import { migrate, openDatabase, type Database } from '../../src/db/database.js';
import { SharedLimiter } from '../../src/inference/shared-limits.js';
import type { Slot } from '../../src/inference/limits.js';
import { DomainError } from '../../src/shared/errors.js';
import { createLogger } from '../../src/shared/logging.js';
import { SharedState } from '../../src/shared/redis.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startTcpForwarder } from '../helpers/tcp-forwarder.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const none = { rpmLimit: null, concurrencyLimit: null };
/** A key of its own account (the per-account limit is tested on its own). */
const subject = (keyId: string, overrides: { rpmLimit: number | null; concurrencyLimit: number | null }) => ({ keyId, userId: `account-of-${keyId}`, accountConcurrencyLimit: null, ...overrides });
/**
 * Window tests send requests in waves of 6: each slot is released as soon as it is granted, so
 * neither the per-key (8) nor the global (48) concurrency limit takes part.
 */
async function inWaves(total: number, attempt: (i: number) => Promise<Slot>): Promise<string[]> {
  const verdicts: string[] = [];
  for (let i = 0; i < total; i += 6) verdicts.push(...(await Promise.all(Array.from({ length: Math.min(6, total - i) }, (_, j) => reasonOf(attempt(i + j))))));
  return verdicts;
}
const log = createLogger('silent');

// The limiter's slots are balance holds (src/billing/shared-wallets.ts), whose epochs PostgreSQL witnesses.
let db: TestDatabase;
let database: Database;
beforeAll(async () => {
  db = await createTestDatabase();
  database = await openDatabase(loadConfig({ DATABASE_URL: db.url, NODE_ENV: 'test', LOG_LEVEL: 'silent' }), log);
  await migrate(database.orm, log);
}, 60_000);
afterAll(async () => {
  await database?.close();
  await db?.drop();
});

/** A limiter on a connection, as one process has it. */
function limiterOn(state: SharedState, leaseMs: number): SharedLimiter {
  return new SharedLimiter(state, new SharedWallets({ orm: database.orm, shared: state, log, leaseMs }), log, { leaseMs });
}

/** Two "processes" (two connections, two limiters) on one Redis, under a prefix of their own. */
const opened: { states: SharedState[]; limiters: SharedLimiter[]; prefix: string }[] = [];
async function pair(leaseMs = 15_000) {
  const prefix = `baikal-test:${randomBytes(6).toString('hex')}:`;
  const states = [new SharedState(REDIS_URL, log, prefix), new SharedState(REDIS_URL, log, prefix)];
  await Promise.all(states.map((s) => s.connect()));
  const limiters = states.map((s) => limiterOn(s, leaseMs));
  opened.push({ states, limiters, prefix });
  return { a: limiters[0]!, b: limiters[1]!, states, prefix };
}

async function reasonOf(attempt: Promise<Slot>): Promise<string> {
  try {
    (await attempt).release();
    return 'admitted';
  } catch (error) {
    if (error instanceof DomainError) return String(error.reason);
    throw error;
  }
}

afterEach(async () => {
  for (const { states, limiters, prefix } of opened.splice(0)) {
    for (const limiter of limiters) limiter.close();
    const live = states.find((s) => s.healthy)!;
    const keys = await live.command.keys(`${prefix}*`);
    if (keys.length) await live.command.del(...keys);
    await Promise.all(states.map((s) => s.close()));
  }
});

describe('limits shared through Redis', () => {
  it('admits exactly 120 of 300 requests in a minute on one key spread over two processes', async () => {
    const { a, b } = await pair();
    const verdicts = await inWaves(300, (i) => (i % 2 ? a : b).acquire(subject('key-1', none)));
    expect(verdicts.filter((v) => v === 'admitted')).toHaveLength(120);
    expect(verdicts.filter((v) => v === 'rate_limited')).toHaveLength(180);
    // Another key has a window of its own.
    expect(await reasonOf(a.acquire(subject('key-2', none)))).toBe('admitted');
  });

  it('holds an account to 16 in flight across its keys and both processes (issue 22), renewing and freeing its slots', async () => {
    const { a, b } = await pair();
    const held: Slot[] = [];
    const refusals: string[] = [];
    for (let key = 0; key < 6; key++) {
      for (let i = 0; i < 8; i++) {
        const verdict = (i % 2 ? a : b).acquire({ keyId: `greedy-${key}`, userId: 'greedy', accountConcurrencyLimit: null, ...none });
        await verdict.then((slot) => held.push(slot), (error: DomainError) => refusals.push(String(error.reason)));
      }
    }
    expect(held).toHaveLength(16);
    expect(new Set(refusals)).toEqual(new Set(['account_concurrency_limited']));
    expect(await reasonOf(a.acquire(subject('someone-else', none)))).toBe('admitted');
    held.pop()!.release();
    await new Promise((resolve) => setTimeout(resolve, 50)); // the release travels to Redis
    expect(await reasonOf(b.acquire({ keyId: 'greedy-9', userId: 'greedy', accountConcurrencyLimit: null, ...none }))).toBe('admitted');
    for (const slot of held) slot.release();
  });

  it('holds 8 concurrent per key and 48 overall across both processes, and frees released slots', async () => {
    const { a, b } = await pair();
    const held: Slot[] = [];
    for (let i = 0; i < 8; i++) held.push(await (i % 2 ? a : b).acquire(subject('busy', none)));
    expect(await reasonOf(a.acquire(subject('busy', none)))).toBe('concurrency_limited');
    expect(await reasonOf(b.acquire(subject('busy', none)))).toBe('concurrency_limited');
    for (let key = 0; key < 5; key++) for (let i = 0; i < 8; i++) held.push(await (i % 2 ? a : b).acquire(subject(`other-${key}`, none)));
    expect(a.inFlightTotal + b.inFlightTotal).toBe(48);
    expect(await reasonOf(b.acquire(subject('fresh', none)))).toBe('capacity_limited');
    held.pop()!.release();
    await new Promise((resolve) => setTimeout(resolve, 50)); // the release travels to Redis
    expect(await reasonOf(a.acquire(subject('fresh', none)))).toBe('admitted');
    for (const slot of held) slot.release();
  });

  it('a key’s own limits override the baselines', async () => {
    const { a, b } = await pair();
    const verdicts = await Promise.all(Array.from({ length: 10 }, (_, i) => reasonOf((i % 2 ? a : b).acquire(subject('small', { rpmLimit: 3, concurrencyLimit: null })))));
    expect(verdicts.filter((v) => v === 'admitted')).toHaveLength(3);
    const first = await a.acquire(subject('one-at-a-time', { rpmLimit: null, concurrencyLimit: 1 }));
    expect(await reasonOf(b.acquire(subject('one-at-a-time', { rpmLimit: null, concurrencyLimit: 1 })))).toBe('concurrency_limited');
    first.release();
  });

  it('slots of a process that stops renewing (died) expire after their lease; live ones are renewed', async () => {
    const { a, b, states } = await pair(600);
    for (let i = 0; i < 8; i++) await a.acquire(subject('leased', none));
    const alive = await b.acquire(subject('renewed', { rpmLimit: null, concurrencyLimit: 1 }));
    // "Kill" process a: it stops renewing and never releases.
    a.close();
    await states[0]!.close();
    expect(await reasonOf(b.acquire(subject('leased', none)))).toBe('concurrency_limited');
    await new Promise((resolve) => setTimeout(resolve, 900));
    expect(await reasonOf(b.acquire(subject('leased', none)))).toBe('admitted');
    // b's own slot outlived its lease because b renews it.
    expect(await reasonOf(b.acquire(subject('renewed', { rpmLimit: null, concurrencyLimit: 1 })))).toBe('concurrency_limited');
    alive.release();
  });

  it('falls back to per-process limits while Redis is unreachable, and says so', async () => {
    const state = new SharedState('redis://127.0.0.1:1', log, 'baikal-test:down:');
    await expect(state.connect()).rejects.toThrow();
    const limiter = limiterOn(state, 1_000);
    try {
      expect(state.healthy).toBe(false);
      const verdicts = await inWaves(130, () => limiter.acquire(subject('k', none)));
      expect(verdicts.filter((v) => v === 'admitted')).toHaveLength(120);
      const held = await Promise.all(Array.from({ length: 8 }, () => limiter.acquire(subject('c', none))));
      expect(await reasonOf(limiter.acquire(subject('c', none)))).toBe('concurrency_limited');
      expect(limiter.inFlightTotal).toBe(8);
      for (const slot of held) slot.release();
      expect(limiter.inFlightTotal).toBe(0);
    } finally {
      limiter.close();
      await state.close();
    }
  });

  it('a process that started while Redis was away joins the shared limits and the bus once it is back', async () => {
    // "Redis" behind a forwarder that resets every connection until it is restored.
    const forwarder = await startTcpForwarder({ port: Number(new URL(REDIS_URL).port || 6379), host: new URL(REDIS_URL).hostname }, { cut: 'reset' });
    const prefix = `baikal-test:${randomBytes(6).toString('hex')}:`;
    const late = new SharedState(forwarder.urlFor(REDIS_URL), log, prefix);
    await expect(late.connect()).rejects.toThrow();
    const lateLimiter = limiterOn(late, 15_000);
    const other = new SharedState(REDIS_URL, log, prefix);
    await other.connect();
    const otherLimiter = limiterOn(other, 15_000);
    opened.push({ states: [other, late], limiters: [lateLimiter, otherLimiter], prefix });

    // Meanwhile it limits on its own: 8 here do not count against the shared slots.
    const local = await Promise.all(Array.from({ length: 8 }, () => lateLimiter.acquire(subject('k', none))));
    expect(await reasonOf(otherLimiter.acquire(subject('k', none)))).toBe('admitted');
    for (const slot of local) slot.release();

    forwarder.restore();
    try {
      for (let tries = 0; !late.healthy; tries++) {
        if (tries > 100) throw new Error('never reconnected');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const heard: string[] = [];
      late.onMessage((message) => message.type === 'key-evicted' && heard.push(message.keyId));
      await new Promise((resolve) => setTimeout(resolve, 300)); // the queued subscription goes out
      await other.publish({ type: 'key-evicted', keyId: 'revoked-elsewhere' });
      for (let tries = 0; !heard.length && tries < 40; tries++) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(heard).toEqual(['revoked-elsewhere']);
      // And its admissions count against the shared limits again.
      const shared = await Promise.all(Array.from({ length: 8 }, () => lateLimiter.acquire(subject('k2', none))));
      expect(await reasonOf(otherLimiter.acquire(subject('k2', none)))).toBe('concurrency_limited');
      for (const slot of shared) slot.release();
    } finally {
      await late.close();
      await forwarder.close();
    }
  });
});
