import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startGateway, type RunningGateway } from '../../src/server.js';
import { createLogger } from '../../src/shared/logging.js';
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { http, registerRest } from '../helpers/clients.js';
import { startReplicaPair, type PgNode, type ReplicaPair } from '../helpers/pg-replica.js';
import { METRICS_TOKEN, metric, rawCall, waitFor } from '../helpers/reliability.js';

/**
 * Issue 55, item 4: a read replica for analytics. The gateway runs on a primary PostgreSQL this file owns, with
 * DATABASE_READ_URL on a real streaming standby of it (pg_basebackup). With the standby's replay paused it is
 * behind on purpose: the cabinet's usage list, summary, timeseries and leaderboard then show exactly the rows the
 * standby holds (so they read it), while the balance and the transactions, in REST and GraphQL, show the primary's
 * ledger to the cent (so they never read it). A standby that goes down costs no request: the primary answers.
 */

const DB = 'baikal';
let pair: ReplicaPair;
let sim: Simulator;
let dir: string;
let gw: RunningGateway;
const logs: string[] = [];
let account: { token: string; userId: string; key: string };

function capturingLogger() {
  return createLogger('info', new Writable({ write: (chunk: Buffer, _encoding, done) => (logs.push(chunk.toString()), done()) }));
}

function gatewayConfig(readUrl: string) {
  return loadConfig({
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: pair.primary.url(DB),
    DATABASE_READ_URL: readUrl,
    LOG_LEVEL: 'info',
    BAIKAL_CONFIG: path.join(dir, 'baikal.json'),
    REPLICA_UPSTREAM_KEY: 'replica-upstream-secret',
    DATA_DIR: dir,
    METRICS_TOKEN,
    VIDEO_WORKERS: '0',
    WEBHOOKS_WORKERS: '0',
    STATUS_PROBE_SECONDS: '0',
  });
}

beforeAll(async () => {
  pair = await startReplicaPair([DB]);
  sim = await startSimulator({ apiKey: 'replica-upstream-secret' });
  dir = await mkdtemp(path.join(tmpdir(), 'baikal-replica-gw-'));
  const upstream = { id: 'sim', kind: 'openai-compatible', baseUrl: `${sim.url}/v1`, credentialEnv: 'REPLICA_UPSTREAM_KEY', routes: [{ group: 'cheap', models: ['gen-5.6-luna'] }] };
  await writeFile(path.join(dir, 'baikal.json'), JSON.stringify({ upstreams: [upstream] }));
  // Migrations run on the primary at start and reach the standby by streaming, like every other write.
  gw = await startGateway(gatewayConfig(pair.standby.url(DB)), capturingLogger());
  const registered = await registerRest(gw.url);
  const userId = registered.account.user_id as string;
  await gw.services.billing.post({ userId, amountUsd: '10', kind: 'topup', bucket: 'paid', idempotencyKey: `topup:${randomUUID()}` });
  const key = await http(gw.url, 'POST', '/keys', { token: registered.token, body: {} });
  account = { token: registered.token, userId, key: key.body.key };
}, 90_000);

