import { connect } from 'node:net';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerBalance } from '../helpers/accounts.js';
import { http } from '../helpers/clients.js';
import { apiAccount, createKey, processAdmin, requestId, setKeyLimits, startInferenceStack, usageEventOf, type InferenceStack } from '../helpers/inference.js';

/**
 * Issue 22, item 3: one account could take the whole gateway (6 keys x 8 streams filled the 48 global
 * slots; everyone else got 429 for as long as the streams lasted), and a stream nobody reads held its
 * slot indefinitely. Now an account has at most ACCOUNT_CONCURRENCY_LIMIT (16) requests in flight across
 * its keys, and a client that accepts no bytes for STREAM_WRITE_TIMEOUT_SECONDS is cut, billed for what
 * was delivered, its slot freed. SPEC.md's per-key (8) and global (48) limits are unchanged.
 */
const WRITE_TIMEOUT_SECONDS = 1.5;

let stack: InferenceStack;
let admin: { token: string; userId: string };

beforeAll(async () => {
  stack = await startInferenceStack({ STREAM_WRITE_TIMEOUT_SECONDS: String(WRITE_TIMEOUT_SECONDS), STATUS_PROBE_SECONDS: '0' });
  admin = await processAdmin(stack);
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

/** Opens a long stream; resolves with its status once the headers arrive (the body keeps coming until aborted). */
async function openStream(key: string, controller: AbortController): Promise<{ status: number; code?: string }> {
  const response = await fetch(`${stack.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gen-5.6-luna', stream: true, messages: [{ role: 'user', content: 'a long one [sim:words=600 chunk-delay=50]' }] }),
    signal: controller.signal,
  });
  if (response.status !== 200) return { status: response.status, code: ((await response.json()) as { error?: { code?: string } }).error?.code };
  return { status: 200 };
}

describe('per-account concurrency', () => {
  it('6 keys x 8 streams of one account: 16 run, the other 32 are 429 account_concurrency_limited; another account is served meanwhile', async () => {
    const greedy = await apiAccount(stack, admin, '20');
    const keys = [greedy.key];
    for (let i = 1; i < 6; i++) keys.push((await createKey(stack, greedy.token)).key);
    const controller = new AbortController();
    try {
      const opened = await Promise.all(keys.flatMap((key) => Array.from({ length: 8 }, () => openStream(key, controller))));
      expect(opened.filter((o) => o.status === 200)).toHaveLength(16);
      const refused = opened.filter((o) => o.status !== 200);
      expect(refused).toHaveLength(32);
      expect(new Set(refused.map((o) => `${o.status} ${o.code}`))).toEqual(new Set(['429 account_concurrency_limited']));

      // Everyone else still has the remaining 32 global slots.
      const other = await apiAccount(stack, admin, '1');
      const served = await http(stack.url, 'POST', '/v1/chat/completions', { token: other.key, body: { model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi [sim:words=3]' }] } });
      expect(served.status, served.text).toBe(200);
    } finally {
      controller.abort();
    }
  }, 60_000);

  it('an admin raises one account’s limit: its keys carry the new limit at once', async () => {
    const partner = await apiAccount(stack, admin, '20');
    const keys = [partner.key, (await createKey(stack, partner.token)).key, (await createKey(stack, partner.token)).key];
    const set = await http(stack.url, 'POST', '/graphql', {
      token: admin.token,
      body: { query: 'mutation($input: AccountLimitsInput!) { setAccountLimits(input: $input) { userId concurrencyLimit } }', variables: { input: { userId: partner.userId, concurrencyLimit: 20 } } },
    });
    expect(set.body).toEqual({ data: { setAccountLimits: { userId: partner.userId, concurrencyLimit: 20 } } });
    const controller = new AbortController();
    try {
      // 3 keys x 8 (their own limit): 24 tried, 20 admitted by the account's raised limit.
      const opened = await Promise.all(keys.flatMap((key) => Array.from({ length: 8 }, () => openStream(key, controller))));
      expect(opened.filter((o) => o.status === 200)).toHaveLength(20);
      expect(opened.filter((o) => o.code === 'account_concurrency_limited')).toHaveLength(4);
    } finally {
      controller.abort();
    }
  }, 60_000);
});

describe('a client that stops reading its stream', () => {
  it('is cut after the write timeout, billed for what was delivered, and its slot is free again', async () => {
    const reader = await apiAccount(stack, admin, '20');
    await setKeyLimits(stack, admin, reader.keyId, { concurrencyLimit: 1 });
    const rid = requestId('stalled-reader');
    // A stream far larger than the kernel's socket buffers (~35 MB of events), from a client that never reads.
    const body = JSON.stringify({ model: 'gen-5.6-luna', stream: true, messages: [{ role: 'user', content: 'everything [sim:words=200000]' }] });
    const { hostname, port } = new URL(stack.url);
    // The write timeout cannot have begun before the request was sent.
    const started = Date.now();
    const socket = connect(Number(port), hostname);
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${reader.key}\r\nx-request-id: ${rid}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    // The stream started (its first bytes came), then the client stops reading.
    const head = await new Promise<string>((resolve) => socket.once('data', (chunk) => resolve(chunk.toString())));
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    socket.pause();

    // While it holds its one slot, the key's next request is refused.
    const busy = await http(stack.url, 'POST', '/v1/chat/completions', { token: reader.key, body: { model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi [sim:words=2]' }] } });
    expect(busy.status).toBe(429);

    // Settled as a client that went away, for part of the answer, once the write timeout passed.
    const event = await usageEventOf(stack, rid, 20_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(WRITE_TIMEOUT_SECONDS * 1000 - 200);
    expect(event).toMatchObject({ error_code: 'client_closed' });
    expect(event.completion_tokens).toBeGreaterThan(0);
    expect(event.completion_tokens).toBeLessThan(200_000);
    expect(new Decimal(event.amount_usd).greaterThan(0)).toBe(true);
    socket.destroy();

    // The slot is free: the key is served again; the money is exact.
    const again = await http(stack.url, 'POST', '/v1/chat/completions', { token: reader.key, body: { model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi [sim:words=2]' }] } });
    expect(again.status, again.text).toBe(200);
    const money = await ledgerBalance(stack, reader.userId);
    expect(money.balance).toBe(money.ledger);
  }, 60_000);
});
