import { Decimal } from 'decimal.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../helpers/clients.js';
import { anthropicClient, apiAccount, openaiClient, processAdmin, requestId, startInferenceStack, TRANSLATED_FAMILY_B, upstreamCall, usageEventOf, type ApiAccount, type InferenceStack } from '../helpers/inference.js';

/**
 * Responses state as OpenAI keeps it (store, previous_response_id, item_reference, GET/DELETE), on a
 * route translated to chat completions and on a route whose upstream serves the Responses API
 * natively; and the other same-format path, Anthropic to Anthropic, keeping thinking blocks.
 * The simulator keeps no state and refuses previous_response_id and item_reference, so every
 * follow-up here passes only because the gateway expanded the conversation itself.
 */

const TRANSLATED = 'gen-5.6-luna';
const NATIVE = 'gen-5.6-sol';

let stack: InferenceStack;
let owner: ApiAccount;
let stranger: ApiAccount;
let familyB: ApiAccount;

beforeAll(async () => {
  // Strict upstreams: a field that leaks into the wrong format is refused there, and the test fails.
  stack = await startInferenceStack({}, { nativeResponses: [NATIVE], strictFields: true });
  const admin = await processAdmin(stack);
  [owner, stranger, familyB] = await Promise.all([apiAccount(stack, admin, '5'), apiAccount(stack, admin, '5'), apiAccount(stack, admin, '5', { provider_family: 'family_b' })]);
});

afterAll(async () => {
  await stack?.close();
});

/** The body the upstream got for one gateway request (by the request id its answer carried). */
function upstreamBodyOf(answer: { _request_id?: string | null }, path: string): any {
  const call = upstreamCall(stack.primary, answer._request_id!);
  expect(call.path).toBe(path);
  return call.body;
}

const text = (response: OpenAI.Responses.Response) => response.output_text;

