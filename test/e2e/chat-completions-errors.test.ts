import { Decimal } from 'decimal.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { estimateTokens } from '../../src/inference/sse.js';
import { answer, expectedCost, expectNothingPrivate, failureOf, LUNA, startChatStack } from '../helpers/chat-completions.js';
import { http } from '../helpers/clients.js';
import { usageDebitOf } from '../helpers/ledger.js';
import { apiAccount, createKey, openaiClient, requestId, setKeyLimits, upstreamCall, usageEventOf, type ApiAccount, type InferenceStack } from '../helpers/inference.js';

/**
 * POST /v1/chat/completions through the gateway process with the official openai client, when it does not answer:
 * the gateway's refusals, each in the OpenAI error shape, and the upstream's failures. Answers: chat-completions.test.ts.
 */

let stack: InferenceStack;
let admin: { token: string; userId: string };
let funded: ApiAccount;
let client: OpenAI;

beforeAll(async () => {
  ({ stack, admin, funded, client } = await startChatStack());
});

afterAll(async () => {
  await stack?.close();
});

describe('refusals, each in the OpenAI error shape with our own code', () => {
  it('401: missing key, key in the wrong header, unknown key, revoked key', async () => {
    const missing = await http(stack.url, 'POST', '/v1/chat/completions', { body: { model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi' }] } });
    expect(missing.status).toBe(401);
    expect(missing.body.error).toMatchObject({ code: 'missing_api_key', type: 'authentication_error' });
    expect(missing.headers.get('x-request-id')).toBeTruthy();

    const wrongHeader = await http(stack.url, 'POST', '/v1/chat/completions', { headers: { 'x-api-key': funded.key }, body: { model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi' }] } });
    expect(wrongHeader.status).toBe(401);
    expect(wrongHeader.body.error.code).toBe('wrong_auth_header');

    const unknown = await failureOf(openaiClient(stack, 'baikal-sk-not-a-real-key').chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi' }] }));
    expect(unknown).toMatchObject({ status: 401, code: 'invalid_api_key' });

    const doomed = await createKey(stack, funded.token, { label: 'to revoke' });
    const doomedClient = openaiClient(stack, doomed.key);
    await doomedClient.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi [sim:words=1]' }] });
    expect((await http(stack.url, 'DELETE', `/keys/${doomed.id}`, { token: funded.token })).status).toBe(204);
    expect(await failureOf(doomedClient.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi' }] }))).toMatchObject({ status: 401, code: 'invalid_api_key' });
  });

  it('403 for a model outside the key scope and for a family-b key on chat completions; 400 for an image model; 404 for an unknown model', async () => {
    const before = stack.primary.requests.length;
    expect(await failureOf(client.chat.completions.create({ model: 'delta-4.5', messages: [{ role: 'user', content: 'hi' }] }))).toMatchObject({ status: 403, code: 'key_scope_denied' });

    const familyB = await apiAccount(stack, admin, '1', { provider_family: 'family_b' });
    const bClient = openaiClient(stack, familyB.key);
    const refused = await failureOf(bClient.chat.completions.create({ model: 'lm-opus-5', messages: [{ role: 'user', content: 'hi' }] }));
    expect(refused).toMatchObject({ status: 403, code: 'key_scope_denied' });
    expect(refused.message).toContain('not accepted on /v1/chat/completions');

    const image = await failureOf(client.chat.completions.create({ model: 'img-1.5', messages: [{ role: 'user', content: 'a lake' }] }));
    expect(image).toMatchObject({ status: 400, code: 'endpoint_not_supported_for_model' });
    expect(image.message).toContain('/v1/images/generations');

    expect(await failureOf(client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }))).toMatchObject({ status: 404, code: 'model_not_found' });
    expect(stack.primary.requests.length).toBe(before);
  });

  it('402 without balance and past the key spend cap, recorded as failed usage events; nothing is forwarded', async () => {
    const before = stack.primary.requests.length;
    const broke = await apiAccount(stack, admin, null);
    const rid = requestId('broke');
    expect(await failureOf(openaiClient(stack, broke.key).chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-request-id': rid } }))).toMatchObject({
      status: 402,
      code: 'insufficient_balance',
    });
    expect(await usageEventOf(stack, rid)).toMatchObject({ status: 'error', error_code: 'insufficient_balance', prompt_tokens: null });
    expect(new Decimal((await usageEventOf(stack, rid)).amount_usd).isZero()).toBe(true);

    const capped = await apiAccount(stack, admin, '1');
    await setKeyLimits(stack, admin, capped.keyId, { monthlySpendCap: '0.000001' });
    expect(await failureOf(openaiClient(stack, capped.key).chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1000 }))).toMatchObject({
      status: 402,
      code: 'spend_cap_reached',
    });
    expect(stack.primary.requests.length).toBe(before);
  });

  it('413 for a body over 25 MiB before anything is forwarded; 422 for bad JSON and invalid fields', async () => {
    const before = stack.primary.requests.length;
    const huge = JSON.stringify({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'x'.repeat(26 * 1024 * 1024) }] });
    const tooLarge = await http(stack.url, 'POST', '/v1/chat/completions', { token: funded.key, rawBody: huge });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error.code).toBe('payload_too_large');

    const badJson = await http(stack.url, 'POST', '/v1/chat/completions', { token: funded.key, rawBody: '{"model": "gen-5.6-luna", ' });
    expect(badJson.status).toBe(422);
    expect(badJson.body.detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });

    const invalid = await http(stack.url, 'POST', '/v1/chat/completions', { token: funded.key, body: { model: 'gen-5.6-luna', messages: [{ role: 'wizard', content: 'hi' }], max_tokens: 0 } });
    expect(invalid.status).toBe(422);
    expect(invalid.body.detail.map((d: any) => d.loc.join('.')).sort()).toEqual(['body.max_tokens', 'body.messages.0.role']);
    expect(await failureOf(client.chat.completions.create({ model: 'gen-5.6-luna', messages: [] }))).toMatchObject({ status: 422 });
    expect(stack.primary.requests.length).toBe(before);
  });

  it('429 with Retry-After past the per-key rate and concurrency limits; slots come back when requests end', async () => {
    const limited = await apiAccount(stack, admin, '1');
    await setKeyLimits(stack, admin, limited.keyId, { rpmLimit: 2 });
    const limitedClient = openaiClient(stack, limited.key);
    const ask = () => limitedClient.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi [sim:words=1]' }] });
    await ask();
    await ask();
    const third = await failureOf(ask());
    expect(third).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(Number(third.headers?.get('retry-after'))).toBeGreaterThan(0);

    const single = await apiAccount(stack, admin, '1');
    await setKeyLimits(stack, admin, single.keyId, { concurrencyLimit: 1 });
    const singleClient = openaiClient(stack, single.key);
    const slow = await singleClient.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'slow [sim:words=10 chunk-delay=50]' }], stream: true });
    const second = await failureOf(singleClient.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi' }] }));
    expect(second).toMatchObject({ status: 429, code: 'concurrency_limited' });
    expect(second.headers?.get('retry-after')).toBe('1');
    for await (const _ of slow) void _;
    const after = await singleClient.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'again [sim:words=2]' }] });
    expect(after.choices[0]!.message.content).toBe(answer(2));
  });
});

