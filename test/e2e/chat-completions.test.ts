import { Decimal } from 'decimal.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promptTokenBound } from '../../src/inference/canonical.js';
import { estimateTokens } from '../../src/inference/sse.js';
import { chatToCanonical, parseChatRequest } from '../../src/inference/formats/openai-chat/request.js';
import { ledgerBalance } from '../helpers/accounts.js';
import { http } from '../helpers/clients.js';
import { usageDebitOf } from '../helpers/ledger.js';
import { apiAccount, createKey, fund, openaiClient, processAdmin, requestId, setAccountLimits, setKeyLimits, startInferenceStack, upstreamCall, usageEventOf, withId, type ApiAccount, type InferenceStack } from '../helpers/inference.js';
import { promptTokensOf } from '../../src/simulator/openai-simulator.js';

/** Public cheap-group prices of gen-5.6-luna in the shipped catalog (SPEC.md 4.9), and its official list prices. */
const LUNA = { input: '0.016', output: '0.04', cacheRead: '0.0016' };
const LUNA_OFFICIAL = { input: '0.16', output: '0.4', cacheRead: '0.016' };

/** The DESIGN.md cost formula, written out independently of the gateway's code. */
function expectedCost(prices: typeof LUNA, prompt: number, completion: number, cached = 0): Decimal {
  return new Decimal(prompt - cached)
    .times(prices.input)
    .plus(new Decimal(cached).times(prices.cacheRead))
    .plus(new Decimal(completion).times(prices.output))
    .dividedBy(1_000_000)
    .toDecimalPlaces(10, Decimal.ROUND_HALF_EVEN);
}

const WORDS = 'baikal is the deepest lake on earth and holds clear cold water'.split(' ');
const answer = (n: number) => Array.from({ length: n }, (_, i) => WORDS[i % WORDS.length]).join(' ');

/** The status and our error code of a failed SDK call. */
async function failureOf(call: Promise<unknown>): Promise<{ status: number | undefined; code: string | null | undefined; message: string; headers?: Headers }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof OpenAI.APIError) return { status: error.status, code: error.code, message: error.message, headers: error.headers as Headers | undefined };
    throw error;
  }
  throw new Error('expected the call to fail');
}

let stack: InferenceStack;
let admin: { token: string; userId: string };
let funded: ApiAccount;
let client: OpenAI;

beforeAll(async () => {
  stack = await startInferenceStack();
  admin = await processAdmin(stack);
  funded = await apiAccount(stack, admin, '5');
  client = openaiClient(stack, funded.key);
});

afterAll(async () => {
  await stack?.close();
});

