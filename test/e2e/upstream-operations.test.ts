import { Decimal } from 'decimal.js';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { graphql, http, trpcClient } from '../helpers/clients.js';
import { apiAccount, processAdmin, requestId, setAccountLimits, setKeyLimits, startInferenceStack, type ApiAccount, type InferenceStack } from '../helpers/inference.js';
import { chatBody, METRICS_TOKEN, moneyReport, rawCall, tokenCost, waitFor } from '../helpers/reliability.js';
import { AdminMarginDocument, AdminUpstreamHealthDocument, AdminUpstreamUsageDocument, TestUpstreamCredentialDocument } from '../graphql/generated.js';

/**
 * Issue 52, items 5 and 6, on the gateway process: every usage event records the upstream credential
 * and the upstream's own cost beside what the customer paid; admins read revenue, cost and margin (equal
 * to a recomputation from the events, to the last decimal) and each upstream's usage as its invoice would
 * show it; they watch routing's state live and test a credential. None of it reaches a customer.
 */
const PRIMARY_PRICES = { inputPer1m: '0.0123456789', outputPer1m: '0.031', cacheReadPer1m: '0.001' };
const LUNA = { input: '0.016', output: '0.04', cacheRead: '0.0016' };

let stack: InferenceStack;
let admin: { token: string; userId: string };
let customer: ApiAccount;
const rids: string[] = [];

