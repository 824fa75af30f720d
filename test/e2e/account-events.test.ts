import { randomBytes } from 'node:crypto';
import { print, type DocumentNode } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BalanceChangedDocument,
  KeyEventsDocument,
  UsageRecordedDocument,
  type BalanceChangedSubscription,
  type KeyEventsSubscription,
  type UsageRecordedSubscription,
} from '../graphql/generated.js';
import { http } from '../helpers/clients.js';
import { ledgerBalance } from '../helpers/accounts.js';
import { apiAccount, createKey, processAdmin, requestId, setAccountLimits, setKeyLimits, startInferenceStack, type InferenceStack } from '../helpers/inference.js';
import type { ServerProcess } from '../helpers/process.js';
import { dropRedisKeys } from '../helpers/redis.js';

/**
 * Account events (issue 54): balance, usage and key events reach a graphql-ws subscriber on one process from
 * requests served by both, with sums equal to the ledger's, and the time from a response's last byte to its
 * usage event measured under 100 requests a second.
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `baikal-e2e:${randomBytes(6).toString('hex')}:`;
const MODEL = 'gen-5.6-luna';
const REQUESTS = 200;
const RATE_PER_SECOND = 100;

let stack: InferenceStack;
let b: ServerProcess;
let admin: { token: string; userId: string };

beforeAll(async () => {
  stack = await startInferenceStack({ REDIS_URL, REDIS_PREFIX: PREFIX, STATUS_PROBE_SECONDS: '0', WORKERS: '1' });
  b = await stack.spawnPeer();
  admin = await processAdmin(stack);
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await dropRedisKeys(PREFIX);
});

/** A subscription's events as they arrive (with the time each arrived), until `stop`. */
function watch<T>(client: Client, document: DocumentNode, variables: Record<string, unknown> = {}) {
  const events: { at: number; data: T }[] = [];
  const waiters = new Set<() => void>();
  const stop = client.subscribe<T>(
    { query: print(document), variables },
    {
      next: (result) => {
        if (result.errors) throw new Error(JSON.stringify(result.errors));
        events.push({ at: performance.now(), data: result.data as T });
        for (const wake of waiters) wake();
      },
      error: (error) => {
        throw error instanceof Error ? error : new Error(JSON.stringify(error));
      },
      complete: () => undefined,
    },
  );
  /** Resolves once `done(events)` holds (checked on every event), or fails after `timeoutMs`. */
  const until = (done: (all: typeof events) => boolean, timeoutMs = 20_000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!done(events)) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`only ${events.length} events within ${timeoutMs} ms`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return { events, until, stop };
}

function socket(url: string, token: string): Client {
  return createClient({ url: url.replace('http', 'ws') + '/graphql', webSocketImpl: WebSocket, connectionParams: { sessionToken: token }, retryAttempts: 0 });
}

async function chat(url: string, key: string, id: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': id },
    body: JSON.stringify({ model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'hello' }] }),
  });
  return { status: response.status, text: await response.text() };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

