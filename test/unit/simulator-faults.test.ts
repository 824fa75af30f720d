import { request as httpRequest, Agent } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sleep, startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';

/**
 * `Simulator.setFault`: one switch that breaks every route the way a dead or sick upstream does. Calls go
 * through node:http so each failure shows as the error code a gateway's client would see.
 */

const KEY = 'sk-sim-fault';
let sim: Simulator;

beforeEach(async () => {
  sim = await startSimulator({ apiKey: KEY, apiKeys: ['sk-sim-fault-2'], name: 'faulty' });
});
afterEach(async () => {
  await sim?.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: any;
}

const ROUTES: { path: string; body: object; anthropic?: boolean }[] = [
  { path: '/v1/chat/completions', body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] } },
  { path: '/v1/responses', body: { model: 'm', input: 'hi' } },
  { path: '/v1/images/generations', body: { model: 'sim-image-1', prompt: 'a lake' } },
  { path: '/v1/messages', body: { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, anthropic: true },
];

/** One call; rejects with the socket error (its `code`) when there is no answer. */
function call(path: string, options: { body?: object; anthropic?: boolean; key?: string; agent?: Agent; method?: string } = {}): Promise<Answer> {
  const key = options.key ?? KEY;
  const headers: Record<string, string> = options.anthropic ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${key}` };
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  if (payload !== undefined) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${sim.url}${path}`, { method: options.method ?? (payload === undefined ? 'GET' : 'POST'), headers, agent: options.agent ?? false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode!, headers: res.headers, json: text ? JSON.parse(text) : undefined });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const codeOf = (promise: Promise<unknown>) => promise.then(() => 'answered', (error: NodeJS.ErrnoException) => error.code);

/** Resolves once the simulator has recorded `count` requests that met a fault. */
async function faultedRequests(count: number): Promise<void> {
  for (let i = 0; i < 200 && sim.requests.filter((r) => r.fault).length < count; i++) await sleep(5);
  expect(sim.requests.filter((r) => r.fault)).toHaveLength(count);
}