beforeAll(async () => {
  stack = await startInferenceStack({ METRICS_TOKEN, STATUS_PROBE_SECONDS: '0' }, { upstream: { prices: { 'gen-5.6-luna': PRIMARY_PRICES }, health: { minFailures: 3 } } });
  admin = await processAdmin(stack);
  customer = await apiAccount(stack, admin, '0.001');
  // The key's own limits are not what is tested: every request reaches the hold.
  await setKeyLimits(stack, admin, customer.keyId, { rpmLimit: 10_000, concurrencyLimit: 100 });
  await setAccountLimits(stack, admin, customer.userId, { concurrencyLimit: 100 });
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

describe('upstream cost and margin', () => {
  it('many parallel requests against a small balance: each billed event records its credential and upstream cost; balance = ledger', async () => {
    const results = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const rid = requestId('margin');
        rids.push(rid);
        return rawCall(stack.url, customer.key, chatBody(`margin ${i} [sim:words=${5 + (i % 7)}]`, { maxTokens: 40 }), { requestId: rid });
      }),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s !== 200 && s !== 402)).toEqual([]);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    await waitFor('every event written', async () => (await stack.db.query('select 1 from usage_events where request_id = any($1)', [rids])).length === rids.length);
    const events = await stack.db.query<Record<string, any>>('select * from usage_events where request_id = any($1)', [rids]);
    for (const event of events.filter((e) => e.status === 'success')) {
      // The primary first; past its 32 in flight (its concurrency limit) the rest go to the backup.
      expect([event.upstream_id, event.upstream_credential_id]).toEqual(event.upstream_id === stack.canaries.upstreamIds[0] ? [stack.canaries.upstreamIds[0], 'env:CANARY_PRIMARY_KEY'] : [stack.canaries.upstreamIds[1], 'env:CANARY_BACKUP_KEY']);
      // The upstream's price of the same usage, by the same formula as the customer's, written out independently.
      expect(new Decimal(event.upstream_cost_usd).toFixed(10)).toBe(tokenCost({ input: PRIMARY_PRICES.inputPer1m, output: PRIMARY_PRICES.outputPer1m, cacheRead: PRIMARY_PRICES.cacheReadPer1m }, event.prompt_tokens, event.completion_tokens, event.cache_read_tokens ?? 0).toFixed(10));
      expect(new Decimal(event.amount_usd).toFixed(10)).toBe(tokenCost(LUNA, event.prompt_tokens, event.completion_tokens, event.cache_read_tokens ?? 0).toFixed(10));
    }
    for (const event of events.filter((e) => e.status !== 'success')) expect(event.upstream_cost_usd).toBeNull();
    const report = await moneyReport(stack.db);
    expect(report.balanceMismatches).toEqual([]);
    expect(report.settlementMismatches).toEqual([]);
    expect(report.duplicateRequests).toEqual([]);
  });

  it('the margin report equals a recomputation from the events, to the last decimal; the invoice view sums the same usage', async () => {
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    const answer = await graphql(stack.url, AdminMarginDocument, { from, to }, admin.token);
    expect(answer.errors).toBeUndefined();
    const margin = answer.data!.adminMargin;
    const rows = await stack.db.query<Record<string, any>>(`select * from usage_events where created_at >= $1 and created_at < $2 and (upstream_id is not null or amount_usd > 0)`, [from, to]);
    const sum = (values: (string | null)[]) => values.reduce((acc, v) => (v === null ? acc : acc.plus(v)), new Decimal(0));
    const costed = rows.filter((r) => r.upstream_cost_usd !== null);
    const expected = {
      requests: rows.length,
      revenueUsd: sum(rows.map((r) => r.amount_usd)),
      upstreamCostUsd: sum(costed.map((r) => r.upstream_cost_usd)),
      marginUsd: sum(costed.map((r) => new Decimal(r.amount_usd).minus(r.upstream_cost_usd).toString())),
    };
    expect(margin.totals.requests).toBe(expected.requests);
    expect(new Decimal(margin.totals.revenueUsd).equals(expected.revenueUsd)).toBe(true);
    expect(new Decimal(margin.totals.upstreamCostUsd).equals(expected.upstreamCostUsd)).toBe(true);
    expect(new Decimal(margin.totals.marginUsd).equals(expected.marginUsd)).toBe(true);
    expect(expected.marginUsd.isPositive()).toBe(true);
    // Every breakdown adds up to the totals.
    for (const breakdown of [margin.byDay, margin.byModel, margin.byGroup, margin.byUpstream]) {
      expect(sum(breakdown.map((r) => r.marginUsd)).equals(new Decimal(margin.totals.marginUsd))).toBe(true);
      expect(breakdown.reduce((n, r) => n + r.requests, 0)).toBe(margin.totals.requests);
    }
    expect(margin.byUpstream.map((r) => r.key)).toContain(stack.canaries.upstreamIds[0]);

    const usage = await graphql(stack.url, AdminUpstreamUsageDocument, { from, to, upstreamId: stack.canaries.upstreamIds[0] }, admin.token);
    const line = usage.data!.adminUpstreamUsage.find((l) => l.model === 'gen-5.6-luna')!;
    const served = rows.filter((r) => r.upstream_id === stack.canaries.upstreamIds[0] && r.model === 'gen-5.6-luna' && r.status === 'success');
    expect(line.requests).toBe(served.length);
    expect(line.outputTokens).toBe(served.reduce((n, r) => n + r.completion_tokens, 0));
    expect(new Decimal(line.costUsd).equals(sum(served.map((r) => r.upstream_cost_usd)))).toBe(true);

    // The same through tRPC.
    const viaTrpc = await trpcClient(stack.url, admin.token).operations.margin.query({ from, to });
    expect(viaTrpc.totals.marginUsd).toBe(margin.totals.marginUsd);
  });

  it('customers see none of it: not in their usage events, and the admin views are refused to them', async () => {
    const list = await http(stack.url, 'GET', '/usage?limit=200', { token: customer.token });
    expect(list.status).toBe(200);
    const text = JSON.stringify(list.body);
    for (const hidden of ['upstream', 'credential', 'CANARY_PRIMARY_KEY', stack.canaries.upstreamIds[0]!]) expect(text).not.toContain(hidden);
    for (const document of [AdminMarginDocument, AdminUpstreamHealthDocument, AdminUpstreamUsageDocument] as const) {
      const refused = await graphql(stack.url, document as typeof AdminMarginDocument, {}, customer.token);
      expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    }
    const test = await graphql(stack.url, TestUpstreamCredentialDocument, { input: { upstreamId: stack.canaries.upstreamIds[0]!, credentialId: 'env:CANARY_PRIMARY_KEY' } }, customer.token);
    expect(test.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    await expect(trpcClient(stack.url, customer.token).operations.upstreamHealth.query()).rejects.toThrow();
  });
});

