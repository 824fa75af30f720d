import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { graphql, type GraphQLResult } from '../helpers/clients.js';
import { apiAccount, processAdmin, requestId, startInferenceStack, type ApiAccount, type InferenceStack } from '../helpers/inference.js';
import { decode, startReceiver, type Receiver } from '../helpers/otlp.js';
import type { ServerProcess } from '../helpers/process.js';
import { chatBody, leaks, METRICS_TOKEN, rawCall, sleep, waitFor } from '../helpers/reliability.js';
import { AdminUpstreamHealthDocument, AdminUpstreamsDocument, CreateUpstreamDocument, SetUpstreamEnabledDocument } from '../graphql/generated.js';
import { dropRedisKeys } from '../helpers/redis.js';

/**
 * Issue 52 across processes: two gateway processes on one database and one Redis. What one learns of an
 * upstream (a breaker opening) the other acts on within a second; what an admin changes on one, the other
 * routes by within a second; and a credential an admin stores (encrypted) never shows again: not in any
 * response, log line, metric or trace of either process, not in clear in the database.
 */
const REDIS_URL = 'redis://127.0.0.1:6379';
const PREFIX = `baikal-live-${randomBytes(4).toString('hex')}:`;

let stack: InferenceStack;
let receiver: Receiver;
let peer: ServerProcess;
let admin: { token: string; userId: string };
let account: ApiAccount;
let echo: Simulator;
const SECRET = `sk-stored-CANARY-${randomBytes(16).toString('hex')}`;
const received: string[] = [];

beforeAll(async () => {
  receiver = await startReceiver();
  stack = await startInferenceStack(
    { REDIS_URL, REDIS_PREFIX: PREFIX, WORKERS: '1', METRICS_TOKEN, STATUS_PROBE_SECONDS: '0', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' },
    { upstream: { health: { minFailures: 3 } } },
  );
  peer = await stack.spawnPeer();
  admin = await processAdmin(stack);
  account = await apiAccount(stack, admin, '5');
  // An upstream that quotes its own key in every error text, as some proxies do.
  echo = await startSimulator({ apiKey: SECRET, errorDetail: `(key ${SECRET} refused by org acct_CANARY)`, name: 'echo' });
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await Promise.all([receiver?.close(), echo?.close()]);
  await dropRedisKeys(PREFIX);
});

async function breakerState(url: string, upstreamId: string): Promise<number | null> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`baikal_upstream_breaker_state{upstream="${upstreamId}"`));
  return line ? Number(line.split(' ').pop()) : null;
}

async function admin$<R>(url: string, result: Promise<GraphQLResult<R>>): Promise<R> {
  const answer = await result;
  received.push(JSON.stringify(answer));
  if (answer.errors) throw new Error(`${url}: ${JSON.stringify(answer.errors)}`);
  return answer.data!;
}

