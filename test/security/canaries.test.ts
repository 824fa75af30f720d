import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ledgerBalance } from '../helpers/accounts.js';
import {
  allCanaries as allCanariesOf,
  anthropic as anthropicVia,
  call as callVia,
  capturingFetch as capturingFetchOf,
  chatBody,
  credentialCanaries as credentialCanariesOf,
  DEAD_CHAT,
  DEAD_MESSAGES,
  drain,
  ECHO_CHAT,
  ECHO_IMAGE,
  ECHO_MESSAGES,
  FAILOVER_CHAT,
  messagesBody,
  messagesHeaders,
  openai as openaiVia,
  rawStream as rawStreamVia,
  sdkFailure,
  UPSTREAM_REFUSALS,
  useCanaryRun,
  v1ErrorCases,
} from '../helpers/canaries.js';
import { http, trpcClient, type JsonResponse } from '../helpers/clients.js';
import { apiAccount, createKey, requestId, setKeyLimits, settled, TRANSLATED_FAMILY_B, usageEventOf } from '../helpers/inference.js';

/**
 * Issue 11, "Canary secrets": secrets and internals are planted in the upstream configuration and in
 * the upstreams' own error texts, every error path of /v1 is triggered (by the official openai and
 * @anthropic-ai/sdk clients and by raw fetch), and every response body, header and SSE frame the
 * clients got, every GraphQL error and every usage record a user can read is searched: zero hits.
 * The gateway's own stdout/stderr is searched for the credentials (never logged; hosts may be).
 *
 * Besides the stack's canaries (credentials, upstream ids, hosts, upstream model names, error texts),
 * this file plants:
 * - an upstream credential `sk-CANARY-…` on a simulator whose every error text echoes that very
 *   credential and the host `canary.invalid` (real upstreams and proxies do echo keys);
 * - upstreams whose base URL host is `canary.invalid`, which cannot resolve: requests routed there
 *   fail with a connection error (alone: the client's error; first of two: a silent failover).
 *
 * The run (its processes, upstreams and recording clients) is set up in test/helpers/canaries.ts.
 */

const run = useCanaryRun();
const call = (method: string, urlPath: string, options: Parameters<typeof http>[3] = {}): Promise<JsonResponse> => callVia(run, method, urlPath, options);
const rawStream = (urlPath: string, headers: Record<string, string>, body: unknown) => rawStreamVia(run, urlPath, headers, body);
const capturingFetch = () => capturingFetchOf(run);
const graphqlQuery = (query: string, token?: string, variables?: Record<string, unknown>): Promise<JsonResponse> => call('POST', '/graphql', { token, body: { query, variables } });
const openai = (key: string) => openaiVia(run, key);
const anthropic = (key: string) => anthropicVia(run, key);
const credentialCanaries = () => credentialCanariesOf(run);
const allCanaries = () => allCanariesOf(run);

