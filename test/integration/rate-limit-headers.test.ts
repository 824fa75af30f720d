import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { newAdmin, newFundedAccount } from '../helpers/accounts.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Issue 54 item 4: every /v1 answer of a key tells the key's request limits the way its clients read
 * them (OpenAI's `x-ratelimit-*-requests`, Anthropic's `anthropic-ratelimit-requests-*` on /v1/messages),
 * refusals say how long to wait (`retry-after`, `retry-after-ms`) and which limit refused them
 * (`x-ratelimit-limited-by`), with the in-process limiter and with the Redis-shared one.
 */

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const VIDEO_MODELS = ['beta3.0-t2v'];

let sim: Simulator;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator({ apiKey: 'rl-upstream-secret' });
  dir = await mkdtemp(path.join(tmpdir(), 'baikal-rate-headers-'));
  const routes = (models: string[]) => [{ group: 'cheap', models }];
  await writeFile(
    path.join(dir, 'baikal.json'),
    JSON.stringify({
      upstreams: [
        { id: 'sim-chat', kind: 'openai-compatible', baseUrl: `${sim.url}/v1`, credentialEnv: 'RL_UPSTREAM_KEY', routes: routes(['gen-5.6-luna', 'img-2']) },
        { id: 'sim-messages', kind: 'anthropic', baseUrl: `${sim.url}/v1`, credentialEnv: 'RL_UPSTREAM_KEY', routes: routes(['lm-opus-5', 'bridge-opus-5']) },
        { id: 'sim-video', kind: 'video-jobs', baseUrl: `${sim.url}/v1`, credentialEnv: 'RL_UPSTREAM_KEY', routes: routes(VIDEO_MODELS) },
      ],
    }),
  );
});