describe('upstream failures', () => {
  it('fails over to the fallback upstream before the first byte', async () => {
    const rid = requestId('failover');
    const done = await client.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hello [sim:words=3 down=primary]' }] }, { headers: { 'x-request-id': rid } });
    expect(done.choices[0]!.message.content).toBe(answer(3));
    expect(stack.primary.requestsFor(rid)).toHaveLength(1);
    expect(upstreamCall(stack.backup, rid).headers.authorization).toBe(`Bearer ${stack.canaries.backupCredential}`);
    expect(await usageEventOf(stack, rid)).toMatchObject({ status: 'success', upstream_id: stack.canaries.upstreamIds[1] });
  });

  it('maps upstream 429, 5xx, timeouts and rejections to our 429, 502, 503 and 400, with no upstream detail; nothing is billed', async () => {
    const cases: [string, number, string][] = [
      ['[sim:status=429]', 429, 'upstream_rate_limited'],
      ['[sim:status=500]', 502, 'upstream_error'],
      ['[sim:hang]', 503, 'upstream_timeout'],
      ['[sim:status=400]', 400, 'request_rejected'],
    ];
    for (const [directive, status, code] of cases) {
      const rid = requestId(`upstream-${status}`);
      const failure = await failureOf(client.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: `hi ${directive}` }] }, { headers: { 'x-request-id': rid } }));
      expect(failure, directive).toMatchObject({ status, code });
      if (status === 429 || status === 503) expect(Number(failure.headers?.get('retry-after'))).toBeGreaterThan(0);
      const event = await usageEventOf(stack, rid);
      expect(event).toMatchObject({ status: 'error', error_code: code });
      expect(new Decimal(event.amount_usd).isZero()).toBe(true);
      expect(await usageDebitOf(stack.db, event.id)).toBeUndefined();
    }
  });

  it('a stream cut mid-way ends with an error event; what was delivered is billed', async () => {
    const rid = requestId('cut');
    const content = 'cut me [sim:words=20 cut-after=5]';
    const stream = await client.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content }], stream: true }, { headers: { 'x-request-id': rid } });
    let text = '';
    const error = await (async () => {
      try {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      } catch (e) {
        return e as InstanceType<typeof OpenAI.APIError>;
      }
      return null;
    })();
    expect(text).toBe(answer(5));
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error!.message).not.toContain(stack.canaries.errorDetail);
    const event = await usageEventOf(stack, rid);
    const prompt = estimateTokens(content);
    const completion = estimateTokens(answer(5));
    expect(event).toMatchObject({ status: 'error', error_code: 'stream_interrupted', prompt_tokens: prompt, completion_tokens: completion, cache_read_tokens: null });
    expect(new Decimal(event.amount_usd).equals(expectedCost(LUNA, prompt, completion))).toBe(true);
    expect(await usageDebitOf(stack.db, event.id)).toMatchObject({ kind: 'usage' });
  });

  it('a client abort cancels the upstream call within 1 s, bills what was produced, and frees the slot and the hold', async () => {
    const aborter = await apiAccount(stack, admin, '1');
    await setKeyLimits(stack, admin, aborter.keyId, { concurrencyLimit: 1 });
    const abortClient = openaiClient(stack, aborter.key);
    const rid = requestId('abort');
    const controller = new AbortController();
    const stream = await abortClient.chat.completions.create(
      { model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'long answer [sim:words=400 chunk-delay=20]' }], stream: true },
      { headers: { 'x-request-id': rid }, signal: controller.signal },
    );
    let received = 0;
    let abortedAt = 0;
    await (async () => {
      try {
        for await (const _ of stream) {
          received += 1;
          if (received === 10) {
            abortedAt = Date.now();
            controller.abort();
          }
        }
      } catch {
        // the abort ends the iteration
      }
    })();
    expect(abortedAt).toBeGreaterThan(0);
    const upstream = stack.primary.requests.find((r) => r.body.messages[0].content.includes('long answer') && r.headers.authorization)!;
    const until = Date.now() + 2_000;
    while (upstream.endedAt === undefined && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(upstream.aborted).toBe(true);
    expect(upstream.endedAt! - abortedAt).toBeLessThan(1_000);

    const event = await usageEventOf(stack, rid);
    expect(event).toMatchObject({ status: 'cancelled', error_code: 'client_closed' });
    expect(event.completion_tokens).toBeGreaterThan(0);
    expect(event.completion_tokens).toBeLessThan(400);
    expect(new Decimal(event.amount_usd).greaterThan(0)).toBe(true);
    expect(await usageDebitOf(stack.db, event.id)).toMatchObject({ kind: 'usage' });

    // The hold is gone (available = balance) and the only slot is free again.
    const me = await http(stack.url, 'GET', '/v1/me', { token: aborter.key });
    expect(me.body.available_usd).toBe(me.body.balance_usd);
    const next = await abortClient.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'next [sim:words=2]' }] });
    expect(next.choices[0]!.message.content).toBe(answer(2));
  });
});

describe('nothing private leaks', () => {
  it('no canary in any refusal or failure, nor in any usage record they left', async () => {
    await expectNothingPrivate(stack, client, 20);
  });
});
