import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PromptCache, type PromptPart } from '../../src/simulator/prompt-cache.js';
import { countTokens, promptTokensOf, sleep, startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';

/**
 * The simulator's credential pool and its per-credential prompt cache, over HTTP as a gateway sees them.
 * Prompts are built from distinct words, so token counts (one a word, three per message) are exact.
 */

const KEYS = ['sk-sim-zero', 'sk-sim-one', 'sk-sim-two'];
let sim: Simulator;

beforeAll(async () => {
  // A lower threshold than OpenAI's 1024 keeps the prompts small; blocks stay 128 tokens.
  sim = await startSimulator({ apiKey: KEYS[0]!, apiKeys: [KEYS[1]!, KEYS[2]!, KEYS[1]!], cacheMinTokens: 256 });
});
afterAll(async () => {
  await sim?.close();
});

/** `count` distinct words: `tag-0 tag-1 …`. */
const words = (tag: string, count: number) => Array.from({ length: count }, (_, i) => `${tag}-${i}`).join(' ');

async function post(path: string, key: string, body: object, anthropic = false): Promise<{ status: number; json: any; text: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(anthropic ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${key}` }) };
  const response = await fetch(`${sim.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text };
}

/** The data of every SSE frame of a stream's body. */
const sseData = (text: string): any[] =>
  text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(6)));

const chat = (key: string, system: string, user: string, extra: object = {}) =>
  post('/v1/chat/completions', key, { model: 'sim-chat-1', messages: [{ role: 'system', content: system }, { role: 'user', content: user }], ...extra });
const cachedOf = (answer: { json: any }): number => answer.json.usage.prompt_tokens_details.cached_tokens;