afterAll(async () => {
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

const user = (content: string) => ({ messages: [{ role: 'user', content }] });

const LIMITERS = [
  { limiter: 'in-process limiter', env: (): Record<string, string> => ({}) },
  { limiter: 'Redis-shared limiter', env: (): Record<string, string> => ({ REDIS_URL, REDIS_PREFIX: `baikal-test-rl-${randomBytes(4).toString('hex')}:` }) },
];

describe.each(LIMITERS)('rate-limit headers with the $limiter', ({ env }) => {
  let gw: TestGateway;
  let admin: Awaited<ReturnType<typeof newAdmin>>;

  beforeAll(async () => {
    gw = await startTestGateway({ BAIKAL_CONFIG: path.join(dir, 'baikal.json'), RL_UPSTREAM_KEY: 'rl-upstream-secret', DATA_DIR: dir, VIDEO_POLL_MS: '50', ...env() });
    admin = await newAdmin(gw);
  });
  afterAll(async () => {
    await gw?.close();
  });

  /** A key of a funded account of its own (or of `account`), with its own limits. */
  async function keyWith(family: string, limits: { rpmLimit?: number; concurrencyLimit?: number }, account?: Awaited<ReturnType<typeof newFundedAccount>>) {
    const owner = account ?? (await newFundedAccount(gw, '5'));
    const created = await gw.services.keys.create(owner.actor, { providerFamily: family });
    await gw.services.keys.setLimits(admin.actor, { keyId: created.id, ...limits });
    return created.key;
  }

  async function post(route: string, key: string, body: object): Promise<Answer> {
    const messages = route === '/v1/messages';
    const headers: Record<string, string> = messages ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${key}` };
    const response = await fetch(gw.url + route, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // A stream: its text is enough.
    }
    return { status: response.status, headers: response.headers, body: parsed };
  }

  /** Any /v1 call with a key (Bearer, or Anthropic's x-api-key with anthropic-version), no body unless given. */
  async function call(method: string, route: string, key: string | null, options: { anthropic?: boolean; body?: object } = {}): Promise<Answer> {
    const auth: Record<string, string> = key === null ? {} : options.anthropic ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${key}` };
    const headers = { ...auth, ...(options.body ? { 'content-type': 'application/json' } : {}) };
    const response = await fetch(gw.url + route, { method, headers, ...(options.body ? { body: JSON.stringify(options.body) } : {}) });
    const bytes = Buffer.from(await response.arrayBuffer());
    let body: unknown = bytes;
    try {
      body = JSON.parse(bytes.toString('utf8'));
    } catch {
      // Not JSON (an MP4, a HEAD): the bytes are enough.
    }
    return { status: response.status, headers: response.headers, body };
  }

  const openAi = (answer: Answer) => ['limit', 'remaining', 'reset'].map((figure) => answer.headers.get(`x-ratelimit-${figure}-requests`));
  const anthropic = (answer: Answer) => ['limit', 'remaining', 'reset'].map((figure) => answer.headers.get(`anthropic-ratelimit-requests-${figure}`));

  it('OpenAI surfaces, JSON and streams (chat, Responses, images, videos): limit, remaining one less each request, reset as a Go duration', async () => {
    const key = await keyWith('family_a', { rpmLimit: 50 });
    const calls: [string, object][] = [
      ['/v1/chat/completions', { model: 'gen-5.6-luna', ...user('hi') }],
      ['/v1/chat/completions', { model: 'gen-5.6-luna', ...user('hi'), stream: true }],
      ['/v1/responses', { model: 'gen-5.6-luna', input: 'hi' }],
      ['/v1/responses', { model: 'gen-5.6-luna', input: 'hi', stream: true }],
      ['/v1/images/generations', { model: 'img-2', prompt: 'a lake' }],
    ];
    for (const [i, [route, body]] of calls.entries()) {
      const answer = await post(route, key, body);
      expect(answer.status, route).toBe(200);
      // The window is empty a full window after this request, the newest in it.
      expect(openAi(answer)).toEqual(['50', String(49 - i), '1m0s']);
      expect(anthropic(answer)).toEqual([null, null, null]);
      expect(answer.headers.get('retry-after')).toBeNull();
    }
    // A video submission is held by the balance, not counted: its answer shows the key's window as it stands.
    const videoKey = await keyWith('family_d', { rpmLimit: 5 });
    for (const _ of [1, 2]) {
      const video = await post('/v1/videos', videoKey, { model: 'beta3.0-t2v', prompt: 'a lake at dawn', seconds: 2 });
      expect(video.status).toBe(201);
      expect(openAi(video)).toEqual(['5', '5', '0s']);
    }
  });

  it('every other /v1 answer of a key (models, me, video polls and content, stored responses, count_tokens) shows its window as it stands, errors too, counting nothing', async () => {
    const key = await keyWith('family_a', { rpmLimit: 30 });
    for (const _ of [1, 2]) expect((await post('/v1/chat/completions', key, { model: 'gen-5.6-luna', ...user('hi') })).status).toBe(200);
    const stored = await post('/v1/responses', key, { model: 'gen-5.6-luna', input: 'hi', store: true });
    expect(stored.status).toBe(200);
    // Three requests counted; none of what follows counts: each answer shows 27 left, the window emptying within a minute.
    const standing = (answer: Answer, what: string) => {
      const [limit, remaining, reset] = openAi(answer);
      expect([limit, remaining], what).toEqual(['30', '27']);
      expect(reset, what).toMatch(/^(\d{1,2}(\.\d{1,3})?s|1m0s)$/);
      expect(anthropic(answer), what).toEqual([null, null, null]);
      expect(answer.headers.get('retry-after'), what).toBeNull();
    };
    const answers: [string, Answer, number][] = [
      ['GET /v1/models', await call('GET', '/v1/models', key), 200],
      ['GET /v1/models/{id}', await call('GET', '/v1/models/gen-5.6-luna', key), 200],
      ['GET /v1/models/{unknown}', await call('GET', '/v1/models/no-such-model', key), 404],
      ['GET /v1/bridge/models', await call('GET', '/v1/bridge/models', key), 200],
      ['GET /v1/me', await call('GET', '/v1/me', key), 200],
      ['GET /v1/responses/{id}', await call('GET', `/v1/responses/${stored.body.id}`, key), 200],
      ['GET /v1/responses/{id}/input_items', await call('GET', `/v1/responses/${stored.body.id}/input_items`, key), 200],
      ['GET /v1/responses/{id}/input_items?limit=0', await call('GET', `/v1/responses/${stored.body.id}/input_items?limit=0`, key), 422],
      ['DELETE /v1/responses/{id}', await call('DELETE', `/v1/responses/${stored.body.id}`, key), 200],
      ['GET /v1/responses/{deleted}', await call('GET', `/v1/responses/${stored.body.id}`, key), 404],
      ['GET /v1/videos/{unknown}', await call('GET', '/v1/videos/vid_nothing', key), 404],
      ['GET /v1/videos/{unknown}/content', await call('GET', '/v1/videos/vid_nothing/content', key), 404],
    ];
    for (const [what, answer, status] of answers) {
      expect(answer.status, what).toBe(status);
      standing(answer, what);
    }
    // Anthropic-style callers of the model list read Anthropic's names; without a key there is no window to show.
    const asAnthropic = await call('GET', '/v1/models', key, { anthropic: true });
    expect(asAnthropic.status).toBe(200);
    expect(anthropic(asAnthropic).slice(0, 2)).toEqual(['30', '27']);
    expect(Date.parse(anthropic(asAnthropic)[2]!)).toBeLessThanOrEqual(Date.now() + 61_000);
    expect(openAi(asAnthropic)).toEqual([null, null, null]);
    for (const anonymous of [await call('GET', '/v1/models', null), await call('GET', '/v1/me', 'not-a-key')]) {
      expect(openAi(anonymous)).toEqual([null, null, null]);
    }
    // Nothing above was counted: the next counted request leaves 26.
    expect(openAi(await post('/v1/chat/completions', key, { model: 'gen-5.6-luna', ...user('hi') }))[1]).toBe('26');

    // count_tokens forwarded to an Anthropic upstream takes its place in the window (so the answer shows one less);
    // one refused before the upstream (a 422) shows the window as it stands.
    const messagesKey = await keyWith('family_b', { rpmLimit: 10 });
    const count = await call('POST', '/v1/messages/count_tokens', messagesKey, { anthropic: true, body: { model: 'lm-opus-5', ...user('count me') } });
    expect(count.status).toBe(200);
    expect(count.body.input_tokens).toBeGreaterThan(0);
    expect(anthropic(count).slice(0, 2)).toEqual(['10', '9']);
    expect(anthropic(count)[2]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(openAi(count)).toEqual([null, null, null]);
    const badCount = await call('POST', '/v1/messages/count_tokens', messagesKey, { anthropic: true, body: { model: 'lm-opus-5' } });
    expect(badCount.status).toBe(422);
    expect(anthropic(badCount).slice(0, 2)).toEqual(['10', '9']);

    // A video job's poll and its finished MP4 (whole, a range, HEAD), and a submission with a body that is not valid.
    const videoKey = await keyWith('family_d', { rpmLimit: 5 });
    const video = await post('/v1/videos', videoKey, { model: 'beta3.0-t2v', prompt: 'waves [sim:start-ms=10 video-ms=30]', seconds: 2 });
    expect(video.status).toBe(201);
    const deadline = Date.now() + 15_000;
    let poll = await call('GET', `/v1/videos/${video.body.id}`, videoKey);
    while (poll.body.status !== 'completed' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      poll = await call('GET', `/v1/videos/${video.body.id}`, videoKey);
    }
    expect(poll.body.status).toBe('completed');
    const invalidVideo = await call('POST', '/v1/videos', videoKey, { body: { model: 'beta3.0-t2v', prompt: 'x', seconds: 99 } });
    expect(invalidVideo.status).toBe(422);
    const videoAnswers: [string, Answer, number][] = [
      ['GET /v1/videos/{id}', poll, 200],
      ['GET /v1/videos/{id}/content', await call('GET', `/v1/videos/${video.body.id}/content`, videoKey), 200],
      ['HEAD /v1/videos/{id}/content', await call('HEAD', `/v1/videos/${video.body.id}/content`, videoKey), 200],
      ['POST /v1/videos (422)', invalidVideo, 422],
    ];
    for (const [what, answer, status] of videoAnswers) {
      expect(answer.status, what).toBe(status);
      expect(openAi(answer), what).toEqual(['5', '5', '0s']);
    }
  });

  it('/v1/messages in Anthropic’s names (reset as RFC 3339), the bridge in OpenAI’s: one window per key across them', async () => {
    const key = await keyWith('family_b', { rpmLimit: 40 });
    const before = Date.now();
    const json = await post('/v1/messages', key, { model: 'lm-opus-5', max_tokens: 32, ...user('hi') });
    expect(json.status).toBe(200);
    const [limit, remaining, reset] = anthropic(json);
    expect([limit, remaining]).toEqual(['40', '39']);
    expect(reset).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // A minute after the request, rounded up to the second.
    expect(Date.parse(reset!)).toBeGreaterThanOrEqual(before + 60_000 - 1_000);
    expect(Date.parse(reset!)).toBeLessThanOrEqual(Date.now() + 61_000);
    expect(openAi(json)).toEqual([null, null, null]);

    const stream = await post('/v1/messages', key, { model: 'lm-opus-5', max_tokens: 32, ...user('hi'), stream: true });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    expect(anthropic(stream).slice(0, 2)).toEqual(['40', '38']);

    const bridge = [
      await post('/v1/bridge/chat/completions', key, { model: 'bridge-opus-5', ...user('hi') }),
      await post('/v1/bridge/chat/completions', key, { model: 'bridge-opus-5', ...user('hi'), stream: true }),
      await post('/v1/bridge/responses', key, { model: 'bridge-opus-5', input: 'hi' }),
    ];
    expect(bridge.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(bridge.map(openAi)).toEqual([
      ['40', '37', '1m0s'],
      ['40', '36', '1m0s'],
      ['40', '35', '1m0s'],
    ]);
  });

  it('a key over its rate: 429 rate_limited with retry-after, retry-after-ms, limited-by key and remaining 0; a later 422 still shows the window', async () => {
    const key = await keyWith('family_a', { rpmLimit: 2 });
    for (const left of ['1', '0']) expect(openAi(await post('/v1/chat/completions', key, { model: 'gen-5.6-luna', ...user('hi') }))[1]).toBe(left);
    for (const stream of [false, true]) {
      const refused = await post('/v1/chat/completions', key, { model: 'gen-5.6-luna', ...user('hi'), stream });
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
      expect(refused.body.error.message).toMatch(/^Key rate limit reached: 2 requests per minute/);
      expect(refused.headers.get('x-ratelimit-limited-by')).toBe('key');
      const waitMs = Number(refused.headers.get('retry-after-ms'));
      expect(waitMs).toBeGreaterThan(50_000);
      expect(waitMs).toBeLessThanOrEqual(60_000);
      expect(Number(refused.headers.get('retry-after'))).toBe(Math.ceil(waitMs / 1000));
      const [limit, remaining, reset] = openAi(refused);
      expect([limit, remaining]).toEqual(['2', '0']);
      // The window is empty when its newest request leaves: just under a minute.
      expect(reset).toMatch(/^(5\d(\.\d{1,3})?s|1m0s)$/);
    }
    // Refused before the limits (a 422): nothing is counted, the window is still shown; no wait is announced.
    const invalid = await post('/v1/chat/completions', key, { model: 'gen-5.6-luna' });
    expect(invalid.status).toBe(422);
    expect(openAi(invalid).slice(0, 2)).toEqual(['2', '0']);
    expect(invalid.headers.get('retry-after')).toBeNull();

    const messagesKey = await keyWith('family_b', { rpmLimit: 1 });
    expect((await post('/v1/messages', messagesKey, { model: 'lm-opus-5', max_tokens: 16, ...user('hi') })).status).toBe(200);
    const refused = await post('/v1/messages', messagesKey, { model: 'lm-opus-5', max_tokens: 16, ...user('hi') });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', code: 'rate_limited' } });
    expect(refused.headers.get('x-ratelimit-limited-by')).toBe('key');
    expect(Number(refused.headers.get('retry-after-ms'))).toBeGreaterThan(50_000);
    expect(anthropic(refused).slice(0, 2)).toEqual(['1', '0']);
  });

  it('concurrency refusals name their limit (key, account) in the message, the code and x-ratelimit-limited-by, with their wait', async () => {
    const slow = (key: string) => post('/v1/chat/completions', key, { model: 'gen-5.6-luna', ...user('[sim:latency=1500]') });
    const inFlight = () => new Promise((resolve) => setTimeout(resolve, 300));

    const key = await keyWith('family_a', { concurrencyLimit: 1 });
    const first = slow(key);
    await inFlight();
    const byKey = await post('/v1/chat/completions', key, { model: 'gen-5.6-luna', ...user('hi') });
    expect(byKey.status).toBe(429);
    expect(byKey.body.error).toMatchObject({ type: 'rate_limit_error', code: 'concurrency_limited' });
    expect(byKey.body.error.message).toMatch(/^Key concurrency limit reached/);
    expect(byKey.headers.get('x-ratelimit-limited-by')).toBe('key');
    expect([byKey.headers.get('retry-after'), byKey.headers.get('retry-after-ms')]).toEqual(['1', '1000']);
    // The refused request took no place in the window; the one in flight did.
    expect(openAi(byKey).slice(0, 2)).toEqual(['120', '119']);
    expect((await first).status).toBe(200);

    const account = await newFundedAccount(gw, '5');
    await gw.services.keys.setAccountLimits(admin.actor, { userId: account.userId, concurrencyLimit: 1 });
    const [one, other] = [await keyWith('family_a', {}, account), await keyWith('family_a', {}, account)];
    const held = slow(one);
    await inFlight();
    const byAccount = await post('/v1/messages', await keyWith('family_b', {}, account), { model: 'lm-opus-5', max_tokens: 16, ...user('hi') });
    expect(byAccount.status).toBe(429);
    expect(byAccount.body.error).toMatchObject({ type: 'rate_limit_error', code: 'account_concurrency_limited' });
    expect(byAccount.body.error.message).toMatch(/^Account concurrency limit reached/);
    expect(byAccount.headers.get('x-ratelimit-limited-by')).toBe('account');
    expect(anthropic(byAccount).slice(0, 2)).toEqual(['120', '120']);
    const byAccountToo = await post('/v1/chat/completions', other, { model: 'gen-5.6-luna', ...user('hi') });
    expect(byAccountToo.headers.get('x-ratelimit-limited-by')).toBe('account');
    expect((await held).status).toBe(200);

  });
});