afterAll(async () => {
  await gw?.stop();
  await sim?.close();
  await pair?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** `n` billed chat completions, written to the primary (the usage batch flushed) before this returns their request ids. */
async function traffic(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const rid = `rr-${randomUUID()}`;
    const result = await rawCall(gw.url, account.key, { model: 'gen-5.6-luna', messages: [{ role: 'user', content: `call ${i} [sim:words=${4 + i}]` }] }, { requestId: rid });
    expect(result.status, result.text).toBe(200);
    ids.push(rid);
  }
  await gw.services.usage.flush();
  return ids;
}

/** What a server holds of the account: its events newest first, their tokens, its cached balance and its ledger's sum. */
async function heldBy(node: PgNode) {
  const events = await node.query<{ request_id: string; tokens: number }>(
    `select request_id, coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0) as tokens from usage_events where user_id = $1 order by created_at desc, id desc`,
    [account.userId],
    DB,
  );
  const [money] = await node.query<{ balance: string; ledger: string }>(
    `select (balance_paid_usd + balance_bonus_usd)::text as balance, (select coalesce(sum(amount_usd), 0) from transactions where user_id = $1)::text as ledger from users where id = $1`,
    [account.userId],
    DB,
  );
  return { ids: events.map((e) => e.request_id), tokens: events.reduce((sum, e) => sum + Number(e.tokens), 0), balance: new Decimal(money!.balance), ledger: new Decimal(money!.ledger) };
}

/** The analytics as the cabinet reads them, through REST and GraphQL. */
async function analytics() {
  const { token } = account;
  const hour = 3_600_000;
  const range = `from=${new Date(Date.now() - 2 * hour).toISOString()}&to=${new Date(Date.now() + hour).toISOString()}`;
  const [list, summary, series, board, gql] = await Promise.all([
    http(gw.url, 'GET', '/usage?limit=200', { token }),
    http(gw.url, 'GET', '/usage/summary', { token }),
    http(gw.url, 'GET', `/usage/timeseries?${range}&bucket=hour`, { token }),
    http(gw.url, 'GET', '/leaderboard/daily', { token }),
    http(gw.url, 'POST', '/graphql', { token, body: { query: '{ usage(limit: 200) { requestId } usageSummary { totals { requests } } leaderboard { me { tokens } } }' } }),
  ]);
  for (const answer of [list, summary, series, board, gql]) expect(answer.status, answer.text).toBe(200);
  expect(gql.body.errors).toBeUndefined();
  return {
    ids: list.body.items.map((e: { request_id: string }) => e.request_id) as string[],
    graphqlIds: gql.body.data.usage.map((e: { requestId: string }) => e.requestId) as string[],
    summaryRequests: [summary.body.total_requests, gql.body.data.usageSummary.totals.requests] as number[],
    seriesRequests: series.body.points.reduce((sum: number, p: { requests: number }) => sum + p.requests, 0) as number,
    leaderboardTokens: [board.body.me?.tokens ?? 0, gql.body.data.leaderboard.me?.tokens ?? 0] as number[],
    texts: [list, summary, series, board, gql].map((answer) => answer.text),
  };
}

/** The balance and the ledger as the customer sees them, through REST and GraphQL. */
async function money() {
  const { token } = account;
  const [me, transactions, gql] = await Promise.all([
    http(gw.url, 'GET', '/auth/me', { token }),
    http(gw.url, 'GET', '/auth/transactions?limit=100', { token }),
    http(gw.url, 'POST', '/graphql', { token, body: { query: '{ me { balanceUsd } transactions(limit: 100) { amountUsd } }' } }),
  ]);
  for (const answer of [me, transactions, gql]) expect(answer.status, answer.text).toBe(200);
  const sum = (amounts: string[]) => amounts.reduce((total, amount) => total.plus(amount), new Decimal(0));
  return {
    balances: [new Decimal(me.body.balance_usd), new Decimal(gql.body.data.me.balanceUsd)],
    ledgers: [sum(transactions.body.map((t: { amount_usd: string }) => t.amount_usd)), sum(gql.body.data.transactions.map((t: { amountUsd: string }) => t.amountUsd))],
  };
}

/** The analytics show exactly what `node` holds of the account. */
function expectAnalyticsOf(seen: Awaited<ReturnType<typeof analytics>>, held: Awaited<ReturnType<typeof heldBy>>) {
  expect(seen.ids).toEqual(held.ids);
  expect(seen.graphqlIds).toEqual(held.ids);
  expect(seen.summaryRequests).toEqual([held.ids.length, held.ids.length]);
  expect(seen.seriesRequests).toBe(held.ids.length);
  expect(seen.leaderboardTokens).toEqual([held.tokens, held.tokens]);
}

describe('a streaming replica behind the primary (replay paused)', () => {
  it('serves the usage list, summary, timeseries and leaderboard from the replica, and balances and the ledger from the primary, exact', async () => {
    await traffic(3);
    await pair.standby.caughtUp();
    expectAnalyticsOf(await analytics(), await heldBy(pair.standby));

    await pair.standby.pauseReplay();
    const newest = await traffic(2);
    const [onPrimary, onStandby] = [await heldBy(pair.primary), await heldBy(pair.standby)];
    // The replica is behind by exactly the two new requests and what they cost.
    expect(onPrimary.ids.slice(2)).toEqual(onStandby.ids);
    expect(onPrimary.ids.slice(0, 2).sort()).toEqual([...newest].sort());
    expect(onPrimary.ledger.lessThan(onStandby.ledger)).toBe(true);

    expectAnalyticsOf(await analytics(), onStandby);
    const seenMoney = await money();
    for (const value of [...seenMoney.balances, ...seenMoney.ledgers]) expect(value.toString()).toBe(onPrimary.ledger.toString());
    expect(onPrimary.balance.equals(onPrimary.ledger)).toBe(true);
    // A client looking up the request it just made finds it: a miss on the replica is asked of the primary.
    const justMade = await http(gw.url, 'GET', `/usage/${newest[1]}`, { token: account.token });
    expect(justMade.status, justMade.text).toBe(200);
    expect(justMade.body.request_id).toBe(newest[1]);

    expect(await metric(gw.url, 'baikal_database_replica_up')).toBe(1);
    // Lag shows once the standby has received WAL it has not replayed (at once, but by streaming, so waited for).
    await waitFor('a replay lag above 0', async () => (await metric(gw.url, 'baikal_database_replica_lag_seconds')) > 0 || null, 10_000, 200);

    await pair.standby.resumeReplay();
    await pair.standby.caughtUp();
    expectAnalyticsOf(await analytics(), await heldBy(pair.primary));
    await waitFor('the lag metric back at 0', async () => (await metric(gw.url, 'baikal_database_replica_lag_seconds')) === 0 || null, 10_000, 200);
  }, 60_000);
});

describe('a replica that goes down', () => {
  it('costs no request: the primary answers the analytics (said once in the log), and the replica serves them again once it is back', async () => {
    await pair.standby.stop();
    const during = await traffic(1);
    const seen = await analytics();
    expectAnalyticsOf(seen, await heldBy(pair.primary));
    expect(seen.ids[0]).toBe(during[0]);
    // Nothing of the replica's failure reaches a client.
    for (const text of seen.texts) expect(text).not.toMatch(new RegExp(`ECONNREFUSED|${pair.standby.port}|replica`, 'i'));
    expect(logs.filter((line) => line.includes('does not answer')).length).toBe(1);
    expect(logs.find((line) => line.includes('does not answer'))).toContain('analytics read the primary');
    expect(await metric(gw.url, 'baikal_database_replica_up')).toBe(0);

    await pair.standby.start();
    await pair.standby.caughtUp();
    await pair.standby.pauseReplay();
    await traffic(1);
    const behind = await heldBy(pair.standby);
    // Within the retry period (5 s) the replica is asked again, and its older view is what the cabinet sees.
    await waitFor('analytics read the replica again', async () => ((await analytics()).ids.length === behind.ids.length ? true : null), 15_000, 250);
    expectAnalyticsOf(await analytics(), behind);
    expect(logs.some((line) => line.includes('answers again'))).toBe(true);
    await pair.standby.resumeReplay();
    await pair.standby.caughtUp();
  }, 60_000);

  it('a replica unreachable from the start delays nothing: the gateway starts and the primary answers the analytics', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const started = Date.now();
    const second = await startGateway(gatewayConfig(`postgresql://postgres:not-this@127.0.0.1:${closedPort}/${DB}`), capturingLogger());
    try {
      expect(Date.now() - started).toBeLessThan(15_000);
      const list = await http(second.url, 'GET', '/usage?limit=200', { token: account.token });
      expect(list.status, list.text).toBe(200);
      expect(list.body.items.map((e: { request_id: string }) => e.request_id)).toEqual((await heldBy(pair.primary)).ids);
      expect(logs.some((line) => line.includes(`127.0.0.1:${closedPort}`) && line.includes('does not answer'))).toBe(true);
    } finally {
      await second.stop();
    }
  }, 30_000);

  it('never logs a password of either URL', () => {
    const password = new URL(pair.primary.url(DB)).password;
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.join('\n')).not.toContain(password);
    expect(logs.join('\n')).not.toContain('not-this');
  });
});
