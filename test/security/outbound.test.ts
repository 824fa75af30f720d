import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import defaultCatalog from '../../src/catalog/default-catalog.json' with { type: 'json' };
import { ledgerBalance } from '../helpers/accounts.js';
import { http } from '../helpers/clients.js';
import { ANTHROPIC_SERVED, apiAccount, processAdmin, requestId, settled, startInferenceStack, TRANSLATED_FAMILY_B, upstreamCall, type ApiAccount, type InferenceStack } from '../helpers/inference.js';
import type { ServerProcess } from '../helpers/process.js';

/**
 * Issue 11, outbound requests:
 * - no request field (model, body fields such as base_url / api_base / extra_headers / user, headers
 *   such as Host, X-Forwarded-Host, Forwarded, anthropic-beta) chooses the upstream URL, its host or
 *   a header sent upstream: what the simulator recorded is exactly the configured target with the
 *   gateway's own headers;
 * - redirects from an upstream are not followed: an upstream answering 301/302/303/307/308 towards
 *   another server leaves that server untouched and the client gets a clean 502 (or a silent
 *   failover to the next route), on the inference routes and in the status monitor's probes;
 * - the gateway fetches no user-supplied URL itself. Image URLs in chat, Responses and Messages
 *   content and video references are forwarded to the upstream as data, verbatim, and a canary
 *   server listening on 127.0.0.1 (reached also as `localhost`) gets zero connections while those
 *   requests are served. That is why the SSRF rule ("any URL the gateway fetches for a user
 *   refuses private, loopback and link-local addresses, including after redirects and DNS answers that
 *   change") holds: there is no such fetch at all, so there is nothing to point at an internal address.
 *   Should the gateway ever fetch a user URL, this test is where that rule must be added.
 */

const CHAT_MODELS = defaultCatalog.models.filter((m) => m.endpoints.includes('/v1/chat/completions')).map((m) => m.id);
const IMAGE_MODELS = defaultCatalog.models.filter((m) => m.endpoints.includes('/v1/images/generations')).map((m) => m.id);
const VIDEO_MODELS = defaultCatalog.models.filter((m) => m.endpoints.includes('/v1/videos')).map((m) => m.id);
/** Served by the redirecting upstream only (family c; its image counterpart; a Messages model). */
const REDIRECTED_CHAT = 'delta-4.5';
const REDIRECTED_IMAGE = 'delta-image';
const REDIRECTED_MESSAGES = 'lm-fable-5';
/** The redirecting upstream first, the live simulator as its fallback. */
const REDIRECTED_THEN_LIVE = 'delta-4.6';
const REDIRECT_STATUSES = [301, 302, 303, 307, 308];

let stack: InferenceStack;
let gw: ServerProcess;
let dir: string;
let familyA: ApiAccount;
let familyB: ApiAccount;
let familyC: ApiAccount;
let familyD: ApiAccount;

/** Where redirects point, and what a user-supplied URL names: it must never see a connection. */
let canary: { url: string; port: number; connections: number; requests: string[]; servers: (Server | NetServer)[] };
/** An upstream that answers every request with a redirect to the canary, cycling through the redirect statuses. */
let redirector: { url: string; server: Server; requests: { method: string; path: string }[] };

async function listen<T extends Server | NetServer>(server: T, host: string, port = 0): Promise<T> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

async function startCanary(): Promise<typeof canary> {
  const state = { url: '', port: 0, connections: 0, requests: [] as string[], servers: [] as (Server | NetServer)[] };
  const make = () => {
    const server = createServer((req, res) => {
      state.requests.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end('canary');
    });
    server.on('connection', () => (state.connections += 1));
    return server;
  };
  const v4 = await listen(make(), '127.0.0.1');
  state.port = (v4.address() as AddressInfo).port;
  state.url = `http://127.0.0.1:${state.port}`;
  state.servers.push(v4);
  // `localhost` may resolve to ::1 first: listen there too, on the same port, where the machine has IPv6.
  await listen(make(), '::1', state.port).then(
    (v6) => state.servers.push(v6),
    () => undefined,
  );
  return state;
}

