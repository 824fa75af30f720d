import { randomBytes } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { promptTokenBound } from '../../src/inference/canonical.js';
import { chatToCanonical, parseChatRequest } from '../../src/inference/formats/openai-chat/request.js';
import { ledgerBalance } from '../helpers/accounts.js';
import { fund, processAdmin, requestId, setAccountLimits, setKeyLimits, settled, startInferenceStack, type InferenceStack } from '../helpers/inference.js';
import { removeMember, setMemberCap, testOrganization } from '../helpers/organizations.js';
import type { ServerProcess } from '../helpers/process.js';
import { sharedRedis, type TestRedis } from '../helpers/redis.js';

/**
 * An organization's wallet under its members' parallel spending (issue 56), on one gateway process and on two
 * sharing one Redis: the organization is a ledger owner like an account, so its balance never goes below zero (no
 * credit line), no member's or key's monthly cap is passed, and the ledger equals the balance.
 */
const MODEL = 'gen-5.6-luna';
const MAX_TOKENS = 16;
const SLOW_PROMPT = 'Count slowly [sim:words=10 latency=600]';

function worstCaseHold(prompt: string): Decimal {
  const bound = promptTokenBound(chatToCanonical(parseChatRequest({ model: MODEL, messages: [{ role: 'user', content: prompt }], max_tokens: MAX_TOKENS })));
  return new Decimal(bound).times('0.018').plus(new Decimal(MAX_TOKENS).times('0.04')).dividedBy(1_000_000).toDecimalPlaces(10, Decimal.ROUND_UP);
}

async function chat(url: string, key: string, prompt: string, id = requestId('org')): Promise<{ status: number; code: string | null }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': id },
    body: JSON.stringify({ model: MODEL, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: prompt }] }),
  });
  const body = (await response.json()) as { error?: { code: string } };
  if (response.status >= 500) throw new Error(`unexpected ${response.status}: ${JSON.stringify(body)}`);
  return { status: response.status, code: body.error?.code ?? null };
}

async function spentThrough(stack: InferenceStack, keyIds: string[]): Promise<Decimal> {
  const [row] = await stack.db.query<{ spent: string }>(`select coalesce(sum(amount_usd), 0)::text as spent from usage_events where api_key_id = any($1::uuid[]) and status = 'success'`, [keyIds]);
  return new Decimal(row!.spent);
}

/** The request ids a session hears on usageRecorded(organizationId), gathered until `stop`. */
function hearUsage(url: string, token: string, organizationId: string) {
  const heard: string[] = [];
  const client = createClient({ url: url.replace('http', 'ws') + '/graphql', webSocketImpl: WebSocket, connectionParams: { sessionToken: token }, retryAttempts: 0 });
  const ready = new Promise<void>((resolve, reject) => {
    client.on('connected', () => setTimeout(resolve, 300));
    client.subscribe<{ usageRecorded: { events: { requestId: string }[] } }>(
      { query: 'subscription($organizationId: ID) { usageRecorded(organizationId: $organizationId) { events { requestId } } }', variables: { organizationId } },
      { next: (result) => heard.push(...(result.data?.usageRecorded.events.map((e) => e.requestId) ?? [])), error: reject, complete: () => undefined },
    );
  });
  return { heard, ready, stop: () => client.dispose() };
}