describe('every /v1 error path, and nothing private in any answer', () => {
  it('raw fetch: 400, 401, 402, 403, 404, 413, 422, 429, upstream 4xx/5xx, timeouts and connection failures, each in our own words', async () => {
    const { gw, via, echo, admin, familyA, familyB } = run;
    const a = familyA.key;
    const b = familyB.key;
    const broke = await apiAccount(via, admin, null);
    const capped = await http(gw.url, 'POST', '/keys', { token: familyA.token, body: { monthly_spend_cap: '0' } });
    expect(capped.status).toBe(201);
    const limited = await createKey(via, familyA.token, { label: 'one a minute' });
    await setKeyLimits(via, admin, limited.id, { rpmLimit: 1 });

    const bearer = { authorization: `Bearer ${a}` };
    const cases = v1ErrorCases({ a, b, broke: broke.key, capped: capped.body.key, session: familyA.token });
    const seen = new Set<number>();
    for (const c of cases) {
      const response = await call('POST', c.path, { headers: c.headers, body: c.body, rawBody: c.rawBody });
      // Both shapes (OpenAI's and the Messages API's) carry our code at error.code.
      const code = response.body?.error?.code;
      expect({ name: c.name, status: response.status, code }).toEqual({ name: c.name, status: c.status, code: c.code });
      seen.add(response.status);
    }

    // 413: a declared length over 25 MiB, and a small gzip body that inflates past it.
    const huge = await call('POST', '/v1/chat/completions', { headers: bearer, rawBody: `{"model":"gen-5.6-luna","messages":[{"role":"user","content":"${'a'.repeat(25 * 1024 * 1024)}"}]}` });
    expect([huge.status, huge.body.error.code]).toEqual([413, 'payload_too_large']);
    const bomb = await capturingFetch()(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(Buffer.from(`{"model":"gen-5.6-luna","messages":[{"role":"user","content":"${' '.repeat(26 * 1024 * 1024)}"}]}`)),
    });
    expect([bomb.status, ((await bomb.json()) as any).error.code]).toEqual([413, 'payload_too_large']);
    seen.add(413);

    // 429: the key's own minute window, then the model's upstream (above).
    expect((await call('POST', '/v1/chat/completions', { token: limited.key, body: chatBody('gen-5.6-luna', 'one [sim:words=1]') })).status).toBe(200);
    const second = await call('POST', '/v1/chat/completions', { token: limited.key, body: chatBody('gen-5.6-luna', 'two') });
    expect([second.status, second.body.error.code]).toEqual([429, 'rate_limited']);

    // A failover from canary.invalid to a live route is invisible to the client.
    const failover = await call('POST', '/v1/chat/completions', { headers: bearer, body: chatBody(FAILOVER_CHAT, 'hi [sim:words=3]') });
    expect(failover.status).toBe(200);
    expect(failover.body.choices[0].message.content).toBe('baikal is the');

    // Mid-stream: a cut after a few chunks and an idle timeout, in each stream format.
    const cutChat = await rawStream('/v1/chat/completions', bearer, chatBody(ECHO_CHAT, 'x [sim:words=10 cut-after=3]', { stream: true }));
    expect(cutChat.status).toBe(200);
    expect(cutChat.text).toContain('"code":"stream_interrupted"');
    const idle = await rawStream('/v1/chat/completions', bearer, chatBody(ECHO_CHAT, 'x [sim:words=3 chunk-delay=3500]', { stream: true }));
    expect(idle.text).toContain('"code":"stream_interrupted"');
    const cutResponses = await rawStream('/v1/responses', bearer, { model: ECHO_CHAT, input: 'x [sim:words=10 cut-after=3]', stream: true });
    expect(cutResponses.text).toMatch(/stream_interrupted|response\.failed|"type":"error"/);
    const cutMessages = await rawStream('/v1/messages', messagesHeaders(b), messagesBody(ECHO_MESSAGES, 'x [sim:words=10 cut-after=3]', { stream: true }));
    expect(cutMessages.text).toContain('event: error');
    const cutBridge = await rawStream('/v1/bridge/chat/completions', { authorization: `Bearer ${b}` }, chatBody('bridge-opus-5', 'x [sim:words=10 cut-after=2]', { stream: true }));
    expect(cutBridge.text).toContain('stream_interrupted');

    expect([...seen].sort()).toEqual(expect.arrayContaining([400, 401, 402, 403, 404, 413, 422, 429, 502, 503]));
    // The echo upstream really did answer with its credential in the error text, and was really reached.
    expect(echo.requests.length).toBeGreaterThan(10);
  }, 120_000);

  it('the official openai client: the same refusals and failures, JSON and streamed', async () => {
    const { via, admin, familyA } = run;
    const client = openai(familyA.key);
    const chat = (model: string, content: string) => client.chat.completions.create({ model, messages: [{ role: 'user', content }] });
    expect(await sdkFailure(openai('baikal-sk-nope').chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi' }] }))).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(await sdkFailure(chat('delta-4.6', 'hi'))).toMatchObject({ status: 403, code: 'key_scope_denied' });
    expect(await sdkFailure(chat('no-such-model', 'hi'))).toMatchObject({ status: 404, code: 'model_not_found' });
    expect(await sdkFailure(chat('img-2', 'hi'))).toMatchObject({ status: 400, code: 'endpoint_not_supported_for_model' });
    expect(await sdkFailure(client.chat.completions.create({ model: 'gen-5.6-luna', messages: [] }))).toMatchObject({ status: 422, code: 'validation_failed' });
    for (const [directive, status, code] of UPSTREAM_REFUSALS) {
      expect(await sdkFailure(chat(ECHO_CHAT, `x [sim:${directive}]`))).toMatchObject({ status, code });
    }
    expect(await sdkFailure(chat(DEAD_CHAT, 'x'))).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(await sdkFailure(chat(ECHO_CHAT, 'x [sim:latency=2500]'))).toMatchObject({ status: 503, code: 'upstream_timeout' });
    expect(await sdkFailure(openai((await apiAccount(via, admin, null)).key).chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi' }] }))).toMatchObject({
      status: 402,
      code: 'insufficient_balance',
    });
    expect(await sdkFailure(client.responses.create({ model: ECHO_CHAT, input: 'x [sim:status=503]' }))).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(await sdkFailure(client.images.generate({ model: ECHO_IMAGE, prompt: 'a lake [sim:status=500]' }))).toMatchObject({ status: 502, code: 'upstream_error' });

    const cut = await drain(await client.chat.completions.create({ model: ECHO_CHAT, messages: [{ role: 'user', content: 'x [sim:words=10 cut-after=4]' }], stream: true }));
    expect(cut.text).toBe('baikal is the deepest');
    expect(cut.error).toBeTruthy();
    const cutResponses = await drain(await client.responses.create({ model: ECHO_CHAT, input: 'x [sim:words=10 cut-after=4]', stream: true }));
    expect(cutResponses.text).toBe('baikal is the deepest');
    const fine = await drain(await client.chat.completions.create({ model: FAILOVER_CHAT, messages: [{ role: 'user', content: 'x [sim:words=5]' }], stream: true }));
    expect(fine).toEqual({ text: 'baikal is the deepest lake', error: null });
  }, 60_000);

  it('the official @anthropic-ai/sdk client: the same refusals and failures, JSON and streamed', async () => {
    const { via, admin, familyA, familyB } = run;
    const client = anthropic(familyB.key);
    const message = (model: string, content: string) => client.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content }] });
    expect(await sdkFailure(anthropic('baikal-sk-nope').messages.create({ model: 'lm-opus-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }))).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(await sdkFailure(anthropic(familyA.key).messages.create({ model: 'lm-opus-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }))).toMatchObject({ status: 403, code: 'key_scope_denied' });
    expect(await sdkFailure(message('no-such-model', 'hi'))).toMatchObject({ status: 404, code: 'model_not_found' });
    expect(await sdkFailure(client.messages.create({ model: 'lm-opus-5', max_tokens: 5, messages: [] }))).toMatchObject({ status: 422, code: 'validation_failed' });
    for (const [directive, status, code] of [...UPSTREAM_REFUSALS, ['hang', 503, 'upstream_timeout'] as const]) {
      expect(await sdkFailure(message(ECHO_MESSAGES, `x [sim:${directive}]`))).toMatchObject({ status, code });
    }
    expect(await sdkFailure(message(DEAD_MESSAGES, 'x'))).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(await sdkFailure(anthropic((await apiAccount(via, admin, null, { provider_family: 'family_b' })).key).messages.create({ model: 'lm-opus-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }))).toMatchObject({
      status: 402,
      code: 'insufficient_balance',
    });

    const cut = await drain(await client.messages.create({ model: ECHO_MESSAGES, max_tokens: 64, messages: [{ role: 'user', content: 'x [sim:words=10 cut-after=4]' }], stream: true }));
    expect(cut.text).toBe('baikal is the deepest');
    expect(cut.error).toBeTruthy();
    const translated = await drain(await client.messages.create({ model: TRANSLATED_FAMILY_B, max_tokens: 64, messages: [{ role: 'user', content: 'x [sim:words=10 cut-after=2]' }], stream: true }));
    expect(translated.text).toBe('baikal is');
    expect(translated.error).toBeTruthy();
  }, 60_000);

  it('usage records, /v1/me, REST, GraphQL (records and errors) and tRPC: every record of those failures, and no canary', async () => {
    const { stack, gw, familyA, familyB } = run;
    // Every request of the accounts above has been written (the usage batch writer runs behind the responses).
    for (const account of [familyA, familyB]) {
      const [{ n }] = (await stack.db.query<{ n: number }>('select count(*)::int as n from usage_events where user_id = $1', [account.userId])) as [{ n: number }];
      await settled(stack, account.userId, n);
    }
    const rid = requestId('canary-usage');
    const failed = await call('POST', '/v1/chat/completions', { token: familyA.key, headers: { 'x-request-id': rid }, body: chatBody(ECHO_CHAT, 'x [sim:status=500]') });
    expect(failed.status).toBe(502);
    const event = await usageEventOf(stack, rid);
    expect(event).toMatchObject({ status: 'error', error_code: 'upstream_error' });
    // The operator column names the route; the user never sees it (below).
    expect(event.upstream_id).toMatch(/^canary-echo-/);

    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString();
    const userRoutes = ['/usage?limit=200', '/usage/summary', `/usage/timeseries?bucket=hour&from=${day(-1)}&to=${day(1)}`, `/usage/${rid}`, '/auth/me', '/auth/summary', '/auth/transactions', '/keys', '/catalog/models', '/catalog/models/me', '/catalog/status', '/leaderboard/daily'];
    for (const account of [familyA, familyB]) {
      for (const route of userRoutes) {
        const response = await call('GET', route, { token: account.token });
        expect({ route, status: response.status }).toEqual({ route, status: route === `/usage/${rid}` && account === familyB ? 404 : 200 });
      }
      const me = await call('GET', '/v1/me', { token: account.key });
      expect(me.status).toBe(200);
      expect((await call('GET', '/v1/models', { token: account.key })).status).toBe(200);
    }
    const items = (await call('GET', '/usage?limit=200', { token: familyA.token })).body.items as any[];
    expect(items.some((e) => e.error_code === 'upstream_error')).toBe(true);
    expect(items.some((e) => e.error_code === 'stream_interrupted')).toBe(true);
    expect(items.every((e) => !('upstream_id' in e))).toBe(true);
    for (const route of ['/status', '/health', '/ready', '/live']) await call('GET', route);

    const usageFields = 'id requestId model status errorCode endpoint providerFamily routeGroup routeGroupLabel clientSurface amountUsd promptTokens completionTokens apiKey { id label }';
    const list = await graphqlQuery(`{ usage(limit: 200) { ${usageFields} } }`, familyA.token);
    expect(list.body.data.usage.some((e: any) => e.errorCode === 'upstream_error')).toBe(true);
    expect((await graphqlQuery(`query($id: ID!) { usageEvent(requestId: $id) { ${usageFields} } }`, familyA.token, { id: rid })).body.data.usageEvent.errorCode).toBe('upstream_error');
    expect((await graphqlQuery('{ usageSummary { totals { requests spendUsd } byModel { key label } byGroup { key label } } }', familyA.token)).status).toBe(200);

    // GraphQL errors of every kind: syntax, unknown field, unauthenticated, not found, forbidden, invalid input.
    const errors = [
      await graphqlQuery('{ usage(limit: ', familyA.token),
      await graphqlQuery('{ usage { upstreamId } }', familyA.token),
      await graphqlQuery(`{ usage { ${usageFields} } }`),
      await graphqlQuery(`query($id: ID!) { usageEvent(requestId: $id) { id } }`, familyB.token, { id: rid }),
      await graphqlQuery('mutation { adjustBalance(input: {userId: "00000000-0000-0000-0000-000000000000", amountUsd: "1", reason: "x", idempotencyKey: "y"}) { applied } }', familyA.token),
      await graphqlQuery('{ usage(limit: 100000) { id } }', familyA.token),
      await graphqlQuery('{ usage(from: "not a date") { id } }', familyA.token),
    ];
    for (const response of errors) expect(response.body.errors?.length, response.text).toBeGreaterThan(0);

    const trpc = trpcClient(gw.url, familyA.token);
    const trpcRecords = [await trpc.usage.list.query({ limit: 200 }), await trpc.usage.event.query({ requestId: rid }), await trpc.usage.summary.query({})];
    stack.received.push(JSON.stringify(trpcRecords));
    run.responses += 1;
    const trpcError = await trpcClient(gw.url, familyB.token).usage.event.query({ requestId: rid }).then(
      () => null,
      (error: Error) => JSON.stringify({ message: error.message, data: (error as any).data, shape: (error as any).shape }),
    );
    expect(trpcError).toContain('NOT_FOUND');
    stack.received.push(trpcError!);

    // Money stays exact through all of it.
    for (const account of [familyA, familyB]) {
      const balance = await ledgerBalance(stack, account.userId);
      expect(balance.ledger).toBe(balance.balance);
      expect(balance.paidMatches && balance.bonusMatches).toBe(true);
    }
  }, 60_000);

  it('zero canaries in every body, header, SSE frame, GraphQL error and usage record; no credential in the gateway log', async () => {
    const { stack, gw, admin, familyA, familyB, headerBlocks } = run;
    // Streams recorded by the tee finish on their own tick.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const bodies = stack.received.join('\n');
    const headers = headerBlocks.join('\n');
    expect(stack.received.length).toBeGreaterThan(100);
    expect(bodies).toContain('upstream_error');
    expect(bodies).toContain('stream_interrupted');
    expect(headers).toContain('x-request-id');
    const hits = allCanaries().flatMap((canary) => [...(bodies.includes(canary) ? [`body: ${canary}`] : []), ...(headers.includes(canary) ? [`header: ${canary}`] : [])]);
    expect(hits).toEqual([]);

    // Usage records as stored (every column a user can read, i.e. all but the operator's upstream, credential and cost) and the ledger.
    const rows = JSON.stringify(await stack.db.query(`select to_jsonb(e) - 'upstream_id' - 'upstream_credential_id' - 'upstream_cost_usd' as row from usage_events e union all select to_jsonb(t) from transactions t`));
    expect(allCanaries().filter((canary) => rows.includes(canary))).toEqual([]);

    // The gateway's own log: credentials never (upstream ones, nor the clients' keys and session tokens); it did log the failures.
    const log = [...gw.lines, ...stack.gateway.lines].join('\n');
    expect(log).toContain('upstream call failed');
    // The echo upstream's error texts (which carry its credential) did reach the log, scrubbed.
    expect(log).toContain('[redacted] at https://canary.invalid/v1');
    const secrets = [...credentialCanaries(), familyA.key, familyB.key, familyA.token, familyB.token, admin.token];
    expect(secrets.filter((secret) => log.includes(secret))).toEqual([]);
    // The log never says 500 on its own account: every failure above was an answer of ours.
    expect(gw.lines.filter((line) => line.includes('unhandled error'))).toEqual([]);

    const bytes = Buffer.byteLength(bodies) + Buffer.byteLength(headers) + Buffer.byteLength(rows);
    console.log(
      `canaries: ${run.responses} responses (${stack.received.length} bodies incl. streams, ${headerBlocks.length} header blocks), ${bytes} bytes and ${gw.lines.length + stack.gateway.lines.length} log lines searched for ${allCanaries().length} canaries: 0 hits`,
    );
  });
});