async function startRedirector(to: string): Promise<typeof redirector> {
  const requests: { method: string; path: string }[] = [];
  // Per method, so the status probes (GET) never shift the cycle the inference calls (POST) go through.
  const next = new Map<string, number>();
  // Half the redirects name the canary by address, half as `localhost`.
  const server = createServer((req, res) => {
    requests.push({ method: req.method!, path: req.url! });
    req.resume();
    req.on('end', () => {
      const n = next.get(req.method!) ?? 0;
      next.set(req.method!, n + 1);
      const status = REDIRECT_STATUSES[n % REDIRECT_STATUSES.length]!;
      const target = n % 2 ? `${to}${req.url}` : `${to.replace('127.0.0.1', 'localhost')}${req.url}`;
      res.writeHead(status, { location: target, 'content-type': 'application/json' });
      res.end(JSON.stringify({ moved: target }));
    });
  });
  await listen(server, '127.0.0.1');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, requests };
}

/** A POST through node:http, which (unlike fetch) sends any Host header it is given. */
function post(urlPath: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; text: string; headers: Headers }> {
  const url = new URL(gw.url);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: urlPath, method: 'POST', setHost: false, headers: { host: url.host, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, text, headers: new Headers({ 'x-request-id': String(res.headers['x-request-id']) }) }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Client headers that, in a gateway that trusted them, would pick an upstream or reach it. */
function steeringHeaders(): Record<string, string> {
  return {
    host: `127.0.0.1:${canary.port}`,
    'x-forwarded-host': `127.0.0.1:${canary.port}`,
    'x-forwarded-proto': 'https',
    'x-forwarded-for': '169.254.169.254',
    forwarded: `for=169.254.169.254;host=127.0.0.1:${canary.port};proto=http`,
    'x-original-url': `${canary.url}/v1/chat/completions`,
    'x-rewrite-url': `${canary.url}/v1/chat/completions`,
    'x-upstream': canary.url,
    'x-base-url': canary.url,
    'x-target-url': canary.url,
    'openai-organization': 'org-evil',
    'openai-project': 'proj-evil',
    'openai-beta': 'evil=1',
    'anthropic-beta': 'evil-2099-01-01',
    'x-stainless-evil': 'evil',
    cookie: 'upstream=evil',
    'user-agent': 'evil-agent/1.0',
    'x-evil': 'evil',
  };
}

/** Body fields that, in a gateway that honoured them, would choose an upstream or a header. */
function steeringFields(): Record<string, unknown> {
  return {
    base_url: canary.url,
    api_base: canary.url,
    baseURL: canary.url,
    url: `${canary.url}/v1/chat/completions`,
    endpoint: canary.url,
    upstream: canary.url,
    extra_headers: { authorization: 'Bearer evil', host: `127.0.0.1:${canary.port}`, 'x-evil': 'evil' },
    headers: { authorization: 'Bearer evil', 'x-evil': 'evil' },
    user: canary.url,
    metadata: { base_url: canary.url },
  };
}

/** The headers the gateway itself sends an upstream: nothing else may appear. */
const GATEWAY_HEADERS = new Set(['host', 'connection', 'content-type', 'content-length', 'accept', 'authorization', 'x-api-key', 'anthropic-version', 'x-client-request-id']);

function upstreamHeaderProblems(headers: Record<string, unknown>, credentialHeader: 'authorization' | 'x-api-key', carried: string[] = []): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (carried.includes(name)) continue;
    if (!GATEWAY_HEADERS.has(name)) problems.push(`unexpected header ${name}: ${String(value)}`);
    if (/evil|169\.254/i.test(String(value)) || String(value).includes(`:${canary.port}`)) problems.push(`steered header ${name}: ${String(value)}`);
  }
  if (headers.host !== new URL(stack.primary.url).host) problems.push(`host ${String(headers.host)}`);
  const expected = credentialHeader === 'authorization' ? `Bearer ${stack.canaries.credential}` : stack.canaries.credential;
  if (headers[credentialHeader] !== expected) problems.push(`${credentialHeader} ${String(headers[credentialHeader])}`);
  return problems;
}