describe.each([
  { on: 'one gateway process', redis: false },
  { on: 'two gateway processes sharing one Redis', redis: true },
])('an organization’s wallet on $on', ({ redis: withRedis }) => {
  let stack: InferenceStack;
  let peer: ServerProcess | undefined;
  let redis: TestRedis | undefined;
  let admin: { token: string; userId: string };
  const urls = () => (peer ? [stack.url, peer.url] : [stack.url]);

  const prefix = `baikal-e2e:${randomBytes(6).toString('hex')}:`;

  beforeAll(async () => {
    redis = withRedis ? sharedRedis() : undefined;
    const env: Record<string, string> = { STATUS_PROBE_SECONDS: '0' };
    if (redis) Object.assign(env, { REDIS_URL: redis.url, REDIS_PREFIX: prefix });
    stack = await startInferenceStack(env);
    if (redis) peer = await stack.spawnPeer();
    admin = await processAdmin(stack);
  }, 120_000);

  afterAll(async () => {
    await stack?.close();
    await redis?.close(prefix);
  });

  it('ten members spend in parallel on a small balance: never below zero, no member or key cap passed, the ledger equals the balance', async () => {
    const org = await testOrganization(stack, 9);
    const everyone = [org.owner, ...org.members];
    // 100 at once: the balance and the caps, not the concurrency limits, are what refuse here.
    await setAccountLimits(stack, admin, org.id, { concurrencyLimit: 100 });
    const hold = worstCaseHold(SLOW_PROMPT);
    const memberCap = hold.times(2.5).toDecimalPlaces(10, Decimal.ROUND_DOWN);
    const keyCap = hold.times(1.5).toDecimalPlaces(10, Decimal.ROUND_DOWN);
    const capped = everyone.slice(1, 5);
    for (const member of capped) await setMemberCap(stack, org.owner.token, org.id, member.userId, memberCap.toFixed());
    for (const member of everyone) await setKeyLimits(stack, admin, member.keyId, { concurrencyLimit: 50, ...(member === everyone[5] ? { monthlySpendCap: keyCap.toFixed() } : {}) });
    const start = hold.times(30.5).toDecimalPlaces(10, Decimal.ROUND_DOWN);
    await fund(stack, admin, org.id, start.toFixed());

    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => chat(urls()[i % urls().length]!, everyone[i % 10]!.key, SLOW_PROMPT)));
    const codes = new Set(results.map((r) => r.code));
    for (const code of codes) expect([null, 'insufficient_balance', 'member_spend_cap_reached', 'spend_cap_reached']).toContain(code);
    expect(codes.has('member_spend_cap_reached')).toBe(true);
    const admitted = results.filter((r) => r.code === null).length;
    // Each process alone would admit up to 30 on its own copy of the balance; together they may not pass it.
    expect(admitted).toBeGreaterThanOrEqual(20);
    expect(admitted).toBeLessThanOrEqual(36);

    await settled(stack, org.id, 100);
    for (const member of capped) expect((await spentThrough(stack, [member.keyId])).lte(memberCap)).toBe(true);
    expect((await spentThrough(stack, [everyone[5]!.keyId])).lte(keyCap)).toBe(true);
    const spent = await spentThrough(stack, everyone.map((m) => m.keyId));
    const balance = await ledgerBalance(stack, org.id);
    expect(balance.ledger).toBe(balance.balance);
    expect(new Decimal(balance.balance).isNegative()).toBe(false);
    expect(new Decimal(balance.balance).equals(start.minus(spent))).toBe(true);
    // Every usage event is the organization's, and each names a key its member made.
    const [{ foreign }] = (await stack.db.query<{ foreign: number }>(
      `select count(*)::int as foreign from usage_events e join api_keys k on k.id = e.api_key_id where e.api_key_id = any($1::uuid[]) and (e.user_id <> $2 or k.created_by is null)`,
      [everyone.map((m) => m.keyId), org.id],
    )) as [{ foreign: number }];
    expect(foreign).toBe(0);
  }, 90_000);

  it('a removed member’s organization key stops at once on every process', async () => {
    const org = await testOrganization(stack, 2);
    await fund(stack, admin, org.id, '5');
    const [leaving, staying] = org.members as [(typeof org.members)[number], (typeof org.members)[number]];
    for (const url of urls()) expect((await chat(url, leaving.key, 'hello')).status).toBe(200);
    await removeMember(stack, org.owner.token, org.id, leaving.userId);
    for (const url of urls()) expect((await chat(url, leaving.key, 'hello')).status).toBe(401);
    for (const url of urls()) expect((await chat(url, staying.key, 'hello')).status).toBe(200);
  }, 60_000);

  it('usageRecorded of the organization: a plain member hears only their own keys’ requests, the owner every member’s', async () => {
    const org = await testOrganization(stack, 2);
    await fund(stack, admin, org.id, '5');
    const [alice, bob] = org.members as [(typeof org.members)[number], (typeof org.members)[number]];
    const owner = hearUsage(urls()[0]!, org.owner.token, org.id);
    const member = hearUsage(urls()[urls().length - 1]!, alice.token, org.id);
    try {
      await Promise.all([owner.ready, member.ready]);
      const sent = { alice: [requestId('alice'), requestId('alice')], bob: [requestId('bob'), requestId('bob')] };
      for (const [i, id] of sent.alice.entries()) expect((await chat(urls()[i % urls().length]!, alice.key, 'hello', id)).status).toBe(200);
      for (const [i, id] of sent.bob.entries()) expect((await chat(urls()[i % urls().length]!, bob.key, 'hello', id)).status).toBe(200);
      const all = [...sent.alice, ...sent.bob];
      const until = Date.now() + 10_000;
      while (!all.every((id) => owner.heard.includes(id)) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
      expect([...owner.heard].sort()).toEqual([...all].sort());
      expect([...member.heard].sort()).toEqual([...sent.alice].sort());
    } finally {
      await Promise.all([owner.stop(), member.stop()]);
    }
  }, 60_000);
});