describe('two processes', () => {
  it('one process’s breaker opens; the other stops sending there within a second', async () => {
    const [primaryId] = stack.canaries.upstreamIds as [string];
    await stack.primary.setFault({ mode: 'status', status: 503 });
    try {
      for (let i = 0; i < 40 && (await breakerState(stack.url, primaryId)) !== 2; i++) {
        const result = await rawCall(stack.url, account.key, chatBody(`learn ${i} [sim:words=2]`));
        expect(result.status).toBe(200);
        received.push(result.text);
      }
      const openedAt = Date.now();
      expect(await breakerState(stack.url, primaryId)).toBe(2);
      await waitFor('the peer to take the primary out', async () => (await breakerState(peer.url, primaryId)) === 2, 1_000, 20);
      const learnedIn = Date.now() - openedAt;
      const before = stack.primary.requests.length;
      for (let i = 0; i < 20; i++) {
        const result = await rawCall(peer.url, account.key, chatBody(`skip ${i} [sim:words=2]`));
        expect(result.status).toBe(200);
        received.push(result.text);
      }
      expect(stack.primary.requests.length - before).toBe(0);
      console.log(`the peer took the primary out ${learnedIn} ms after the first process opened its breaker; 0 of its 20 requests went there`);
    } finally {
      await stack.primary.setFault(null);
    }
  });

  it('an admin’s change on one process is routed by on the other within a second', async () => {
    const [, backupId] = stack.canaries.upstreamIds as [string, string];
    const listed = async (url: string) => (await admin$(url, graphql(url, AdminUpstreamHealthDocument, {}, admin.token))).adminUpstreamHealth.map((h) => h.upstreamId);
    expect(await listed(peer.url)).toContain(backupId);
    const started = Date.now();
    await admin$(stack.url, graphql(stack.url, SetUpstreamEnabledDocument, { id: backupId, enabled: false }, admin.token));
    await waitFor('the peer to drop the disabled upstream', async () => !(await listed(peer.url)).includes(backupId), 1_000, 20);
    const took = Date.now() - started;
    await admin$(stack.url, graphql(stack.url, SetUpstreamEnabledDocument, { id: backupId, enabled: true }, admin.token));
    await waitFor('the peer to take it back', async () => (await listed(peer.url)).includes(backupId), 1_000, 20);
    console.log(`an admin's change reached the other process in ${took} ms`);
  });

  it('a stored secret: routed through on both processes, never shown again anywhere (responses, logs, metrics, traces, the table)', async () => {
    const id = `vault-echo-${randomBytes(3).toString('hex')}`;
    const created = await admin$(
      stack.url,
      graphql(stack.url, CreateUpstreamDocument, {
        input: {
          id,
          kind: 'openai-compatible',
          baseUrl: `${echo.url}/v1`,
          credentials: [{ secret: SECRET, label: 'stored canary' }],
          // Above the stack's routes of this model: every eta-k3 request goes here.
          routes: [{ model: 'eta-k3', group: 'cheap', priority: 10 }],
        },
      }, admin.token),
    );
    expect(JSON.stringify(created)).toContain(SECRET.slice(-4));
    expect(JSON.stringify(created)).not.toContain(SECRET.slice(0, -4));
    // Both processes route through it (the peer learned it from the bus), and both meet its echoed key.
    for (const url of [stack.url, peer.url]) {
      const ok = await waitFor(`${url} to route eta-k3 to the stored credential`, async () => {
        const result = await rawCall(url, account.key, chatBody('hello [sim:words=3]', { model: 'eta-k3' }), { requestId: requestId('vault') });
        received.push(result.text);
        return result.status === 200 && echo.requests.length > 0 ? result : null;
      }, 3_000);
      expect(ok.status).toBe(200);
      const failed = await rawCall(url, account.key, chatBody('fail [sim:status=500]', { model: 'eta-k3' }));
      received.push(failed.text, [...failed.headers].join('\n'));
      expect(failed.status).toBe(502);
    }
    received.push(JSON.stringify((await admin$(stack.url, graphql(stack.url, AdminUpstreamsDocument, {}, admin.token)))));
    for (const url of [stack.url, peer.url]) received.push(await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text());
    await sleep(500);
    const traces = receiver.received.map((r) => r.raw);
    expect(decode(receiver.received).spans.some((s) => s.attributes['baikal.upstream.id'] === id)).toBe(true);
    const logs = [...stack.gateway.lines, ...peer.lines];
    expect(leaks([...received, ...traces, ...logs], [SECRET, SECRET.slice(0, 24)])).toEqual([]);
    // The echoed key was really in the upstream's words (so the redaction was tested), and the log says it was redacted.
    expect(logs.some((line) => line.includes('[redacted]'))).toBe(true);
    const rows = await stack.db.query<Record<string, unknown>>('select * from upstream_credentials');
    expect(JSON.stringify(rows)).not.toContain(SECRET.slice(0, -4));
  });
});