/**
 * The one upstream call behind a gateway answer, found by the answer's request id (the video runner's
 * polls, status probes and earlier tests' stragglers reach the same simulator at any time).
 */
function callBehind(answer: { headers: Headers }) {
  return upstreamCall(stack.primary, answer.headers.get('x-request-id')!);
}

async function waitUntil(what: string, done: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

beforeAll(async () => {
  stack = await startInferenceStack();
  canary = await startCanary();
  redirector = await startRedirector(canary.url);
  const [primaryId, backupId, anthropicId] = stack.canaries.upstreamIds as [string, string, string];
  const prefix = stack.canaries.upstreamModelPrefix;
  const routes = (models: string[], weight = 1) => [{ group: 'cheap', models, modelMap: Object.fromEntries(models.map((m) => [m, `${prefix}${m}`])), weight }];
  const timeouts = { connectMs: 1_000, firstByteMs: 3_000, idleMs: 3_000 };
  const viaPrimary = [...CHAT_MODELS, TRANSLATED_FAMILY_B, ...IMAGE_MODELS].filter((m) => ![REDIRECTED_CHAT, REDIRECTED_IMAGE].includes(m));
  dir = await mkdtemp(path.join(tmpdir(), 'baikal-outbound-'));
  const configFile = path.join(dir, 'baikal.json');
  await writeFile(
    configFile,
    JSON.stringify({
      upstreams: [
        { id: primaryId, kind: 'openai-compatible', baseUrl: `${stack.primary.url}/v1`, credentialEnv: 'CANARY_PRIMARY_KEY', timeouts, routes: routes(viaPrimary), fallback: [backupId] },
        { id: backupId, kind: 'openai-compatible', baseUrl: `${stack.backup.url}/v1`, credentialEnv: 'CANARY_BACKUP_KEY', timeouts, routes: routes(viaPrimary, 1e-9), fallback: [] },
        { id: anthropicId, kind: 'anthropic', baseUrl: `${stack.primary.url}/v1`, credentialEnv: 'CANARY_PRIMARY_KEY', timeouts, routes: routes(ANTHROPIC_SERVED.filter((m) => m !== REDIRECTED_MESSAGES)), fallback: [] },
        { id: 'video-sim', kind: 'video-jobs', baseUrl: `${stack.primary.url}/v1`, credentialEnv: 'CANARY_PRIMARY_KEY', timeouts, routes: routes(VIDEO_MODELS), fallback: [] },
        // The redirector: the only route of some models, the first (with the live simulator as fallback) of another.
        { id: 'redirector', kind: 'openai-compatible', baseUrl: `${redirector.url}/v1`, credentialEnv: 'CANARY_PRIMARY_KEY', timeouts, routes: routes([REDIRECTED_CHAT, REDIRECTED_IMAGE, REDIRECTED_THEN_LIVE], 1e6), fallback: [primaryId] },
        { id: 'redirector-messages', kind: 'anthropic', baseUrl: `${redirector.url}/v1`, credentialEnv: 'CANARY_PRIMARY_KEY', timeouts, routes: routes([REDIRECTED_MESSAGES]), fallback: [] },
      ],
    }),
  );
  // Status probes every 0.3 s reach the redirector too; video jobs are picked up at once.
  gw = await stack.spawnPeer({ BAIKAL_CONFIG: configFile, STATUS_PROBE_SECONDS: '0.3', VIDEO_POLL_MS: '50' }, { applyUpstreams: true });
  const via = { ...stack, url: gw.url };
  const admin = await processAdmin(via);
  familyA = await apiAccount(via, admin, '20');
  familyB = await apiAccount(via, admin, '20', { provider_family: 'family_b' });
  familyC = await apiAccount(via, admin, '20', { provider_family: 'family_c' });
  familyD = await apiAccount(via, admin, '20', { provider_family: 'family_d' });
}, 120_000);

afterAll(async () => {
  await stack?.close();
  for (const server of [...(canary?.servers ?? []), redirector?.server]) if (server) await new Promise((resolve) => server.close(resolve));
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('outbound: the upstream is configuration, never the request', () => {
  it('no header or body field chooses the upstream URL, host or a header sent upstream (chat, responses, messages, images)', async () => {
    const calls: { path: string; key: string; body: Record<string, unknown>; credential: 'authorization' | 'x-api-key'; upstreamPath: string }[] = [
      { path: '/v1/chat/completions', key: familyA.key, credential: 'authorization', upstreamPath: '/v1/chat/completions', body: { model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi [sim:words=2]' }] } },
      { path: '/v1/chat/completions', key: familyA.key, credential: 'authorization', upstreamPath: '/v1/chat/completions', body: { model: 'gen-5.6-luna', stream: true, messages: [{ role: 'user', content: 'hi [sim:words=2]' }] } },
      { path: '/v1/responses', key: familyA.key, credential: 'authorization', upstreamPath: '/v1/chat/completions', body: { model: 'gen-5.6-terra', input: 'hi [sim:words=2]' } },
      { path: '/v1/messages', key: familyB.key, credential: 'x-api-key', upstreamPath: '/v1/messages', body: { model: 'lm-opus-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi [sim:words=2]' }] } },
      { path: '/v1/messages', key: familyB.key, credential: 'authorization', upstreamPath: '/v1/chat/completions', body: { model: TRANSLATED_FAMILY_B, max_tokens: 8, messages: [{ role: 'user', content: 'hi [sim:words=2]' }] } },
      { path: '/v1/images/generations', key: familyA.key, credential: 'authorization', upstreamPath: '/v1/images/generations', body: { model: 'img-2', prompt: 'a lake' } },
    ];
    const problems: string[] = [];
    for (const c of calls) {
      const clientAuth: Record<string, string> = c.path === '/v1/messages' ? { 'x-api-key': c.key, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${c.key}` };
      const answer = await post(c.path, { ...steeringHeaders(), ...clientAuth }, { ...steeringFields(), ...c.body });
      expect({ path: c.path, model: c.body.model, status: answer.status }).toEqual({ path: c.path, model: c.body.model, status: 200 });
      // Exactly one upstream call, to the configured simulator, on the configured path, with the gateway's own headers.
      const upstream = callBehind(answer);
      expect({ path: upstream.path, model: upstream.body.model }).toEqual({ path: c.upstreamPath, model: `${stack.canaries.upstreamModelPrefix}${c.body.model}` });
      // Issue 21: the Messages API's beta flags reach an Anthropic upstream as the client sent them (they choose
      // API features, never where the request goes); no other client header does.
      const carried = c.credential === 'x-api-key' ? ['anthropic-beta'] : [];
      problems.push(...upstreamHeaderProblems(upstream.headers, c.credential, carried).map((p) => `${c.path} ${String(c.body.model)}: ${p}`));
      if (c.credential === 'x-api-key') {
        expect(upstream.headers['anthropic-version']).toBe('2023-06-01');
        expect(upstream.headers['anthropic-beta']).toBe(steeringHeaders()['anthropic-beta']);
      }
    }
    expect(problems).toEqual([]);

    // A model that names a URL or a host is just an unknown model: nothing is forwarded anywhere.
    const before = stack.primary.requests.length + stack.backup.requests.length;
    for (const model of [`${canary.url}/v1`, `gen-5.6-luna@127.0.0.1:${canary.port}`, `//127.0.0.1:${canary.port}/gen-5.6-luna`, `../../gen-5.6-luna`]) {
      const answer = await http(gw.url, 'POST', '/v1/chat/completions', { token: familyA.key, body: { model, messages: [{ role: 'user', content: 'hi' }] } });
      expect([model, answer.status, answer.body.error.code]).toEqual([model, 404, 'model_not_found']);
    }
    expect(stack.primary.requests.length + stack.backup.requests.length).toBe(before);
    expect([canary.connections, canary.requests]).toEqual([0, []]);
  }, 60_000);

  it('an upstream redirect is not followed: the redirect target gets nothing, the client a clean 502 or a silent failover', async () => {
    const posts = () => redirector.requests.filter((r) => r.method === 'POST').length;
    const before = posts();
    const outcomes: string[] = [];
    // Every redirect status, JSON and streamed, on chat, Responses, Messages and images.
    for (let i = 0; i < REDIRECT_STATUSES.length * 2; i++) {
      const stream = i % 2 === 1;
      const chat = await http(gw.url, 'POST', '/v1/chat/completions', { token: familyC.key, body: { model: REDIRECTED_CHAT, stream, messages: [{ role: 'user', content: 'hi' }] } });
      outcomes.push(`chat ${chat.status} ${chat.body?.error?.code}`);
    }
    const responses = await http(gw.url, 'POST', '/v1/responses', { token: familyC.key, body: { model: REDIRECTED_CHAT, input: 'hi' } });
    outcomes.push(`responses ${responses.status} ${responses.body?.error?.code}`);
    const messages = await http(gw.url, 'POST', '/v1/messages', { headers: { 'x-api-key': familyB.key, 'anthropic-version': '2023-06-01' }, body: { model: REDIRECTED_MESSAGES, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] } });
    outcomes.push(`messages ${messages.status} ${messages.body?.error?.code}`);
    const image = await http(gw.url, 'POST', '/v1/images/generations', { token: familyA.key, body: { model: REDIRECTED_IMAGE, prompt: 'a lake' } });
    outcomes.push(`image ${image.status} ${image.body?.error?.code}`);
    expect(outcomes).toEqual([...Array.from({ length: REDIRECT_STATUSES.length * 2 }, () => 'chat 502 upstream_error'), 'responses 502 upstream_error', 'messages 502 upstream_error', 'image 502 upstream_error']);
    // The redirector was asked every time (so every redirect was really answered), the target never.
    expect(posts() - before).toBe(REDIRECT_STATUSES.length * 2 + 3);

    // With a live fallback the client never notices the redirecting route, which its redirects have taken out
    // of routing by now (a redirect is a broken route): the request goes straight to the live one.
    const failover = await http(gw.url, 'POST', '/v1/chat/completions', { token: familyC.key, body: { model: REDIRECTED_THEN_LIVE, messages: [{ role: 'user', content: 'hi [sim:words=3]' }] } });
    expect([failover.status, failover.body.choices?.[0]?.message?.content]).toEqual([200, 'baikal is the']);
    expect(posts() - before).toBe(REDIRECT_STATUSES.length * 2 + 3);

    // The status monitor's probes (GET /models) meet the same redirects and do not follow them either.
    await waitUntil('a status probe of the redirector', () => redirector.requests.some((r) => r.method === 'GET'));
    expect([canary.connections, canary.requests]).toEqual([0, []]);

    // Refused requests are recorded at no cost; the money is exact.
    await settled(stack, familyC.userId, REDIRECT_STATUSES.length * 2 + 2);
    const rows = await stack.db.query<{ status: string; error_code: string | null; amount_usd: string }>('select status, error_code, amount_usd from usage_events where user_id = $1', [familyC.userId]);
    expect(rows.filter((r) => r.error_code === 'upstream_error').every((r) => Number(r.amount_usd) === 0)).toBe(true);
    for (const account of [familyA, familyB, familyC]) {
      const balance = await ledgerBalance(stack, account.userId);
      expect(balance.ledger).toBe(balance.balance);
    }
  }, 60_000);

  it('user-supplied URLs (image URLs, video references) are forwarded as data, never fetched: the canary server sees no connection', async () => {
    const urls = [`${canary.url}/cat.png`, `http://localhost:${canary.port}/cat.png`, `http://[::1]:${canary.port}/cat.png`, 'http://169.254.169.254/latest/meta-data/iam/cat.png'];
    const forwarded: unknown[] = [];
    for (const url of urls) {
      const chatRid = requestId('ssrf-chat');
      const chat = await http(gw.url, 'POST', '/v1/chat/completions', {
        token: familyA.key,
        headers: { 'x-request-id': chatRid },
        body: { model: 'gen-5.6-luna', messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this? [sim:words=2]' }, { type: 'image_url', image_url: { url } }] }] },
      });
      expect([url, chat.status]).toEqual([url, 200]);
      forwarded.push(callBehind(chat).body.messages[0].content[1].image_url.url);

      const responses = await http(gw.url, 'POST', '/v1/responses', {
        token: familyA.key,
        body: { model: 'gen-5.6-luna', input: [{ role: 'user', content: [{ type: 'input_text', text: 'and this? [sim:words=2]' }, { type: 'input_image', image_url: url }] }] },
      });
      expect([url, responses.status]).toEqual([url, 200]);
      forwarded.push(JSON.stringify(callBehind(responses).body.messages));

      const messages = await http(gw.url, 'POST', '/v1/messages', {
        headers: { 'x-api-key': familyB.key, 'anthropic-version': '2023-06-01' },
        body: { model: 'lm-opus-5', max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url } }, { type: 'text', text: 'this? [sim:words=2]' }] }] },
      });
      expect([url, messages.status]).toEqual([url, 200]);
      forwarded.push(callBehind(messages).body.messages[0].content[0].source.url);

      const video = await http(gw.url, 'POST', '/v1/videos', {
        token: familyD.key,
        body: { model: 'beta3.0-i2v', prompt: 'animate it [sim:start-ms=10 video-ms=20]', seconds: 2, references: [{ type: 'image', role: 'first_frame', url }] },
      });
      expect([url, video.status]).toEqual([url, 201]);
      await waitUntil('the video job reaching the upstream', () => [...stack.primary.videoJobs.jobs.values()].some((job) => JSON.stringify(job.request).includes(url)));
    }
    // Each URL reached the upstream verbatim, as data.
    for (const url of urls) expect(forwarded.filter((f) => String(f).includes(url)).length).toBe(3);
    // Let the video jobs run to the end (submitted, polled, downloaded): still no fetch of a reference.
    // (Generous: in full parallel test runs the four jobs have twice not finished within 10 s, once not within 30 s;
    // the task rows are printed when that happens, to find out where they stood.)
    const unfinished = `select id, status, attempts, lease_owner, next_run_at, upstream_task_id, progress from video_tasks where user_id = $1 and status not in ('completed', 'failed')`;
    await waitUntil('every video task finished', async () => (await stack.db.query(unfinished, [familyD.userId])).length === 0, 30_000).catch(async (error: Error) => {
      const rows: { id: string }[] = await stack.db.query(unfinished, [familyD.userId]);
      // What each gateway process said about those tasks (the peer runs them; the stack's own gateway can claim them too).
      const said = (lines: string[]) => lines.filter((line) => rows.some((row) => line.includes(row.id))).slice(-20);
      throw new Error(`${error.message}: ${JSON.stringify(rows)}\npeer:\n${said(gw.lines).join('\n')}\nstack gateway:\n${said(stack.gateway.lines).join('\n')}`);
    });
    expect([canary.connections, canary.requests]).toEqual([0, []]);
  }, 60_000);
});