describe.each([
  { route: 'translated to chat completions', model: TRANSLATED, upstreamPath: '/v1/chat/completions' },
  { route: 'native Responses upstream', model: NATIVE, upstreamPath: '/v1/responses' },
])('Responses state, $route', ({ model, upstreamPath }) => {
  /** The user and assistant texts the upstream received, in order, whatever its format. */
  function conversationSeen(answer: { _request_id?: string | null }): string[] {
    const body = upstreamBodyOf(answer, upstreamPath);
    const items: any[] = upstreamPath === '/v1/responses' ? body.input : body.messages;
    const textOf = (content: unknown): string =>
      typeof content === 'string' ? content : Array.isArray(content) ? content.map((p: any) => p.text ?? '').join('') : '';
    return items.filter((i) => i.role === 'user' || i.role === 'assistant').map((i) => textOf(i.content));
  }

  it('keeps a response by default, continues it with previous_response_id, and bills each turn its own tokens', async () => {
    const client = openaiClient(stack, owner.key);
    const rid1 = requestId('r1');
    const first = await client.responses.create({ model, input: 'Name a lake [sim:words=3]' }, { headers: { 'x-request-id': rid1 } });
    expect(text(first)).toBe('baikal is the');
    expect(first.id).toMatch(/^resp_/);

    const retrieved = await client.responses.retrieve(first.id);
    expect(retrieved.id).toBe(first.id);
    expect(text(retrieved)).toBe('baikal is the');
    const inputs = await client.responses.inputItems.list(first.id);
    expect(inputs.data).toHaveLength(1);
    expect(JSON.stringify(inputs.data[0])).toContain('Name a lake');

    const rid = requestId('r2');
    const second = await client.responses.create({ model, previous_response_id: first.id, input: 'And another [sim:words=2]' }, { headers: { 'x-request-id': rid } });
    expect(text(second)).toBe('baikal is');
    expect(conversationSeen(second)).toEqual(['Name a lake [sim:words=3]', 'baikal is the', 'And another [sim:words=2]']);

    // Each turn is billed once, on what its upstream call reported (the second includes the first turn as input).
    const [one, two] = [await usageEventOf(stack, rid1), await usageEventOf(stack, rid)];
    expect(two.prompt_tokens).toBeGreaterThan(one.prompt_tokens);
    expect(new Decimal(two.amount_usd).greaterThan(0)).toBe(true);
    expect(second.usage!.input_tokens).toBe(two.prompt_tokens);
  });

  it('resolves item_reference items to stored items of the same account', async () => {
    const client = openaiClient(stack, owner.key);
    const first = await client.responses.create({ model, input: 'Tell me [sim:words=4]' });
    const assistantItem = first.output.find((item) => item.type === 'message')!;
    const followed = await client.responses.create({
      model,
      input: [{ type: 'message', role: 'user', content: 'Tell me [sim:words=4]' }, { type: 'item_reference', id: assistantItem.id! }, { type: 'message', role: 'user', content: 'Go on [sim:words=1]' }],
    });
    expect(conversationSeen(followed)).toEqual(['Tell me [sim:words=4]', 'baikal is the deepest', 'Go on [sim:words=1]']);
  });

  it('a stream is kept before its last event reaches the client, so the next turn can continue it at once', async () => {
    const client = openaiClient(stack, owner.key);
    const stream = client.responses.stream({ model, input: 'Stream it [sim:words=5]' });
    const final = await stream.finalResponse();
    expect(text(final)).toBe('baikal is the deepest lake');
    const next = await client.responses.create({ model, previous_response_id: final.id, input: 'More [sim:words=1]' });
    expect(text(next)).toBe('baikal');
    expect(conversationSeen(next)).toEqual(['Stream it [sim:words=5]', 'baikal is the deepest lake', 'More [sim:words=1]']);
  });

  it('another account sees a 404 for the id, never its content, and cannot continue or delete it', async () => {
    const mine = await openaiClient(stack, owner.key).responses.create({ model, input: 'Secret plans [sim:words=2]' });
    const theirs = openaiClient(stack, stranger.key);
    await expect(theirs.responses.retrieve(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(theirs.responses.inputItems.list(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(theirs.responses.create({ model, previous_response_id: mine.id, input: 'hi' })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const itemId = mine.output.find((item) => item.type === 'message')!.id!;
    await expect(theirs.responses.create({ model, input: [{ type: 'item_reference', id: itemId }] })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(theirs.responses.delete(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const raw = await http(stack.url, 'GET', `/v1/responses/${mine.id}`, { headers: { authorization: `Bearer ${stranger.key}` } });
    expect(raw.status).toBe(404);
    expect(raw.text).not.toContain('Secret plans');
    expect(text(await openaiClient(stack, owner.key).responses.retrieve(mine.id))).toBe('baikal is');
  });

  it('store: false keeps nothing; DELETE removes a stored response', async () => {
    const client = openaiClient(stack, owner.key);
    const unstored = await client.responses.create({ model, input: 'Forget this [sim:words=2]', store: false });
    await expect(client.responses.retrieve(unstored.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const stored = await client.responses.create({ model, input: 'Keep this [sim:words=2]' });
    const deleted = await http(stack.url, 'DELETE', `/v1/responses/${stored.id}`, { headers: { authorization: `Bearer ${owner.key}` } });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id: stored.id, object: 'response', deleted: true });
    await expect(client.responses.retrieve(stored.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('stored responses outlive the process that made them', () => {
  it('another gateway process on the same database serves and continues them', async () => {
    const made = await openaiClient(stack, owner.key).responses.create({ model: TRANSLATED, input: 'Remember [sim:words=2]' });
    const peer = await stack.spawnPeer();
    try {
      const client = new OpenAI({ apiKey: owner.key, baseURL: `${peer.url}/v1`, maxRetries: 0 });
      expect(text(await client.responses.retrieve(made.id))).toBe('baikal is');
      const next = await client.responses.create({ model: TRANSLATED, previous_response_id: made.id, input: 'Next [sim:words=1]' });
      expect(text(next)).toBe('baikal');
    } finally {
      peer.child.kill('SIGTERM');
      await peer.exited;
    }
  });
});

describe('native Responses upstream', () => {
  it('keeps reasoning items and hosted tool calls, and bills the reasoning tokens it reports', async () => {
    const client = openaiClient(stack, owner.key);
    const rid = requestId('native-reasoning');
    const response = await client.responses.create(
      { model: NATIVE, input: 'Think first [sim:words=3]', reasoning: { effort: 'medium', summary: 'auto' }, include: ['reasoning.encrypted_content'], tools: [{ type: 'web_search' }] },
      { headers: { 'x-request-id': rid } },
    );
    const types = response.output.map((item) => item.type);
    expect(types[0]).toBe('reasoning');
    expect(types).toContain('web_search_call');
    expect(types.at(-1)).toBe('message');
    const reasoning = response.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.encrypted_content).toEqual(expect.any(String));
    expect(response.usage!.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    const event = await usageEventOf(stack, rid);
    expect(event.completion_tokens).toBe(response.usage!.output_tokens);
    // The hosted tool went to the upstream as the client sent it.
    expect(upstreamBodyOf(response, '/v1/responses').tools).toEqual([{ type: 'web_search' }]);

    // Its reasoning item goes back on the next turn, as the Responses API wants it.
    const then = await client.responses.create({ model: NATIVE, previous_response_id: response.id, input: 'Then? [sim:words=1]', reasoning: { effort: 'medium' } });
    const sent = upstreamBodyOf(then, '/v1/responses');
    expect(sent.previous_response_id).toBeUndefined();
    expect(sent.input.some((item: any) => item.type === 'reasoning' && item.encrypted_content === reasoning.encrypted_content)).toBe(true);
  });

  it('streams the upstream events with our response id and the public model', async () => {
    const client = openaiClient(stack, owner.key);
    const events: string[] = [];
    const stream = client.responses.stream({ model: NATIVE, input: 'Stream natively [sim:words=4]', reasoning: { effort: 'low', summary: 'auto' } });
    stream.on('event', (event) => events.push(event.type));
    const final = await stream.finalResponse();
    expect(final.model).toBe(NATIVE);
    expect(final.id).toMatch(/^resp_/);
    expect(final.output_text).toBe('baikal is the deepest');
    expect(events).toContain('response.reasoning_summary_text.delta');
    expect(events).toContain('response.completed');
    for (const body of stack.received) for (const canary of stack.canaries.all()) expect(body).not.toContain(canary);
  });
});

describe('hosted tools on a route that cannot run them', () => {
  it('are withheld from the model and named in x-withheld-tools; function tools still go', async () => {
    const response = await http(stack.url, 'POST', '/v1/responses', {
      headers: { authorization: `Bearer ${owner.key}` },
      body: { model: TRANSLATED, input: 'Search [sim:words=2]', tools: [{ type: 'web_search' }, { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } }] },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-withheld-tools')).toBe('web_search');
    const sent = upstreamBodyOf({ _request_id: response.headers.get('x-request-id') }, '/v1/chat/completions');
    expect(sent.tools.map((t: any) => t.function.name)).toEqual(['get_weather']);
  });
});

describe('Anthropic to Anthropic: thinking blocks survive in both directions', () => {
  const tools = [{ name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }];

  it('a tool loop with thinking on: the signed thinking block comes back and is accepted by the upstream', async () => {
    const client = anthropicClient(stack, familyB.key);
    const question = { role: 'user' as const, content: 'Weather in Irkutsk? [sim:tool=get_weather]' };
    const first = await client.messages.create({ model: 'lm-opus-5', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, tools, messages: [question] });
    expect(first.content[0]).toMatchObject({ type: 'thinking', thinking: expect.any(String), signature: expect.any(String) });
    const call = first.content.find((block) => block.type === 'tool_use')!;
    expect(call).toMatchObject({ name: 'get_weather' });

    // The upstream checks the signature of the thinking block it issued: dropped or altered, this is a 400.
    const second = await client.messages.create({
      model: 'lm-opus-5',
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools,
      messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '-5 C' }] }],
    });
    expect(second.stop_reason).toBe('end_turn');
    const sent = upstreamBodyOf(second, '/v1/messages');
    expect(sent.messages[1].content[0]).toEqual(first.content[0]);
  });

  it('streams thinking and signature deltas, with input usage in message_start', async () => {
    const client = anthropicClient(stack, familyB.key);
    const stream = client.messages.stream({ model: 'lm-opus-5', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'Think [sim:words=3]' }] });
    let startUsage: { input_tokens: number } | null = null;
    stream.on('streamEvent', (event) => {
      if (event.type === 'message_start') startUsage = event.message.usage;
    });
    const final = await stream.finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'thinking', signature: expect.any(String) });
    expect(final.content.at(-1)).toMatchObject({ type: 'text', text: 'baikal is the' });
    expect(startUsage!.input_tokens).toBeGreaterThan(0);
    expect(final.usage.input_tokens).toBe(startUsage!.input_tokens);
  });
});

describe('what a translating route cannot honour is refused before anything is held or sent', () => {
  it('a Messages field with no chat counterpart (top_k) on a family-b model served by a chat upstream: 422 naming it, nothing sent, nothing billed', async () => {
    const before = stack.primary.requests.length;
    const rid = requestId('top-k');
    const answer = await http(stack.url, 'POST', '/v1/messages', {
      headers: { 'x-api-key': familyB.key, 'anthropic-version': '2023-06-01', 'x-request-id': rid },
      body: { model: TRANSLATED_FAMILY_B, max_tokens: 16, top_k: 5, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.type).toBe('error');
    expect(JSON.stringify(answer.body.detail)).toContain('top_k');
    expect(stack.primary.requests.slice(before).filter((r) => r.path !== '/v1/videos' && !r.path.startsWith('/v1/videos/'))).toEqual([]);
    const [row] = await stack.db.query('select 1 from usage_events where request_id = $1 and amount_usd > 0', [rid]);
    expect(row).toBeUndefined();
  });

  it('with the operator setting hostedTools: refuse, a hosted tool on a translated route is a 400 naming it; a native route still serves it', async () => {
    const strictOperator = await startInferenceStack({}, { nativeResponses: [NATIVE], operator: { inference: { hostedTools: 'refuse' } } });
    try {
      const admin = await processAdmin(strictOperator);
      const account = await apiAccount(strictOperator, admin, '1');
      const body = (model: string) => ({ model, input: 'Search [sim:words=2]', tools: [{ type: 'web_search' }] });
      const refused = await http(strictOperator.url, 'POST', '/v1/responses', { headers: { authorization: `Bearer ${account.key}` }, body: body(TRANSLATED) });
      expect([refused.status, refused.body.error.code]).toEqual([400, 'hosted_tool_not_supported']);
      expect(refused.body.error.message).toContain('web_search');
      const native = await http(strictOperator.url, 'POST', '/v1/responses', { headers: { authorization: `Bearer ${account.key}` }, body: body(NATIVE) });
      expect(native.status).toBe(200);
      expect(native.body.output.map((item: { type: string }) => item.type)).toContain('web_search_call');
    } finally {
      await strictOperator.close();
    }
  }, 60_000);
});
