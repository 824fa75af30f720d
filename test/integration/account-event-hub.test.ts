import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { AccountEventHub, type AccountEvent, type AccountEventStream, type KeyEvent } from '../../src/events/account-event-hub.js';
import { LimitRefusals } from '../../src/events/limit-refusals.js';
import { createLogger } from '../../src/shared/logging.js';
import { SharedState } from '../../src/shared/redis.js';

/** The account event hub over a real Redis: two "processes" (two SharedStates on one prefix), one hub each. */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const log = createLogger('silent');
const opened: SharedState[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((state) => state.close()));
});

async function hubs(count: number): Promise<{ hubs: AccountEventHub[]; prefix: string }> {
  const prefix = `baikal-test:events:${randomBytes(6).toString('hex')}:`;
  const out: AccountEventHub[] = [];
  for (let i = 0; i < count; i++) {
    const shared = new SharedState(REDIS_URL, log, prefix);
    await shared.connect();
    opened.push(shared);
    out.push(new AccountEventHub({ shared, log }));
  }
  return { hubs: out, prefix };
}

const keyEvent = (keyId: string): KeyEvent => ({ kind: 'key', type: 'created', keyId, limit: null, refused: null, at: new Date('2026-11-28T10:00:00.000Z') });

/** Collects what a stream yields for `ms` after the last published event. */
async function drain(stream: AccountEventStream, ms = 150): Promise<AccountEvent[]> {
  const got: AccountEvent[] = [];
  for (;;) {
    const next = await Promise.race([stream.next(), new Promise<null>((resolve) => setTimeout(() => resolve(null), ms))]);
    if (!next || next.done) return got;
    got.push(next.value);
  }
}

describe('account event hub', () => {
  it('delivers an event to subscribers in every process exactly once, with its dates, and to no other account', async () => {
    const { hubs: [a, b] } = await hubs(2);
    const user = randomUUID();
    const other = randomUUID();
    const onA = a!.subscribe(user);
    const onB = b!.subscribe(user);
    const otherOnB = b!.subscribe(other);
    await Promise.all([onA.ready, onB.ready, otherOnB.ready]);
    a!.publish(user, keyEvent('k1'));
    b!.publish(user, keyEvent('k2'));
    const [gotA, gotB, gotOther] = await Promise.all([drain(onA), drain(onB), drain(otherOnB)]);
    expect(gotA.map((e) => (e as KeyEvent).keyId).sort()).toEqual(['k1', 'k2']);
    expect(gotB.map((e) => (e as KeyEvent).keyId).sort()).toEqual(['k1', 'k2']);
    expect(gotOther).toEqual([]);
    expect((gotB.find((e) => (e as KeyEvent).keyId === 'k1') as KeyEvent).at).toEqual(new Date('2026-11-28T10:00:00.000Z'));
    await Promise.all([onA.return(), onB.return(), otherOnB.return()]);
  });

  it('listens on an account channel only while someone in the process watches it, and builds no event for nobody', async () => {
    const { hubs: [a], prefix } = await hubs(1);
    const user = randomUUID();
    const redis = new Redis(REDIS_URL);
    try {
      const channel = `${prefix}account:${user}`;
      const subscribers = async () => ((await redis.pubsub('NUMSUB', channel)) as [string, number])[1];
      const first = a!.subscribe(user);
      const second = a!.subscribe(user);
      await first.ready;
      expect(await subscribers()).toBe(1);
      expect(a!.watched(user)).toBe(true);
      await first.return();
      expect(await subscribers()).toBe(1);
      await second.return();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await subscribers()).toBe(0);
      expect(a!.watched(user)).toBe(false);

      // Without Redis and without a local subscriber, a producer's JSON is never built.
      const alone = new AccountEventHub({ log });
      let built = 0;
      alone.publishJson(user, 'usage', () => {
        built++;
        return '{"kind":"usage","records":[]}';
      });
      expect(built).toBe(0);
      const heard: string[] = [];
      alone.onPublished((userId, kind) => heard.push(`${userId}:${kind}`));
      alone.publishJson(user, 'usage', () => '{}');
      expect(heard).toEqual([`${user}:usage`]);
    } finally {
      await redis.quit();
    }
  });

  it('keeps a slow subscriber to the newest 256 events and ends its stream on return', async () => {
    const alone = new AccountEventHub({ log });
    const user = randomUUID();
    const stream = alone.subscribe(user);
    for (let i = 0; i < 300; i++) alone.publish(user, keyEvent(`k${i}`));
    const got = await drain(stream, 20);
    expect(got).toHaveLength(256);
    expect((got[0] as KeyEvent).keyId).toBe('k44');
    const pending = stream.next();
    await stream.return();
    expect((await pending).done).toBe(true);
  });

  it('coalesces a key’s refusals by one limit into one event a second, naming the limit', async () => {
    const sent: KeyEvent[] = [];
    const refusals = new LimitRefusals((_userId, event) => sent.push(event));
    for (let i = 0; i < 5; i++) refusals.note('u1', 'k1', 'rate_limited');
    refusals.note('u1', 'k1', 'account_concurrency_limited');
    refusals.note('u1', 'k1', 'insufficient_balance'); // not a limit: no event
    refusals.flush();
    expect(sent.map(({ keyId, limit, refused, type }) => ({ keyId, limit, refused, type }))).toEqual([
      { keyId: 'k1', limit: 'requests_per_minute', refused: 5, type: 'limit_refused' },
      { keyId: 'k1', limit: 'account_concurrency', refused: 1, type: 'limit_refused' },
    ]);
  });
});
