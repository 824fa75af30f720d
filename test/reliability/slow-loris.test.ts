import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiAccount, processAdmin, setKeyLimits, startInferenceStack, type ApiAccount, type InferenceStack } from '../helpers/inference.js';
import { rawCall, sleep } from '../helpers/reliability.js';
import { answerWords } from '../../src/simulator/openai-simulator.js';

/**
 * Issue 11, Faults, client: slow-loris connections. The gateway's server closes a connection whose
 * headers are not complete HTTP_HEADERS_TIMEOUT_SECONDS (20) after it opened, and one whose body is not
 * complete HTTP_REQUEST_TIMEOUT_SECONDS (120) after it opened (src/app.ts; node checks both every second),
 * while normal clients keep their latency. The body case runs on a second process with a 5 s bound.
 */
const LORIS = 100;
const HEADERS_TIMEOUT_MS = 20_000;
const CHECK_INTERVAL_MS = 1_000;

let stack: InferenceStack;
let account: ApiAccount;

beforeAll(async () => {
  stack = await startInferenceStack({ STATUS_PROBE_SECONDS: '0' });
  const admin = await processAdmin(stack);
  account = await apiAccount(stack, admin, '5');
  await setKeyLimits(stack, admin, account.keyId, { rpmLimit: 100_000 });
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

async function latencies(count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = Date.now();
    const result = await rawCall(stack.url, account.key, { model: 'gen-5.6-luna', stream: true, messages: [{ role: 'user', content: 'quick [sim:words=5]' }] }, { received: stack.received });
    times.push(Date.now() - started);
    expect(result.content).toBe(answerWords(5).join(' '));
  }
  return times.sort((a, b) => a - b);
}
const p95 = (sorted: number[]) => sorted[Math.floor(sorted.length * 0.95)]!;

describe('slow-loris connections', () => {
  it(`${LORIS} connections trickling their headers are closed by the header timeout; normal clients keep their latency meanwhile`, async () => {
    await latencies(5); // warm
    const baseline = await latencies(30);
    const { port, hostname } = new URL(stack.url);
    const loris: { socket: Socket; openedAt: number; closedAt?: number; received: string }[] = [];
    for (let i = 0; i < LORIS; i++) {
      const socket = connect(Number(port), hostname);
      const entry = { socket, openedAt: Date.now(), closedAt: undefined as number | undefined, received: '' };
      socket.on('data', (chunk) => (entry.received += chunk.toString()));
      socket.on('error', () => undefined);
      socket.on('close', () => (entry.closedAt = Date.now()));
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${account.key}\r\n`);
      loris.push(entry);
    }
    // One more header line every second, for as long as the connection lives.
    let n = 0;
    const trickle = setInterval(() => {
      n += 1;
      for (const entry of loris) if (entry.closedAt === undefined) entry.socket.write(`X-Trickle-${n}: ${'a'.repeat(8)}\r\n`);
    }, 1_000);
    try {
      await sleep(1_000);
      const during = await latencies(30);
      const deadline = Date.now() + HEADERS_TIMEOUT_MS + CHECK_INTERVAL_MS + 5_000;
      while (loris.some((entry) => entry.closedAt === undefined) && Date.now() < deadline) await sleep(250);

      const lifetimes = loris.map((entry) => (entry.closedAt ?? Number.POSITIVE_INFINITY) - entry.openedAt);
      expect(lifetimes.filter((ms) => !Number.isFinite(ms))).toEqual([]);
      expect(Math.min(...lifetimes)).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
      expect(Math.max(...lifetimes)).toBeLessThanOrEqual(HEADERS_TIMEOUT_MS + CHECK_INTERVAL_MS + 2_000);
      // The server says why: a 408 to every one of them (an empty answer would pass a timeout never sent).
      for (const entry of loris) expect(entry.received.slice(0, 30), 'a header-trickling connection').toMatch(/^HTTP\/1\.1 408 /);

      // Normal clients are not starved while 100 connections sit on the server.
      expect(p95(during)).toBeLessThan(Math.max(1_000, 5 * p95(baseline)));
      const after = await latencies(10);
      expect(p95(after)).toBeLessThan(Math.max(1_000, 5 * p95(baseline)));
      console.log(
        `[reliability] slow-loris: ${LORIS} header-trickling connections closed after ${Math.min(...lifetimes)}..${Math.max(...lifetimes)} ms; ` +
          `normal p95 ${p95(baseline)} ms before, ${p95(during)} ms during, ${p95(after)} ms after`,
      );
    } finally {
      clearInterval(trickle);
      for (const entry of loris) entry.socket.destroy();
    }
    expect(stack.received.join('')).not.toContain(stack.canaries.credential);
  }, 90_000);

  it('connections trickling their body are closed by the request timeout (408 in our shape); normal clients are served meanwhile', async () => {
    const REQUEST_TIMEOUT_MS = 5_000;
    const peer = await stack.spawnPeer({ HTTP_REQUEST_TIMEOUT_SECONDS: String(REQUEST_TIMEOUT_MS / 1000) });
    const { port, hostname } = new URL(peer.url);
    const body = JSON.stringify({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'never finished [sim:words=3]' }] });
    const slow: { socket: Socket; openedAt: number; closedAt?: number; received: string }[] = [];
    for (let i = 0; i < 20; i++) {
      const socket = connect(Number(port), hostname);
      const entry = { socket, openedAt: Date.now(), closedAt: undefined as number | undefined, received: '' };
      socket.on('data', (chunk) => (entry.received += chunk.toString()));
      socket.on('error', () => undefined);
      socket.on('close', () => (entry.closedAt = Date.now()));
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${account.key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
      slow.push(entry);
    }
    let sent = 0;
    const trickle = setInterval(() => {
      sent += 1;
      for (const entry of slow) if (entry.closedAt === undefined && sent < body.length) entry.socket.write(body[sent - 1]!);
    }, 500);
    try {
      const normal = await rawCall(peer.url, account.key, { model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'meanwhile [sim:words=4]' }] });
      expect(normal.status).toBe(200);
      const deadline = Date.now() + REQUEST_TIMEOUT_MS + 10_000;
      while (slow.some((entry) => entry.closedAt === undefined) && Date.now() < deadline) await sleep(100);
      const lifetimes = slow.map((entry) => (entry.closedAt ?? Number.POSITIVE_INFINITY) - entry.openedAt);
      expect(Math.min(...lifetimes)).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
      expect(Math.max(...lifetimes)).toBeLessThanOrEqual(REQUEST_TIMEOUT_MS + CHECK_INTERVAL_MS + 3_000);
      for (const entry of slow) {
        expect(entry.received.slice(0, 30), 'a body-trickling connection').toMatch(/^HTTP\/1\.1 408 /);
        expect(JSON.parse(entry.received.slice(entry.received.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'request_timeout' });
      }
      console.log(`[reliability] slow bodies: 20 connections closed after ${Math.min(...lifetimes)}..${Math.max(...lifetimes)} ms (bound ${REQUEST_TIMEOUT_MS} ms)`);
    } finally {
      clearInterval(trickle);
      for (const entry of slow) entry.socket.destroy();
      peer.child.kill('SIGTERM');
      await peer.exited;
    }
  }, 60_000);
});
