import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { affinityKeyOf } from '../../src/inference/affinity-key.js';
import { CLIENT_FORMATS, type ClientFormatId } from '../../src/inference/client-formats.js';
import { affinityOrder, DEFAULT_BALANCE_FACTOR } from '../../src/upstreams/affinity.js';
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';

/**
 * What cache affinity buys, measured on the real simulator over HTTP with its default prompt cache (prompts
 * of 1024+ tokens, 128-token blocks, per credential). 20 accounts, each repeating its own long system prompt
 * with a new question, in all three client formats, 4 requests in flight at a time. The credential of each
 * request is chosen (a) at random, as weighted routing without affinity does, and (b) by `affinityOrder` on
 * `affinityKeyOf`, with the in-flight counts of the credentials as the load. The share of requests that read
 * from the cache is printed and compared.
 *
 * What to expect: every account misses once on each credential it meets. With affinity it meets one, so 1
 * miss in its 10 requests (0.90 hits); at random it meets nearly all of them: with 2 credentials that is 2
 * misses (0.80), with 4 about 3.8 (0.62). At this low load (4 in flight) the published bounded load spills
 * keys off their home (its bound is 1 or 2 requests per credential), which costs part of the gain; the run
 * with a floor under the bound (affinityOrder's `minBound`) shows the gain without that.
 */

const ACCOUNTS = 20;
const REQUESTS_PER_ACCOUNT = 10;
const CONCURRENCY = 4;
const KEYS = ['sk-pool-0', 'sk-pool-1', 'sk-pool-2', 'sk-pool-3'];
const FORMATS: ClientFormatId[] = ['openai-chat', 'openai-responses', 'anthropic-messages'];

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ apiKey: KEYS[0]!, apiKeys: KEYS.slice(1), retainRecords: false });
});
afterAll(async () => {
  await sim?.close();
});

/** A small seeded generator (mulberry32), so every run sends the same sequence. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

interface Job {
  account: number;
  format: ClientFormatId;
  body: Record<string, unknown>;
}

/** Account `a`'s n-th request: its own ~1300-token system prompt (made unique to the run), then a new question. */
function jobFor(run: string, account: number, n: number): Job {
  const format = FORMATS[account % FORMATS.length]!;
  const system = `Handbook of account ${account} (${run}). ` + Array.from({ length: 1300 }, (_, k) => `rule-${account}-${k}`).join(' ');
  const question = `Question ${n} from account ${account}: what does rule ${n} say?`;
  const model = 'sim-chat-1';
  // Some clients name their cache (every fourth account): the key then comes from that, not from the prefix.
  const named = account % 4 === 1;
  if (format === 'openai-chat') {
    return { account, format, body: { model, messages: [{ role: 'system', content: system }, { role: 'user', content: question }], ...(named ? { prompt_cache_key: `conv-${account}` } : {}) } };
  }
  if (format === 'openai-responses') {
    return { account, format, body: { model, instructions: system, input: question, ...(named ? { prompt_cache_key: `conv-${account}` } : {}) } };
  }
  return {
    account,
    format,
    body: { model: 'sim-messages-1', max_tokens: 50, system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }], messages: [{ role: 'user', content: question }], ...(named ? { metadata: { user_id: `user-${account}` } } : {}) },
  };
}

async function send(job: Job, key: string): Promise<{ prompt: number; cached: number }> {
  const anthropic = job.format === 'anthropic-messages';
  const path = anthropic ? '/v1/messages' : job.format === 'openai-chat' ? '/v1/chat/completions' : '/v1/responses';
  const headers = anthropic ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${key}` };
  const response = await fetch(`${sim.url}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(job.body) });
  expect(response.status).toBe(200);
  const usage = ((await response.json()) as any).usage;
  if (job.format === 'openai-chat') return { prompt: usage.prompt_tokens, cached: usage.prompt_tokens_details.cached_tokens };
  if (job.format === 'openai-responses') return { prompt: usage.input_tokens, cached: usage.input_tokens_details.cached_tokens };
  return { prompt: usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens, cached: usage.cache_read_input_tokens };
}

interface Outcome {
  hitShare: number;
  cachedTokenShare: number;
  /** Distinct credentials each account's requests went to, on average. */
  credentialsPerAccount: number;
}

/**
 * One run of 200 requests. `minBound` is affinityOrder's floor under the load bound (0: the published
 * algorithm with c = 1.25).
 */