describe('the credential pool', () => {
  it('lists the keys once, apiKey first, and any of them authenticates on every route', async () => {
    expect(sim.credentials).toEqual(KEYS);
    for (const [index, key] of KEYS.entries()) {
      const marker = `pool-${index}`;
      expect((await post('/v1/chat/completions', key, { model: 'm', messages: [{ role: 'user', content: marker }] })).status).toBe(200);
      expect((await post('/v1/responses', key, { model: 'm', input: marker })).status).toBe(200);
      expect((await post('/v1/messages', key, { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: marker }] }, true)).status).toBe(200);
      expect((await post('/v1/images/generations', key, { model: 'sim-image-1', prompt: marker })).status).toBe(200);
      expect((await fetch(`${sim.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
      expect((await fetch(`${sim.url}/v1/models`, { headers: { 'x-api-key': key } })).status).toBe(200);
      // Each recorded request names the key it came with.
      const recorded = sim.requests.filter((r) => JSON.stringify(r.body ?? null).includes(marker));
      expect(recorded.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/responses', '/v1/messages', '/v1/images/generations']);
      expect(recorded.map((r) => r.credential)).toEqual([index, index, index, index]);
    }
  });

  it('refuses a key outside the pool everywhere', async () => {
    expect((await post('/v1/chat/completions', 'sk-sim-other', { model: 'm', messages: [{ role: 'user', content: 'x' }] })).status).toBe(401);
    expect((await post('/v1/responses', 'sk-sim-other', { model: 'm', input: 'x' })).status).toBe(401);
    expect((await post('/v1/messages', 'sk-sim-other', { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }, true)).status).toBe(401);
    expect((await fetch(`${sim.url}/v1/models`, { headers: { authorization: 'Bearer sk-sim-other' } })).status).toBe(401);
    // The OpenAI routes take the key as Bearer only, as before.
    const viaHeader = await fetch(`${sim.url}/v1/chat/completions`, { method: 'POST', headers: { 'x-api-key': KEYS[1]!, 'content-type': 'application/json' }, body: '{}' });
    expect(viaHeader.status).toBe(401);
  });

  it('verifies a thinking signature issued under one key of the pool when the conversation comes back with another', async () => {
    const first = await post('/v1/messages', KEYS[1]!, { model: 'm', max_tokens: 50, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'think' }] }, true);
    const thinking = first.json.content[0];
    expect(thinking.type).toBe('thinking');
    const messages = [{ role: 'user', content: 'think' }, { role: 'assistant', content: [thinking, { type: 'text', text: 'ok' }] }, { role: 'user', content: 'again' }];
    expect((await post('/v1/messages', KEYS[2]!, { model: 'm', max_tokens: 50, messages }, true)).status).toBe(200);
    const forged = [messages[0], { role: 'assistant', content: [{ ...thinking, thinking: 'altered' }] }, messages[2]];
    expect((await post('/v1/messages', KEYS[2]!, { model: 'm', max_tokens: 50, messages: forged }, true)).status).toBe(400);
  });
});

describe('the prompt cache of each credential (chat completions)', () => {
  it('reports the longest cached block-aligned prefix to the same credential only', async () => {
    const system = words('chat-a', 300); // 303 tokens with the framing; the user turn adds 3 + its words
    const first = await chat(KEYS[0]!, system, 'first question');
    expect(first.json.usage.prompt_tokens).toBe(308);
    expect(cachedOf(first)).toBe(0);
    // The same system prompt and a new question: the first 306 tokens are shared, so two whole blocks.
    expect(cachedOf(await chat(KEYS[0]!, system, 'second question here'))).toBe(256);
    // Another credential of the same pool has its own cache: nothing there yet, then its own hit.
    expect(cachedOf(await chat(KEYS[1]!, system, 'third question'))).toBe(0);
    expect(cachedOf(await chat(KEYS[1]!, system, 'third question'))).toBe(256);
    // Another model has its own cache too.
    const otherModel = await post('/v1/chat/completions', KEYS[0]!, { model: 'sim-chat-2', messages: [{ role: 'system', content: system }, { role: 'user', content: 'q' }] });
    expect(cachedOf(otherModel)).toBe(0);
  });

  it('reuses only a prefix: a change inside the second block leaves one block, under the minimum, so nothing', async () => {
    const long = words('chat-b', 600);
    await chat(KEYS[0]!, long, 'q');
    const changedAt = (index: number) => long.replace(`chat-b-${index} `, `changed-${index} `);
    // Diverging at token 3 + 400: three whole blocks before it.
    expect(cachedOf(await chat(KEYS[0]!, changedAt(400), 'q'))).toBe(384);
    // Diverging at token 3 + 200: one block (128) is shared, below cacheMinTokens (256): OpenAI reports 0.
    expect(cachedOf(await chat(KEYS[0]!, changedAt(200), 'q'))).toBe(0);
    // The same words with another role are another prompt.
    const asUser = await post('/v1/chat/completions', KEYS[0]!, { model: 'sim-chat-1', messages: [{ role: 'user', content: long }, { role: 'user', content: 'q' }] });
    expect(cachedOf(asUser)).toBe(0);
  });

  it('never caches a prompt under the minimum', async () => {
    const short = words('chat-c', 240); // 243 + 4 = 247 tokens < 256
    await chat(KEYS[0]!, short, 'q');
    const again = await chat(KEYS[0]!, short, 'q');
    expect(again.json.usage.prompt_tokens).toBe(247);
    expect(cachedOf(again)).toBe(0);
  });

  it('reports the same in a stream, and tools are part of the prefix', async () => {
    const system = words('chat-d', 400);
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
    const streamed = async (toolList: object[]) => {
      const answer = await chat(KEYS[2]!, system, 'q', { stream: true, stream_options: { include_usage: true }, tools: toolList });
      return sseData(answer.text).find((frame) => frame.usage)!.usage.prompt_tokens_details.cached_tokens as number;
    };
    expect(await streamed(tools)).toBe(0);
    expect(await streamed(tools)).toBe(384); // 403 + 4 tokens: three whole blocks
    // A long user turn: the fourth block spans the end of the system message, the tools and the user turn.
    const otherTools = [{ type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } }];
    const user = words('chat-d-user', 200);
    expect(cachedOf(await chat(KEYS[2]!, system, user, { tools }))).toBe(384);
    expect(cachedOf(await chat(KEYS[2]!, system, user, { tools }))).toBe(512);
    // Other tools after the same system message: the blocks before them still match, the one across them not.
    expect(cachedOf(await chat(KEYS[2]!, system, user, { tools: otherTools }))).toBe(384);
    // Without a system message the tools come first: other tools, and nothing after them matches.
    const userOnly = (toolList: object[]) => post('/v1/chat/completions', KEYS[2]!, { model: 'sim-chat-1', tools: toolList, messages: [{ role: 'user', content: system }] });
    expect(cachedOf(await userOnly(tools))).toBe(0);
    expect(cachedOf(await userOnly(otherTools))).toBe(0);
    expect(cachedOf(await userOnly(tools))).toBe(384);
  });

  it('keeps the cached=N directive exact on short prompts and takes the larger count on long ones', async () => {
    expect(cachedOf(await chat(KEYS[0]!, 'be brief', 'hello [sim:cached=3]'))).toBe(3);
    const system = words('chat-e', 300);
    await chat(KEYS[0]!, system, 'hello');
    expect(cachedOf(await chat(KEYS[0]!, system, 'hello [sim:cached=3]'))).toBe(256);
    expect(cachedOf(await chat(KEYS[0]!, system, 'hello [sim:cached=300]'))).toBe(300);
  });
});

describe('the prompt cache on the Responses and Messages routes', () => {
  it('Responses: input_tokens_details.cached_tokens, for string input and items, JSON and stream', async () => {
    const instructions = words('resp-a', 260);
    const ask = (input: unknown, stream = false) => post('/v1/responses', KEYS[1]!, { model: 'sim-chat-1', instructions, input, stream });
    const first = await ask('what is baikal');
    expect(first.json.usage.input_tokens).toBe(260 + 3 + 3);
    expect(first.json.usage.input_tokens_details.cached_tokens).toBe(0);
    // A string input is one user message: the same prompt as the item form.
    const items = [{ role: 'user', content: [{ type: 'input_text', text: 'what is baikal' }] }];
    expect((await ask(items)).json.usage.input_tokens_details.cached_tokens).toBe(256);
    const streamed = await ask(items, true);
    const completed = sseData(streamed.text).find((frame) => frame.type === 'response.completed');
    expect(completed.response.usage.input_tokens_details.cached_tokens).toBe(256);
    expect((await post('/v1/responses', KEYS[0]!, { model: 'sim-chat-1', instructions, input: items })).json.usage.input_tokens_details.cached_tokens).toBe(0);
  });

  it('Messages: cache_creation_input_tokens on the first call, cache_read_input_tokens after; the three add up to the prompt', async () => {
    const system = [{ type: 'text', text: words('msg-a', 200) }, { type: 'text', text: words('msg-b', 200), cache_control: { type: 'ephemeral' } }];
    const tools = [{ name: 'get_weather', input_schema: { type: 'object' } }];
    const ask = (user: string, stream = false, toolList = tools) => post('/v1/messages', KEYS[2]!, { model: 'sim-messages-1', max_tokens: 20, system, tools: toolList, messages: [{ role: 'user', content: user }], stream }, true);
    const first = await ask('one two');
    const prompt = 400 + 3 + 2;
    expect(first.json.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 384, input_tokens: prompt - 384 });
    expect(first.json.usage.cache_creation.ephemeral_5m_input_tokens).toBe(384);
    const second = await ask('one two three four five six seven eight nine ten', true);
    const start = sseData(second.text).find((frame) => frame.type === 'message_start');
    expect(start.message.usage).toMatchObject({ cache_read_input_tokens: 384, cache_creation_input_tokens: 0, input_tokens: 400 + 3 + 10 - 384 });
    // Anthropic's order puts tools first: other tools, and nothing of the prompt is cached.
    const otherTools = await ask('one two', false, [{ name: 'get_time', input_schema: { type: 'object' } }]);
    expect(otherTools.json.usage.cache_read_input_tokens).toBe(0);
  });

  it('forgets after the time to live, and a hit renews it', async () => {
    const quick = await startSimulator({ apiKey: 'k', cacheMinTokens: 128, cacheTtlMs: 500, retainRecords: false });
    try {
      const ask = async (tag: string) => {
        const response = await fetch(`${quick.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: words(tag, 200) }] }),
        });
        return ((await response.json()) as any).usage.prompt_tokens_details.cached_tokens as number;
      };
      expect(await ask('ttl')).toBe(0);
      await sleep(300);
      expect(await ask('ttl')).toBe(128); // a hit 300 ms later renews the entry…
      await sleep(300);
      expect(await ask('ttl')).toBe(128); // …so 600 ms after the first write it is still there
      await sleep(700);
      expect(await ask('ttl')).toBe(0); // unused for longer than the time to live: gone
      expect(quick.requests).toEqual([]); // retainRecords: false keeps no records, the cache works all the same
    } finally {
      await quick.close();
    }
  });
});