describe('setFault', () => {
  it('status: every route, the model list included, answers that error in its provider shape', async () => {
    await sim.setFault({ mode: 'status', status: 503 });
    for (const route of ROUTES) {
      const answer = await call(route.path, route);
      expect(answer.status, route.path).toBe(503);
      if (route.anthropic) expect(answer.json).toMatchObject({ type: 'error', error: { type: 'api_error' } });
      else expect(answer.json.error).toMatchObject({ type: 'server_error', code: 'service_unavailable' });
      expect(answer.headers['retry-after']).toBeUndefined();
    }
    expect((await call('/v1/models')).json.error.code).toBe('service_unavailable');
    expect((await call('/v1/models', { anthropic: true })).json.type).toBe('error');
    expect(sim.probes).toHaveLength(2);
    // Each attempt is recorded with its fault and credential (status probes stay apart).
    expect(sim.requests.map((r) => [r.path, r.fault, r.credential])).toEqual(ROUTES.map((route) => [route.path, 'status', 0]));

    await sim.setFault({ mode: 'status', status: 429, retryAfterSeconds: 7 });
    const limited = await call('/v1/messages', { ...ROUTES[3]!, key: 'sk-sim-fault-2' });
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('7');
    expect(limited.json.error.type).toBe('rate_limit_error');
    const chat = await call('/v1/chat/completions', ROUTES[0]!);
    expect([chat.status, chat.headers['retry-after'], chat.json.error.type]).toEqual([429, '7', 'rate_limit_exceeded']);
    expect(sim.requests.at(-2)!.credential).toBe(1);
    // A key outside the pool meets the fault too (it acts before authentication), recorded as no credential.
    expect((await call('/v1/chat/completions', { ...ROUTES[0]!, key: 'sk-unknown' })).status).toBe(429);
    expect(sim.requests.at(-1)!.credential).toBe(-1);

    await sim.setFault(null);
    expect((await call('/v1/chat/completions', ROUTES[0]!)).status).toBe(200);
    expect(sim.requests.at(-1)!.fault).toBeUndefined();
  });

  it('hang: reads the request and never answers; clearing the fault destroys the hung requests', async () => {
    await sim.setFault({ mode: 'hang' });
    const pending = [...ROUTES.map((route) => codeOf(call(route.path, route))), codeOf(call('/v1/models'))];
    await faultedRequests(ROUTES.length);
    for (let i = 0; i < 20 && sim.probes.length < 1; i++) await sleep(5);
    expect(sim.probes).toHaveLength(1);
    const settled = await Promise.race([Promise.all(pending), sleep(150).then(() => 'still waiting')]);
    expect(settled).toBe('still waiting');
    expect(sim.requests.every((r) => r.endedAt === undefined)).toBe(true);

    await sim.setFault(null);
    expect(await Promise.all(pending)).toEqual(ROUTES.map(() => 'ECONNRESET').concat('ECONNRESET'));
    // The server side notices the close on its own tick.
    for (let i = 0; i < 100 && sim.requests.some((r) => r.endedAt === undefined); i++) await sleep(5);
    expect(sim.requests.every((r) => r.aborted)).toBe(true);
    expect((await call('/v1/chat/completions', ROUTES[0]!)).status).toBe(200);
  });

  it('hang: closing the simulator ends hung requests too', async () => {
    await sim.setFault({ mode: 'hang' });
    const pending = codeOf(call('/v1/chat/completions', ROUTES[0]!));
    await faultedRequests(1);
    await sim.close();
    expect(await pending).toBe('ECONNRESET');
  });

  it('reset: reads the request, then resets the connection before any header', async () => {
    await sim.setFault({ mode: 'reset' });
    for (const route of ROUTES) expect(await codeOf(call(route.path, route)), route.path).toBe('ECONNRESET');
    expect(await codeOf(call('/v1/models'))).toBe('ECONNRESET');
    expect(sim.requests.map((r) => r.fault)).toEqual(ROUTES.map(() => 'reset'));
    await sim.setFault(null);
    expect((await call('/v1/responses', ROUTES[1]!)).status).toBe(200);
  });

  it('refuse: connections are refused, kept-alive ones closed; cleared, it listens again on the same port', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect((await call('/v1/chat/completions', { ...ROUTES[0]!, agent })).status).toBe(200);
      const kept = Object.values(agent.freeSockets).flat();
      expect(kept).toHaveLength(1);
      const closed = new Promise<void>((resolve) => kept[0]!.once('close', () => resolve()));

      await sim.setFault({ mode: 'refuse' });
      await closed; // the pooled connection did not survive
      for (const route of ROUTES) expect(await codeOf(call(route.path, route)), route.path).toBe('ECONNREFUSED');
      expect(await codeOf(call('/v1/models'))).toBe('ECONNREFUSED');
      expect(await codeOf(call('/v1/chat/completions', { ...ROUTES[0]!, agent }))).toBe('ECONNREFUSED');

      await sim.setFault(null);
      expect((await call('/v1/chat/completions', { ...ROUTES[0]!, agent })).status).toBe(200);
      expect((await call('/v1/models')).status).toBe(200);
      expect(sim.requests.filter((r) => r.fault)).toEqual([]);
    } finally {
      agent.destroy();
    }
  });

  it('refuse: the simulator closes while refusing, and faults change in the order they were set', async () => {
    void sim.setFault({ mode: 'refuse' });
    const cleared = sim.setFault({ mode: 'status', status: 500 });
    await cleared;
    expect((await call('/v1/chat/completions', ROUTES[0]!)).status).toBe(500);
    await sim.setFault({ mode: 'refuse' });
    await sim.close();
    expect(await codeOf(call('/v1/models'))).toBe('ECONNREFUSED');
  });
});