describe('account events across two gateway processes', () => {
  it('delivers every billed request and balance change with sums equal to the ledger, and measures the latency', async () => {
    const account = await apiAccount(stack, admin, '20');
    await setKeyLimits(stack, admin, account.keyId, { rpmLimit: 1000, concurrencyLimit: 64 });
    await setAccountLimits(stack, admin, account.userId, { concurrencyLimit: 64 });
    const client = socket(stack.url, account.token);
    try {
      const usage = watch<UsageRecordedSubscription>(client, UsageRecordedDocument);
      const balance = watch<BalanceChangedSubscription>(client, BalanceChangedDocument);
      // The first balance event is the balance now: by then the account's channel is listened on (shared by both).
      await balance.until((all) => all.length >= 1);
      const [snapshot] = balance.events;
      expect(snapshot!.data.balanceChanged.transaction).toBeNull();
      expect(snapshot!.data.balanceChanged.balanceUsd).toBe('20');

      // 200 requests at 100 a second, alternating between the processes: each one's last byte is timed.
      const lastByte = new Map<string, number>();
      const sent: Promise<void>[] = [];
      const started = performance.now();
      // At most 40 in flight (the gateway admits 48 at once): a loaded machine slows the rate instead of refusing.
      const inFlight = new Set<Promise<void>>();
      for (let i = 0; i < REQUESTS; i++) {
        const wait = started + (i * 1000) / RATE_PER_SECOND - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        while (inFlight.size >= 40) await Promise.race(inFlight);
        const id = requestId(`events-${i}`);
        const request = chat(i % 2 ? b.url : stack.url, account.key, id).then(({ status, text }) => {
          expect(status, text).toBe(200);
          lastByte.set(id, performance.now());
        });
        inFlight.add(request);
        void request.finally(() => inFlight.delete(request)).catch(() => undefined);
        sent.push(request);
      }
      await Promise.all(sent);
      await usage.until((all) => all.reduce((n, e) => n + e.data.usageRecorded.events.length, 0) >= REQUESTS);

      const received = usage.events.flatMap((e) => e.data.usageRecorded.events.map((event) => ({ event, at: e.at })));
      expect(received).toHaveLength(REQUESTS);
      expect(new Set(received.map((r) => r.event.requestId))).toEqual(new Set(lastByte.keys()));
      for (const batch of usage.events) {
        const sum = batch.data.usageRecorded.events.reduce((s, e) => s.plus(e.amountUsd), new Decimal(0));
        expect(batch.data.usageRecorded.amountUsd).toBe(sum.toFixed());
      }
      expect(received.every((r) => r.event.apiKey?.id === account.keyId && r.event.status === 'success')).toBe(true);

      // The ledger: its usage rows are exactly the balance events' rows, and their sum is the usage events' sum.
      const rows = await stack.db.query<{ id: string; amount_usd: string }>("select id, amount_usd::text from transactions where user_id = $1 and kind = 'usage'", [account.userId]);
      const ledgerSpend = rows.reduce((s, r) => s.plus(r.amount_usd), new Decimal(0));
      const usageSpend = received.reduce((s, r) => s.plus(r.event.amountUsd), new Decimal(0));
      expect(usageSpend.gt(0)).toBe(true);
      expect(usageSpend.negated().toFixed()).toBe(ledgerSpend.toFixed());
      const usageMoves = () => balance.events.map((e) => e.data.balanceChanged).filter((m) => m.transaction?.kind === 'usage');
      await balance.until(() => usageMoves().length >= rows.length);
      // (The funding's own event may come after the first one: it is announced once its commit is seen.)
      const moves = usageMoves();
      const ledgerIds = new Set(rows.map((r) => r.id));
      expect(moves.filter((m) => !ledgerIds.has(m.transaction!.id)).map((m) => m.transaction)).toEqual([]);
      expect(new Set(moves.map((m) => m.transaction!.id))).toEqual(ledgerIds);
      expect(moves.reduce((s, m) => s.plus(m.transaction!.amountUsd), new Decimal(0)).toFixed()).toBe(ledgerSpend.toFixed());
      const books = await ledgerBalance(stack, account.userId);
      expect(books.balance).toBe(books.ledger);
      // Only debits moved it: the balance after the last commit (of either process) is the lowest announced.
      const lowest = moves.reduce((a, m) => (new Decimal(m.balanceUsd).lt(a.balanceUsd) ? m : a));
      expect(new Decimal(lowest.balanceUsd).toFixed()).toBe(new Decimal(books.balance).toFixed());
      expect(new Decimal(lowest.paidUsd).plus(lowest.bonusUsd).toFixed()).toBe(new Decimal(lowest.balanceUsd).toFixed());

      const latencies = received.map((r) => r.at - lastByte.get(r.event.requestId)!).sort((x, y) => x - y);
      const p50 = percentile(latencies, 50);
      const p99 = percentile(latencies, 99);
      const rate = (REQUESTS * 1000) / (performance.now() - started);
      console.log(`[account-events] last byte -> usageRecorded over ${REQUESTS} requests at ${rate.toFixed(0)}/s (paced at ${RATE_PER_SECOND}/s) on two processes: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`);
      // Bounded by the batch interval (USAGE_FLUSH_MS, 100 ms) plus a batch's write and one Redis hop.
      expect(p99).toBeLessThan(2_000);
    } finally {
      await client.dispose();
    }
  }, 90_000);

  it('many parallel requests against a small balance: the events still add up to the ledger', async () => {
    const account = await apiAccount(stack, admin, '0.0003');
    await setKeyLimits(stack, admin, account.keyId, { rpmLimit: 1000, concurrencyLimit: 64 });
    await setAccountLimits(stack, admin, account.userId, { concurrencyLimit: 64 });
    const client = socket(b.url, account.token);
    try {
      const usage = watch<UsageRecordedSubscription>(client, UsageRecordedDocument);
      const balance = watch<BalanceChangedSubscription>(client, BalanceChangedDocument);
      await balance.until((all) => all.length >= 1);
      // 40 at once: within the gateway's 48 concurrent requests, so only the balance refuses.
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => chat(i % 2 ? b.url : stack.url, account.key, requestId(`small-${i}`))));
      const answered = results.filter((r) => r.status === 200).length;
      expect(answered).toBeGreaterThan(0);
      expect(results.filter((r) => r.status !== 200 && r.status !== 402)).toEqual([]);
      // Every request, admitted or refused, is a usage event; only the admitted ones cost.
      await usage.until((all) => all.reduce((n, e) => n + e.data.usageRecorded.events.length, 0) >= results.length);
      const events = usage.events.flatMap((e) => e.data.usageRecorded.events);
      expect(events.filter((e) => e.status === 'success')).toHaveLength(answered);
      const spent = events.reduce((sum, e) => sum.plus(e.amountUsd), new Decimal(0));
      const rows = await stack.db.query<{ amount_usd: string }>("select amount_usd::text from transactions where user_id = $1 and kind = 'usage'", [account.userId]);
      expect(spent.negated().toFixed()).toBe(rows.reduce((sum, r) => sum.plus(r.amount_usd), new Decimal(0)).toFixed());
      const books = await ledgerBalance(stack, account.userId);
      expect(books.balance).toBe(books.ledger);
      expect(books).toMatchObject({ paidMatches: true, bonusMatches: true });
      await balance.until((all) => all.some((e) => e.data.balanceChanged.transaction?.kind === 'usage' && new Decimal(e.data.balanceChanged.balanceUsd).eq(books.balance)));
    } finally {
      await client.dispose();
    }
  }, 60_000);

  it('filters usageRecorded by apiKeyId and keyEvents by keyId: only that key of the account', async () => {
    const account = await apiAccount(stack, admin, '5');
    const client = socket(stack.url, account.token);
    try {
      // The filtered streams beside unfiltered ones: the unfiltered show the other key's events were published.
      const usageOne = watch<UsageRecordedSubscription>(client, UsageRecordedDocument, { apiKeyId: account.keyId });
      const usageAll = watch<UsageRecordedSubscription>(client, UsageRecordedDocument);
      const keysOne = watch<KeyEventsSubscription>(client, KeyEventsDocument, { keyId: account.keyId });
      const keysAll = watch<KeyEventsSubscription>(client, KeyEventsDocument);
      const balance = watch<BalanceChangedSubscription>(client, BalanceChangedDocument);
      await balance.until((all) => all.length >= 1);
      const other = await createKey(stack, account.token, { label: 'other' });
      const usageOf = (w: typeof usageAll) => w.events.flatMap((e) => e.data.usageRecorded.events);

      // Both keys' requests interleaved; the first key's last request is sent once the other's are all announced,
      // so any of the other key's events that the filter let through would have come before it on the stream.
      const ids = { one: [] as string[], other: [] as string[] };
      for (let i = 0; i < 6; i++) {
        const mine = i % 3 === 0;
        const id = requestId(`filter-${i}`);
        (mine ? ids.one : ids.other).push(id);
        expect((await chat(stack.url, mine ? account.key : other.key, id)).status).toBe(200);
      }
      await usageAll.until(() => usageOf(usageAll).length >= 6);
      const marker = requestId('filter-marker');
      ids.one.push(marker);
      expect((await chat(stack.url, account.key, marker)).status).toBe(200);
      await usageOne.until(() => usageOf(usageOne).some((e) => e.requestId === marker));
      expect(usageOf(usageOne).map((e) => e.requestId).sort()).toEqual([...ids.one].sort());
      expect(usageOf(usageOne).every((e) => e.apiKey?.id === account.keyId)).toBe(true);
      for (const batch of usageOne.events) {
        expect(batch.data.usageRecorded.amountUsd).toBe(batch.data.usageRecorded.events.reduce((s, e) => s.plus(e.amountUsd), new Decimal(0)).toFixed());
      }
      await usageAll.until(() => usageOf(usageAll).length >= 7);
      expect(usageOf(usageAll).filter((e) => e.apiKey?.id === other.id).map((e) => e.requestId).sort()).toEqual([...ids.other].sort());

      // Key events: the other key refused by its limit, a third key created, the other revoked; then the first key's.
      await setKeyLimits(stack, admin, other.id, { rpmLimit: 1 });
      const otherRefused = await Promise.all(Array.from({ length: 3 }, (_, i) => chat(stack.url, other.key, requestId(`filter-rpm-other-${i}`))));
      expect(otherRefused.every((r) => r.status === 429)).toBe(true);
      await keysAll.until((all) => all.some((e) => e.data.keyEvents.type === 'LIMIT_REFUSED' && e.data.keyEvents.keyId === other.id));
      const third = await createKey(stack, account.token, { label: 'third' });
      expect((await http(stack.url, 'DELETE', `/keys/${other.id}`, { token: account.token })).status).toBeLessThan(300);
      await keysAll.until((all) => all.some((e) => e.data.keyEvents.type === 'REVOKED' && e.data.keyEvents.keyId === other.id));

      await setKeyLimits(stack, admin, account.keyId, { rpmLimit: 1 });
      const oneRefused = await Promise.all(Array.from({ length: 2 }, (_, i) => chat(stack.url, account.key, requestId(`filter-rpm-one-${i}`))));
      expect(oneRefused.every((r) => r.status === 429)).toBe(true);
      await keysOne.until((all) => all.some((e) => e.data.keyEvents.type === 'LIMIT_REFUSED'));
      expect((await http(stack.url, 'DELETE', `/keys/${account.keyId}`, { token: account.token })).status).toBeLessThan(300);
      await keysOne.until((all) => all.some((e) => e.data.keyEvents.type === 'REVOKED'));
      expect(keysOne.events.map((e) => [e.data.keyEvents.type, e.data.keyEvents.keyId])).toEqual([
        ['LIMIT_REFUSED', account.keyId],
        ['REVOKED', account.keyId],
      ]);
      await keysAll.until((all) => all.filter((e) => e.data.keyEvents.keyId === account.keyId).length >= 2);
      expect(keysAll.events.map((e) => [e.data.keyEvents.type, e.data.keyEvents.keyId])).toEqual([
        ['CREATED', other.id],
        ['LIMIT_REFUSED', other.id],
        ['CREATED', third.id],
        ['REVOKED', other.id],
        ['LIMIT_REFUSED', account.keyId],
        ['REVOKED', account.keyId],
      ]);
      // The first key's refused requests are its usage too, and still only its own.
      expect(usageOf(usageOne).every((e) => e.apiKey?.id === account.keyId)).toBe(true);
    } finally {
      await client.dispose();
    }
  }, 60_000);

  it('refuses the account subscriptions to an anonymous socket, in our words', async () => {
    const client = createClient({ url: stack.url.replace('http', 'ws') + '/graphql', webSocketImpl: WebSocket, retryAttempts: 0 });
    try {
      for (const document of [BalanceChangedDocument, UsageRecordedDocument, KeyEventsDocument]) {
        const outcome = await new Promise<unknown>((resolve) => {
          client.subscribe({ query: print(document) }, { next: (result) => resolve(result.errors), error: resolve, complete: () => resolve('completed') });
        });
        expect(JSON.stringify(outcome), JSON.stringify(outcome)).toContain("UNAUTHENTICATED");
      }
    } finally {
      await client.dispose();
    }
  });

  it('tells the subscriber of keys created and revoked on another process, a limit refusing and the monthly cap', async () => {
    const account = await apiAccount(stack, admin, '5');
    const client = socket(stack.url, account.token);
    try {
      const keys = watch<KeyEventsSubscription>(client, KeyEventsDocument);
      const balance = watch<BalanceChangedSubscription>(client, BalanceChangedDocument);
      await balance.until((all) => all.length >= 1);
      const created = await createKey({ url: b.url }, account.token, { label: 'second' });
      const revoked = await http(b.url, 'DELETE', `/keys/${created.id}`, { token: account.token });
      expect(revoked.status).toBeLessThan(300);
      await keys.until((all) => all.some((e) => e.data.keyEvents.type === 'REVOKED'));
      expect(keys.events.map((e) => [e.data.keyEvents.type, e.data.keyEvents.keyId])).toEqual([
        ['CREATED', created.id],
        ['REVOKED', created.id],
      ]);

      await setKeyLimits(stack, admin, account.keyId, { rpmLimit: 2 });
      const statuses = await Promise.all(Array.from({ length: 5 }, (_, i) => chat(b.url, account.key, requestId(`rpm-${i}`))));
      expect(statuses.filter((s) => s.status === 429)).toHaveLength(3);
      await keys.until((all) => all.some((e) => e.data.keyEvents.type === 'LIMIT_REFUSED'));
      const refused = keys.events.find((e) => e.data.keyEvents.type === 'LIMIT_REFUSED')!.data.keyEvents;
      expect(refused).toMatchObject({ keyId: account.keyId, limit: 'requests_per_minute', refused: 3 });

      await setKeyLimits(stack, admin, account.keyId, { rpmLimit: 100, monthlySpendCap: '0.000001' });
      expect((await chat(stack.url, account.key, requestId('cap'))).status).toBe(402);
      await keys.until((all) => all.some((e) => e.data.keyEvents.type === 'MONTHLY_CAP_REACHED'));
      expect(keys.events.find((e) => e.data.keyEvents.type === 'MONTHLY_CAP_REACHED')!.data.keyEvents).toMatchObject({ keyId: account.keyId, limit: 'monthly_spend_cap', refused: 1 });
    } finally {
      await client.dispose();
    }
  }, 60_000);
});