describe('seeing the upstreams', () => {
  it('an admin watches a breaker open live (upstreamHealthChanged), reads the state, and tests each credential', async () => {
    const ws = createClient({ url: `${stack.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${admin.token}` }, retryAttempts: 0 });
    const changes: any[] = [];
    const subscribed = new Promise<void>((resolve, reject) => {
      ws.subscribe({ query: 'subscription { upstreamHealthChanged { upstreamId credentialId state until at } }' }, { next: (m) => void changes.push(m), error: reject, complete: resolve });
    });
    void subscribed.catch(() => undefined);
    // A customer's socket is refused the subscription.
    const outsider = createClient({ url: `${stack.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${customer.token}` }, retryAttempts: 0 });
    const refused = await new Promise<any>((resolve) => outsider.subscribe({ query: 'subscription { upstreamHealthChanged { state } }' }, { next: resolve, error: resolve, complete: () => resolve(null) }));
    expect(JSON.stringify(refused)).toMatch(/FORBIDDEN|administrator/);
    await outsider.dispose();
    await new Promise((resolve) => setTimeout(resolve, 300));

    const funded = await apiAccount(stack, admin, '5');
    await stack.primary.setFault({ mode: 'status', status: 503 });
    try {
      // Failures open the primary's breaker once they are half its window's outcomes (the successes above count too);
      // every request still succeeds on the backup.
      for (let i = 0; i < 80 && !changes.some((m) => m.data?.upstreamHealthChanged?.state === 'open'); i++) {
        expect((await rawCall(stack.url, funded.key, chatBody(`fail over ${i} [sim:words=3]`))).status).toBe(200);
      }
      const opened = await waitFor('the open state pushed to the admin', () => changes.find((m) => m.data?.upstreamHealthChanged?.state === 'open'));
      expect(opened.data.upstreamHealthChanged).toMatchObject({ upstreamId: stack.canaries.upstreamIds[0], credentialId: 'env:CANARY_PRIMARY_KEY', until: expect.any(String) });
      const health = await graphql(stack.url, AdminUpstreamHealthDocument, {}, admin.token);
      expect(health.data!.adminUpstreamHealth.find((h) => h.upstreamId === stack.canaries.upstreamIds[0])).toMatchObject({ state: 'open', inFlight: 0, lastFailureAt: expect.any(String) });
      expect(health.data!.adminUpstreamHealth.find((h) => h.upstreamId === stack.canaries.upstreamIds[1])).toMatchObject({ state: 'closed' });
      const bad = await graphql(stack.url, TestUpstreamCredentialDocument, { input: { upstreamId: stack.canaries.upstreamIds[0]!, credentialId: 'env:CANARY_PRIMARY_KEY', model: 'gen-5.6-luna' } }, admin.token);
      expect(bad.data!.testUpstreamCredential).toMatchObject({ ok: false, status: 503, outcome: 'server_error', latencyMs: expect.any(Number) });
    } finally {
      await stack.primary.setFault(null);
    }
    const good = await graphql(stack.url, TestUpstreamCredentialDocument, { input: { upstreamId: stack.canaries.upstreamIds[1]!, credentialId: 'env:CANARY_BACKUP_KEY', model: 'gen-5.6-luna' } }, admin.token);
    expect(good.data!.testUpstreamCredential).toMatchObject({ ok: true, status: 200, outcome: 'ok' });
    const unknown = await graphql(stack.url, TestUpstreamCredentialDocument, { input: { upstreamId: stack.canaries.upstreamIds[1]!, credentialId: 'env:NOPE' } }, admin.token);
    expect(unknown.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    // The test bills nobody: no usage event names it.
    const [{ n }] = (await stack.db.query<{ n: number }>(`select count(*)::int as n from usage_events where user_id = $1`, [admin.userId])) as [{ n: number }];
    expect(n).toBe(0);
    // /metrics shows the credential's state and calls.
    const metrics = await (await fetch(`${stack.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    expect(metrics).toMatch(new RegExp(`baikal_upstream_breaker_state\\{upstream="${stack.canaries.upstreamIds[0]}",credential="env:CANARY_PRIMARY_KEY"\\} 2`));
    expect(metrics).toMatch(/baikal_upstream_requests_total\{upstream="[^"]+",credential="env:CANARY_PRIMARY_KEY",outcome="server_error"\} [1-9]/);
    expect(metrics).toContain('baikal_upstream_first_byte_seconds_bucket');
    for (const secret of [stack.canaries.credential, stack.canaries.backupCredential]) expect(metrics + JSON.stringify(changes)).not.toContain(secret);
    await ws.dispose();
  });
});