describe('PromptCache itself', () => {
  const prompt = (tag: string, count: number): PromptPart[] => [{ text: words(tag, count), framing: 3, tag: 'user' }];

  it('prunes what expired and stays within maxEntries', () => {
    let now = 0;
    const cache = new PromptCache({ minTokens: 128, blockTokens: 128, ttlMs: 1000, maxEntries: 10 }, () => now);
    expect(cache.use(0, 'm', prompt('p', 600))).toEqual({ cached: 0, written: 512 }); // 603 tokens: 4 blocks
    expect(cache.size).toBe(4);
    now = 500;
    expect(cache.use(0, 'm', prompt('q', 400))).toEqual({ cached: 0, written: 384 });
    expect(cache.size).toBe(7);
    now = 1200; // p's blocks expired, q's live
    expect(cache.use(1, 'm', prompt('r', 130))).toEqual({ cached: 0, written: 128 });
    expect(cache.size).toBe(3 + 1);
    expect(cache.use(0, 'm', prompt('q', 400))).toEqual({ cached: 384, written: 0 });
    expect(cache.use(0, 'm', prompt('p', 600))).toEqual({ cached: 0, written: 512 });
    expect(cache.size).toBe(8);
    // Over maxEntries the least recently used block goes: r's (credential 1).
    expect(cache.use(2, 'm', prompt('s', 400))).toEqual({ cached: 0, written: 384 });
    expect(cache.size).toBe(10);
    expect(cache.use(1, 'm', prompt('r', 130)).cached).toBe(0);
    expect(cache.use(0, 'm', prompt('p', 600)).cached).toBe(512);
    now = 10_000;
    expect(cache.use(0, 'm', prompt('t', 10))).toEqual({ cached: 0, written: 0 }); // under the minimum: nothing written
    expect(cache.size).toBe(0); // everything expired was pruned
  });

  it('counts tokens exactly as the routes do, whatever the whitespace', () => {
    const text = ` lead\u00a0nbsp\ttab\nnewline  double\u2003em\u3000ideo ${words('x', 300)} `;
    const messages = [{ role: 'user', content: text }];
    const cache = new PromptCache({ minTokens: 1, blockTokens: 1, ttlMs: 1000, maxEntries: 10_000 }, () => 0);
    // With one-token blocks, `written` is the token count itself.
    expect(cache.use(0, 'm', [{ text, framing: 3, tag: 'user' }]).written).toBe(promptTokensOf(messages));
    expect(countTokens(text)).toBe(307);
  });
});
