import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { newAdmin, newFundedAccount } from '../helpers/accounts.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Issue 54 item 4: the official SDKs' own retry logic reads our 429s. Both `openai` (7.57) and
 * `@anthropic-ai/sdk` (1.12) wait `retry-after-ms` when it is there, else `retry-after` (src/client.ts,
 * `retryRequest`, in each package), then send the request again. With a 2 s rate window (RATE_WINDOW_SECONDS)
 * a key at its limit frees within the test: the SDK waits the announced time, retries and succeeds.
 */

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const WINDOW_MS = 2_000;

let sim: Simulator;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator({ apiKey: 'rl-sdk-upstream-secret' });
  dir = await mkdtemp(path.join(tmpdir(), 'baikal-rate-sdk-'));
  const routes = (models: string[]) => [{ group: 'cheap', models }];
  await writeFile(
    path.join(dir, 'baikal.json'),
    JSON.stringify({
      upstreams: [
        { id: 'sim-chat', kind: 'openai-compatible', baseUrl: `${sim.url}/v1`, credentialEnv: 'RL_UPSTREAM_KEY', routes: routes(['gen-5.6-luna']) },
        { id: 'sim-messages', kind: 'anthropic', baseUrl: `${sim.url}/v1`, credentialEnv: 'RL_UPSTREAM_KEY', routes: routes(['lm-opus-5']) },
      ],
    }),
  );
});

afterAll(async () => {
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** What the SDK's fetch saw: when each attempt went out and was answered, with its status and wait headers. */
interface Attempt {
  sent: number;
  answered: number;
  status: number;
  retryAfter: string | null;
  retryAfterMs: string | null;
}

function recordingFetch(attempts: Attempt[]): typeof fetch {
  return async (input, init) => {
    const sent = performance.now();
    const response = await fetch(input, init);
    attempts.push({ sent, answered: performance.now(), status: response.status, retryAfter: response.headers.get('retry-after'), retryAfterMs: response.headers.get('retry-after-ms') });
    return response;
  };
}

/** The SDK waited what the 429 announced (not its own backoff of 0.5 s or so), then retried. */
function expectWaitedAsAnnounced(refused: Attempt, retry: Attempt): void {
  const announced = Number(refused.retryAfterMs);
  expect(announced).toBeGreaterThan(WINDOW_MS / 2);
  expect(announced).toBeLessThanOrEqual(WINDOW_MS);
  expect(Number(refused.retryAfter)).toBe(Math.ceil(announced / 1000));
  const waited = retry.sent - refused.answered;
  expect(waited).toBeGreaterThanOrEqual(announced - 5);
  expect(waited).toBeLessThan(announced + 1_000);
}

const LIMITERS = [
  { limiter: 'in-process limiter', env: (): Record<string, string> => ({}) },
  { limiter: 'Redis-shared limiter', env: (): Record<string, string> => ({ REDIS_URL, REDIS_PREFIX: `baikal-test-rl-sdk-${randomBytes(4).toString('hex')}:` }) },
];

describe.each(LIMITERS)('the official SDKs retry on our 429s, $limiter', ({ env }) => {
  let gw: TestGateway;
  let admin: Awaited<ReturnType<typeof newAdmin>>;

  beforeAll(async () => {
    gw = await startTestGateway({ BAIKAL_CONFIG: path.join(dir, 'baikal.json'), RL_UPSTREAM_KEY: 'rl-sdk-upstream-secret', DATA_DIR: dir, RATE_WINDOW_SECONDS: String(WINDOW_MS / 1000), ...env() });
    admin = await newAdmin(gw);
  });
  afterAll(async () => {
    await gw?.close();
  });

  async function keyWith(family: string, limits: { rpmLimit?: number; concurrencyLimit?: number }): Promise<string> {
    const owner = await newFundedAccount(gw, '5');
    const created = await gw.services.keys.create(owner.actor, { providerFamily: family });
    await gw.services.keys.setLimits(admin.actor, { keyId: created.id, ...limits });
    return created.key;
  }

  const openai = (key: string, attempts: Attempt[], maxRetries: number) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries, fetch: recordingFetch(attempts) });
  const anthropic = (key: string, attempts: Attempt[], maxRetries: number) =>
    new Anthropic({ apiKey: null, baseURL: gw.url, defaultHeaders: { 'x-api-key': key, 'anthropic-version': '2023-06-01' }, maxRetries, fetch: recordingFetch(attempts) });

  it('openai: a key at its rate gets a 429, the SDK waits retry-after-ms and succeeds once the window frees', async () => {
    const attempts: Attempt[] = [];
    const client = openai(await keyWith('family_a', { rpmLimit: 2 }), attempts, 2);
    const ask = () => client.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    await ask();
    const second = await ask();
    expect(second.response.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    const third = await ask();
    expect(third.data.choices[0]!.message.content).toBeTruthy();
    expect(attempts.map((a) => a.status)).toEqual([200, 200, 429, 200]);
    expectWaitedAsAnnounced(attempts[2]!, attempts[3]!);
    expect(third.response.headers.get('x-ratelimit-limit-requests')).toBe('2');
  });

  it('@anthropic-ai/sdk: the same on /v1/messages', async () => {
    const attempts: Attempt[] = [];
    const client = anthropic(await keyWith('family_b', { rpmLimit: 2 }), attempts, 2);
    const ask = () => client.messages.create({ model: 'lm-opus-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    await ask();
    expect((await ask()).response.headers.get('anthropic-ratelimit-requests-remaining')).toBe('0');
    const third = await ask();
    expect(third.data.content[0]).toMatchObject({ type: 'text' });
    expect(attempts.map((a) => a.status)).toEqual([200, 200, 429, 200]);
    expectWaitedAsAnnounced(attempts[2]!, attempts[3]!);
  });

  it('a concurrency refusal names its limit to the SDK; with retries the SDK waits the second it is told and gets in', async () => {
    const key = await keyWith('family_a', { concurrencyLimit: 1 });
    const slow = (latencyMs: number) => openai(key, [], 0).chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: `[sim:latency=${latencyMs}]` }] });
    const inFlight = () => new Promise((resolve) => setTimeout(resolve, 300));

    let held = slow(1_500);
    await inFlight();
    const refused = await openai(key, [], 0)
      .chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    const error = refused as InstanceType<typeof OpenAI.RateLimitError>;
    expect(error.code).toBe('concurrency_limited');
    expect(error.type).toBe('rate_limit_error');
    expect(error.message).toContain('Key concurrency limit reached');
    expect(error.headers?.get('x-ratelimit-limited-by')).toBe('key');
    await held;

    // The one in flight ends within the announced second: the SDK's retry gets in.
    held = slow(600);
    await inFlight();
    const attempts: Attempt[] = [];
    await openai(key, attempts, 2).chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi' }] });
    expect(attempts.map((a) => a.status)).toEqual([429, 200]);
    expect(attempts[0]!.retryAfterMs).toBe('1000');
    const waited = attempts[1]!.sent - attempts[0]!.answered;
    expect(waited).toBeGreaterThanOrEqual(995);
    expect(waited).toBeLessThan(2_000);
    await held;
  });
});