describe('POST /v1/chat/completions through the gateway process, with the official openai client', () => {
  it('answers JSON, bills the upstream-reported usage exactly, and records every usage-event field', async () => {
    const rid = requestId('json');
    const content = 'Tell me about Baikal [sim:words=5 cached=2]';
    const completion = await client.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content }] }, { headers: { 'x-request-id': rid } });
    const prompt = promptTokensOf([{ content }]);
    expect(completion.choices[0]!.message.content).toBe(answer(5));
    expect(completion.model).toBe('gen-5.6-luna');
    expect(completion.id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(completion.usage).toMatchObject({ prompt_tokens: prompt, completion_tokens: 5, total_tokens: prompt + 5, prompt_tokens_details: { cached_tokens: 2 } });

    // The upstream got its own model name, our credential, and the request as the client sent it.
    const upstream = upstreamCall(stack.primary, rid);
    expect(upstream.body.model).toBe(`${stack.canaries.upstreamModelPrefix}gen-5.6-luna`);
    expect(upstream.headers.authorization).toBe(`Bearer ${stack.canaries.credential}`);
    expect(upstream.body.messages).toEqual([{ role: 'user', content }]);

    const event = await usageEventOf(stack, rid);
    const amount = expectedCost(LUNA, prompt, 5, 2);
    const official = expectedCost(LUNA_OFFICIAL, prompt, 5, 2);
    expect(event).toMatchObject({
      user_id: funded.userId,
      api_key_id: funded.keyId,
      client_surface: 'api',
      provider_family: 'family_a',
      route_group: 'cheap',
      route_group_label: 'Cheap',
      endpoint: '/v1/chat/completions',
      model: 'gen-5.6-luna',
      status: 'success',
      error_code: null,
      prompt_tokens: prompt,
      completion_tokens: 5,
      cache_read_tokens: 2,
      cache_write_tokens: null,
      total_tokens: prompt + 5,
      public_request_usd_per_generation: null,
    });
    expect(event.completed_at).not.toBeNull();
    expect(event.latency_ms).toBeGreaterThanOrEqual(0);
    expect(new Decimal(event.cache_hit_ratio).equals(new Decimal(2).dividedBy(prompt).toDecimalPlaces(4))).toBe(true);
    expect(new Decimal(event.public_input_usd_per_1m).equals(LUNA.input)).toBe(true);
    expect(new Decimal(event.public_output_usd_per_1m).equals(LUNA.output)).toBe(true);
    expect(new Decimal(event.public_cache_read_usd_per_1m).equals(LUNA.cacheRead)).toBe(true);
    expect(new Decimal(event.public_cache_write_usd_per_1m).equals('0.018')).toBe(true);
    expect(new Decimal(event.amount_usd).equals(amount)).toBe(true);
    expect(new Decimal(event.official_cost_usd).equals(official)).toBe(true);
    expect(new Decimal(event.saved_usd).equals(official.minus(amount))).toBe(true);

    const debit = await usageDebitOf(stack.db, event.id);
    expect(debit).toMatchObject({ kind: 'usage', api_key_id: funded.keyId, provider: 'family_a' });
    expect(event.transaction_id).toBe(debit!.id);
    // The account's ledger as its owner reads it shows the request as a row of its own.
    const shown = await http(stack.url, 'GET', '/auth/transactions?limit=100', { token: funded.token });
    const row = (shown.body as Record<string, unknown>[]).find((candidate) => candidate.id === event.id);
    expect(row).toEqual({
      id: event.id, user_id: funded.userId, amount_usd: expect.any(String), kind: 'usage', api_key_id: funded.keyId,
      provider: 'family_a', model: 'gen-5.6-luna', prompt_tokens: prompt, completion_tokens: 5, created_at: new Date(event.created_at).toISOString(),
    });
    expect(new Decimal(row!.amount_usd as string).equals(amount.negated())).toBe(true);
    const balance = await ledgerBalance(stack, funded.userId);
    expect(balance.ledger).toBe(balance.balance);
    expect(balance.paidMatches && balance.bonusMatches).toBe(true);
  });

  it('streams chunk by chunk; usage is always requested upstream, and shown only when the client asks', async () => {
    const rid = requestId('stream');
    const content = 'Stream it [sim:words=12]';
    const stream = await client.chat.completions.create(
      { model: 'gen-5.6-luna', messages: [{ role: 'user', content }], stream: true, stream_options: { include_usage: true } },
      { headers: { 'x-request-id': rid } },
    );
    let text = '';
    const ids = new Set<string>();
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      ids.add(chunk.id);
      expect(chunk.model).toBe('gen-5.6-luna');
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    const prompt = promptTokensOf([{ content }]);
    expect(text).toBe(answer(12));
    expect(finish).toBe('stop');
    expect(ids.size).toBe(1);
    expect(usage).toMatchObject({ prompt_tokens: prompt, completion_tokens: 12 });
    expect(upstreamCall(stack.primary, rid).body.stream_options).toEqual({ include_usage: true });
    const event = await usageEventOf(stack, rid);
    expect(event).toMatchObject({ status: 'success', prompt_tokens: prompt, completion_tokens: 12 });
    expect(new Decimal(event.amount_usd).equals(expectedCost(LUNA, prompt, 12))).toBe(true);

    // Without include_usage the client sees no usage chunk, but the gateway still bills the upstream's usage.
    const quiet = requestId('stream-quiet');
    const plain = await client.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content }], stream: true }, { headers: { 'x-request-id': quiet } });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of plain) chunks.push(chunk);
    expect(chunks.some((c) => c.usage)).toBe(false);
    expect(chunks.every((c) => c.choices.length === 1)).toBe(true);
    expect(upstreamCall(stack.primary, quiet).body.stream_options).toEqual({ include_usage: true });
    expect(await usageEventOf(stack, quiet)).toMatchObject({ status: 'success', completion_tokens: 12 });
  });

  it('passes function tools through, as JSON and as streamed argument deltas', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } },
    ];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Irkutsk? [sim:tool=get_weather]' }];
    const jsonId = requestId('tools-json');
    const json = await client.chat.completions.create({ model: 'gen-5.6-luna', messages, tools }, withId(jsonId));
    const call = json.choices[0]!.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(json.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Irkutsk', unit: 'celsius' });
    expect(upstreamCall(stack.primary, jsonId).body.tools).toEqual(tools);

    const stream = await client.chat.completions.create({ model: 'gen-5.6-luna', messages, tools, stream: true });
    let name = '';
    let args = '';
    for await (const chunk of stream) {
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        name += delta.function?.name ?? '';
        args += delta.function?.arguments ?? '';
      }
    }
    expect(name).toBe('get_weather');
    expect(JSON.parse(args)).toEqual({ city: 'Irkutsk', unit: 'celsius' });

    // A tool result sent back is forwarded as is.
    const followUp: OpenAI.ChatCompletionMessageParam[] = [...messages, json.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '{"temp": -20}' }, { role: 'user', content: 'So? [sim:words=3]' }];
    const finalId = requestId('tools-follow-up');
    const final = await client.chat.completions.create({ model: 'gen-5.6-luna', messages: followUp, tools }, withId(finalId));
    expect(final.choices[0]!.message.content).toBe(answer(3));
    expect(upstreamCall(stack.primary, finalId).body.messages[2]).toEqual({ role: 'tool', tool_call_id: call.id, content: '{"temp": -20}' });
  });

  it('accepts multi-part content with images on a vision model, and refuses images on a model without vision (422)', async () => {
    const parts: OpenAI.ChatCompletionContentPart[] = [
      { type: 'text', text: 'What is in this picture? [sim:words=4]' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${Buffer.alloc(3_000, 7).toString('base64')}` } },
    ];
    const visionId = requestId('vision');
    const done = await client.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: parts }] }, withId(visionId));
    expect(done.choices[0]!.message.content).toBe(answer(4));
    expect(upstreamCall(stack.primary, visionId).body.messages[0].content).toEqual(parts);

    const refused = await http(stack.url, 'POST', '/v1/chat/completions', { token: funded.key, body: { model: 'zeta-5.2', messages: [{ role: 'user', content: parts }] } });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual([{ loc: ['body', 'messages', 0, 'content', 1], msg: 'The model zeta-5.2 does not accept images', type: 'value_error' }]);
    expect(refused.body.error).toMatchObject({ type: 'invalid_request_error', code: 'validation_failed', param: 'body.messages.0.content.1' });
  });
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

describe('GET /v1/me', () => {
  it('shows the key, its scope, month spend, balance and whether it can spend', async () => {
    const account = await apiAccount(stack, admin, '2');
    const meClient = openaiClient(stack, account.key);
    const rid = requestId('me');
    await meClient.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi [sim:words=7]' }] }, { headers: { 'x-request-id': rid } });
    const event = await usageEventOf(stack, rid);
    const me = await http(stack.url, 'GET', '/v1/me', { token: account.key });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      object: 'api_key',
      id: account.keyId,
      provider_family: 'family_a',
      route_group: 'cheap',
      pricing_plan: 'siberia',
      monthly_spend_cap: null,
      account: { id: account.userId },
      can_spend: true,
    });
    expect(new Decimal(me.body.month_spend_usd).equals(event.amount_usd)).toBe(true);
    expect(new Decimal(me.body.balance_usd).equals(new Decimal(2).minus(event.amount_usd))).toBe(true);
    const balance = await ledgerBalance(stack, account.userId);
    expect(new Decimal(balance.balance).equals(me.body.balance_usd)).toBe(true);
    expect((await http(stack.url, 'GET', '/v1/me')).status).toBe(401);
  });
});

describe('concurrency against a small balance', () => {
  it('100 parallel streams on 13 keys with a balance for about 30: the admitted are billed exactly, the rest get 402, never below zero, ledger = balance', async () => {
    const owner = await apiAccount(stack, admin, null);
    // 100 at once from one account: the balance, not the account's concurrency limit, is what refuses here.
    await setAccountLimits(stack, admin, owner.userId, { concurrencyLimit: 100 });
    const keys = [owner.key, ...(await Promise.all(Array.from({ length: 12 }, (_, i) => createKey(stack, owner.token, { label: `parallel ${i}` })))).map((k) => k.key)];
    const content = 'Count slowly [sim:words=10 chunk-delay=100]';
    const maxTokens = 50;
    // The gateway holds the worst case: every prompt byte as a token at the dearest input-side price, plus max_tokens of output.
    const promptBound = promptTokenBound(chatToCanonical(parseChatRequest({ model: 'gen-5.6-luna', messages: [{ role: 'user', content }], stream: true, max_tokens: maxTokens })));
    const hold = new Decimal(promptBound).times('0.018').plus(new Decimal(maxTokens).times(LUNA.output)).dividedBy(1_000_000).toDecimalPlaces(10, Decimal.ROUND_UP);
    const start = hold.times(30.5).toDecimalPlaces(10, Decimal.ROUND_DOWN);
    await fund(stack, admin, owner.userId, start.toFixed());

    const clients = keys.map((key) => openaiClient(stack, key));
    const outcomes = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        try {
          const stream = await clients[i % keys.length]!.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content }], stream: true, max_tokens: maxTokens });
          let text = '';
          for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
          return text === answer(10) ? 'ok' : `short: ${text}`;
        } catch (error) {
          return error instanceof OpenAI.APIError ? `${error.status}:${error.code}` : String(error);
        }
      }),
    );
    const admitted = outcomes.filter((o) => o === 'ok').length;
    expect(outcomes.filter((o) => o !== 'ok' && o !== '402:insufficient_balance')).toEqual([]);
    expect(admitted).toBeGreaterThanOrEqual(30);
    expect(admitted).toBeLessThanOrEqual(36);

    const until = Date.now() + 10_000;
    let events: Record<string, any>[] = [];
    while (Date.now() < until) {
      events = await stack.db.query(`select * from usage_events where user_id = $1`, [owner.userId]);
      if (events.length === 100) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const succeeded = events.filter((e) => e.status === 'success');
    expect(succeeded).toHaveLength(admitted);
    expect(events.filter((e) => e.status === 'error' && e.error_code === 'insufficient_balance')).toHaveLength(100 - admitted);
    const each = expectedCost(LUNA, promptTokensOf([{ content }]), 10);
    for (const event of succeeded) expect(new Decimal(event.amount_usd).equals(each)).toBe(true);

    const balance = await ledgerBalance(stack, owner.userId);
    expect(new Decimal(balance.balance).equals(start.minus(each.times(admitted)))).toBe(true);
    expect(new Decimal(balance.balance).isNegative()).toBe(false);
    expect(balance.ledger).toBe(balance.balance);
    expect(balance.paidMatches && balance.bonusMatches).toBe(true);
  });
});

describe('nothing private leaks', () => {
  it('no canary (credential, upstream id, host, upstream model name, upstream error text) in any response, stream or usage record', async () => {
    // A few more calls whose upstream answers carry the canary error text.
    for (const directive of ['[sim:status=401]', '[sim:status=404]', '[sim:status=503]', '[sim:status=422]']) {
      await failureOf(client.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: `hi ${directive}` }] }));
    }
    const everything = stack.received.join('\n');
    expect(stack.received.length).toBeGreaterThan(50);
    expect(everything).toContain('chatcmpl-');
    for (const canary of stack.canaries.all()) expect(everything, canary).not.toContain(canary);

    // User-visible records: every usage-event column except the operator-only upstream id, and the ledger.
    const rows = await stack.db.query(`select to_jsonb(e) - 'upstream_id' - 'upstream_credential_id' - 'upstream_cost_usd' as row from usage_events e union all select to_jsonb(t) from transactions t`);
    const records = JSON.stringify(rows);
    for (const canary of stack.canaries.all()) expect(records, canary).not.toContain(canary);
  });
});