async function run(strategy: 'random' | 'affinity', credentials: number, minBound = 0): Promise<Outcome> {
  const runTag = `${strategy}-${credentials}-${minBound}`;
  const random = seeded(credentials * 7 + (strategy === 'random' ? 1 : 2));
  // The accounts' requests interleaved: round after round, the accounts in a shuffled order.
  const queue: Job[] = [];
  for (let n = 0; n < REQUESTS_PER_ACCOUNT; n++) {
    const order = Array.from({ length: ACCOUNTS }, (_, a) => a).sort(() => random() - 0.5);
    for (const account of order) queue.push(jobFor(runTag, account, n));
  }
  const inFlight = new Array<number>(credentials).fill(0);
  const ids = KEYS.slice(0, credentials).map((_, i) => `credential-${i}`);
  const used = Array.from({ length: ACCOUNTS }, () => new Set<number>());
  let hits = 0;
  let promptTokens = 0;
  let cachedTokens = 0;
  const worker = async () => {
    for (let job = queue.shift(); job; job = queue.shift()) {
      let credential: number;
      if (strategy === 'random') credential = Math.floor(random() * credentials);
      else {
        const key = affinityKeyOf(CLIENT_FORMATS[job.format].affinity, job.body, `account-${job.account}`);
        expect(key).not.toBeNull(); // every prompt here is long, or names its cache
        credential = affinityOrder(key!, ids.map((id, i) => ({ id, inFlight: inFlight[i]! })), DEFAULT_BALANCE_FACTOR, minBound)[0]!;
      }
      used[job.account]!.add(credential);
      inFlight[credential]!++;
      try {
        const usage = await send(job, KEYS[credential]!);
        if (usage.cached > 0) hits++;
        promptTokens += usage.prompt;
        cachedTokens += usage.cached;
      } finally {
        inFlight[credential]!--;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const total = ACCOUNTS * REQUESTS_PER_ACCOUNT;
  return { hitShare: hits / total, cachedTokenShare: cachedTokens / promptTokens, credentialsPerAccount: used.reduce((sum, set) => sum + set.size, 0) / ACCOUNTS };
}

const describeOutcome = (o: Outcome) => `hit share ${o.hitShare.toFixed(3)}, cached tokens ${(o.cachedTokenShare * 100).toFixed(1)}% of prompt tokens, ${o.credentialsPerAccount.toFixed(2)} credentials per account`;

/** A floor under the bound: a credential takes this many requests in flight before keys spill (see affinityOrder). */
const FLOOR = 8;

async function compare(credentials: number): Promise<{ random: Outcome; bounded: Outcome; floored: Outcome }> {
  const random = await run('random', credentials);
  const bounded = await run('affinity', credentials);
  const floored = await run('affinity', credentials, FLOOR);
  console.log(
    `[affinity-effect] ${credentials} credentials, ${ACCOUNTS} accounts x ${REQUESTS_PER_ACCOUNT} requests, ${CONCURRENCY} in flight\n` +
      `  random choice:                 ${describeOutcome(random)}\n` +
      `  affinity, bounded load c=1.25: ${describeOutcome(bounded)}\n` +
      `  affinity, same with floor ${FLOOR}:   ${describeOutcome(floored)}`,
  );
  return { random, bounded, floored };
}

describe('cache affinity against random credential choice, on the simulator', () => {
  it('two credentials: affinity keeps each account on one and reads the cache clearly more often', async () => {
    const { random, bounded, floored } = await compare(2);
    // At random every account meets both credentials: two misses in ten.
    expect(random.hitShare).toBeLessThan(0.85);
    expect(random.credentialsPerAccount).toBeGreaterThan(1.9);
    // With affinity one miss in ten. (Pure bounded load, printed above, spills some keys at this low load;
    // with two credentials it cannot do worse than random, so only the floored run is held to a figure.)
    expect(floored.hitShare).toBeGreaterThan(0.85);
    expect(floored.credentialsPerAccount).toBe(1);
    expect(floored.hitShare - random.hitShare).toBeGreaterThan(0.05);
    expect(bounded.credentialsPerAccount).toBeLessThan(random.credentialsPerAccount);
  });

  it('four credentials: random choice loses most of the cache, affinity keeps it', async () => {
    const { random, bounded, floored } = await compare(4);
    expect(random.hitShare).toBeLessThan(0.7);
    expect(bounded.hitShare).toBeGreaterThan(random.hitShare + 0.1);
    expect(floored.hitShare).toBeGreaterThan(0.85);
  });
});
