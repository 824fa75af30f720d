import { Decimal } from 'decimal.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promptTokenBound } from '../../src/inference/canonical.js';
import { chatToCanonical, parseChatRequest } from '../../src/inference/formats/openai-chat/request.js';
import { ledgerBalance } from '../helpers/accounts.js';
import { answer, expectedCost, expectNothingPrivate, LUNA, LUNA_OFFICIAL, startChatStack } from '../helpers/chat-completions.js';
import { http } from '../helpers/clients.js';
import { usageDebitOf } from '../helpers/ledger.js';
import { apiAccount, createKey, fund, openaiClient, requestId, setAccountLimits, upstreamCall, usageEventOf, withId, type ApiAccount, type InferenceStack } from '../helpers/inference.js';
import { promptTokensOf } from '../../src/simulator/openai-simulator.js';

/**
 * POST /v1/chat/completions through the gateway process with the official openai client: answers, streams, tools,
 * images, /v1/me and parallel streams against a small balance. Refusals and upstream failures: chat-completions-errors.test.ts.
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
    await expectNothingPrivate(stack, client, 50);
  });
});
