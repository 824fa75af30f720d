import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerBalance } from '../helpers/accounts.js';
import { apiAccount, createKey, processAdmin, setKeyLimits, startInferenceStack, type ApiAccount, type InferenceStack } from '../helpers/inference.js';

/**
 * Issue 11, "Odd paths and hosts": `//`, `%2F`, `%2E%2E`, trailing slashes, case, absolute-form request
 * targets, odd and duplicate Host headers, duplicate Authorization headers, header-based URL overrides.
 * Every request is written byte for byte on a node:net socket, because fetch normalizes exactly what
 * is under test here. The rules: never a 2xx (or 3xx) without a valid credential of the right kind
 * (GraphQL: never any data), never a 5xx, and a valid credential is served the same whichever spelling
 * of the path reaches the route.
 */

/** Hosts tRPC's adapter cannot build a fetch Request from (an empty authority; userinfo, which a Request refuses). */
const TRPC_ODD_HOSTS = ['', 'user:pass@evil.example', 'evil.example/v1/me'];
const METRICS_TOKEN = `metrics-${randomBytes(12).toString('hex')}`;

let stack: InferenceStack;
let alice: ApiAccount;
let aliceMessagesKey: string;
let host: string;
let sent = 0;

interface Answer {
  status: number;
  head: string;
  body: string;
}

/** Writes one request on a fresh socket (Connection: close) and reads the whole answer. */
function raw(request: string | Buffer): Promise<Answer> {
  const url = new URL(stack.url);
  sent += 1;
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    socket.setTimeout(20_000, () => socket.destroy(new Error(`no answer in 20 s to ${String(request).slice(0, 80)}`)));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0), head: text.slice(0, split), body: split < 0 ? '' : text.slice(split + 4) });
    });
    socket.write(request);
  });
}

/** A request line, headers (Host first unless given) and a JSON body. */
function request(method: string, target: string, headers: string[], body?: unknown, options: { host?: string | null; version?: string } = {}): string {
  const payload = body === undefined ? '' : JSON.stringify(body);
  const lines = [`${method} ${target} ${options.version ?? 'HTTP/1.1'}`];
  if (options.host !== null) lines.push(`Host: ${options.host ?? host}`);
  lines.push(...headers, 'Connection: close');
  if (body !== undefined) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(payload)}`);
  return `${lines.join('\r\n')}\r\n\r\n${payload}`;
}

type Credential = 'none' | 'wrong kind' | 'valid';

interface Target {
  method: string;
  path: string;
  body?: unknown;
  /** How this route takes a credential of each kind. */
  headers(credential: Credential): string[];
  /** GraphQL answers 200 with errors: there, "served" means data came back. */
  served(answer: Answer): boolean;
  /** A refusal in this route's terms: a 4xx (GraphQL: also a 200 that carries only errors). */
  refused(answer: Answer): boolean;
}

const chat = { model: 'gen-5.6-luna', max_tokens: 4, messages: [{ role: 'user', content: 'hi [sim:words=2]' }] };
const served2xx = (answer: Answer) => answer.status >= 200 && answer.status < 400;
const refused4xx = (answer: Answer) => answer.status >= 400 && answer.status < 500;

function targets(): Target[] {
  const key = (credential: Credential) => (credential === 'valid' ? [`Authorization: Bearer ${alice.key}`] : credential === 'wrong kind' ? [`Authorization: Bearer ${alice.token}`] : []);
  const session = (credential: Credential) => (credential === 'valid' ? [`Authorization: Bearer ${alice.token}`] : credential === 'wrong kind' ? [`Authorization: Bearer ${alice.key}`] : []);
  const messagesKey = (credential: Credential) => [
    'anthropic-version: 2023-06-01',
    ...(credential === 'valid' ? [`x-api-key: ${aliceMessagesKey}`] : credential === 'wrong kind' ? [`x-api-key: ${alice.token}`] : []),
  ];
  const metrics = (credential: Credential) => (credential === 'valid' ? [`Authorization: Bearer ${METRICS_TOKEN}`] : credential === 'wrong kind' ? [`Authorization: Bearer ${alice.token}`] : []);
  return [
    { method: 'GET', path: '/v1/me', headers: key, served: served2xx, refused: refused4xx },
    { method: 'POST', path: '/v1/chat/completions', body: chat, headers: key, served: served2xx, refused: refused4xx },
    { method: 'POST', path: '/v1/responses', body: { model: 'gen-5.6-luna', max_output_tokens: 4, input: 'hi [sim:words=2]' }, headers: key, served: served2xx, refused: refused4xx },
    { method: 'POST', path: '/v1/messages', body: { model: 'lm-opus-5', max_tokens: 4, messages: chat.messages }, headers: messagesKey, served: served2xx, refused: refused4xx },
    { method: 'GET', path: '/v1/videos/00000000-0000-4000-8000-000000000000', headers: key, served: served2xx, refused: refused4xx },
    { method: 'GET', path: '/auth/me', headers: session, served: served2xx, refused: refused4xx },
    { method: 'GET', path: '/keys', headers: session, served: served2xx, refused: refused4xx },
    { method: 'GET', path: '/usage', headers: session, served: served2xx, refused: refused4xx },
    { method: 'GET', path: '/trpc/accounts.me', headers: session, served: served2xx, refused: refused4xx },
    { method: 'GET', path: '/metrics', headers: metrics, served: served2xx, refused: refused4xx },
    {
      method: 'POST',
      path: '/graphql',
      body: { query: '{ me { userId } }' },
      headers: session,
      served: (answer) => answer.status < 400 && /"userId"/.test(answer.body),
      refused: (answer) => refused4xx(answer) || (answer.status === 200 && /"errors":\[\{/.test(answer.body) && !/"userId"/.test(answer.body)),
    },
  ];
}

/** Spellings of a path: what a router, a proxy or a normalizer might each read differently. */
function spellings(path: string): string[] {
  const last = path.lastIndexOf('/');
  const encodeFirst = (p: string) => p.replace(/^\/(.)/, (_, c: string) => `/%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return [
    path,
    `/${path}`,
    `${path}/`,
    `${path}//`,
    path.toUpperCase(),
    path.replace(/[a-z]/g, (c, i: number) => (i % 2 ? c.toUpperCase() : c)),
    path.replaceAll('/', '%2F'),
    `${path.slice(0, last)}%2F${path.slice(last + 1)}`,
    `${path.slice(0, last)}%2f${path.slice(last + 1)}`,
    `/v1/%2E%2E${path}`,
    `/v1/%2e%2e/${path.slice(1)}`,
    `/live/..${path}`,
    `/x/../${path.slice(1)}`,
    `/.${path}`,
    `${path.slice(0, last)}/.${path.slice(last)}`,
    encodeFirst(path),
    `${path}%20`,
    `${path}%00`,
    `${path};x=1`,
    `${path}?x=1`,
    `${path}#x`,
    `${path}/.`,
    `${path}/..`,
    path.replaceAll('/', '\\'),
    `http://evil.example${path}`,
    `HTTP://EVIL.EXAMPLE:8443${path}`,
    `http://${host}${path}`,
    `https://127.0.0.1${path}`,
  ];
}

beforeAll(async () => {
  stack = await startInferenceStack({ METRICS_TOKEN });
  host = new URL(stack.url).host;
  const admin = await processAdmin(stack);
  alice = await apiAccount(stack, admin, '20');
  aliceMessagesKey = (await createKey(stack, alice.token, { provider_family: 'family_b' })).key;
  // Hundreds of admitted requests in a minute: the per-key window is not what is under test.
  await setKeyLimits(stack, admin, alice.keyId, { rpmLimit: 100_000 });
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

describe('odd paths, hosts and headers, over raw sockets', () => {
  it('every spelling of every protected path: nothing served without a valid credential of the right kind, never a 5xx', async () => {
    const upstreamBefore = stack.primary.requests.length + stack.backup.requests.length;
    const wrong: string[] = [];
    let tried = 0;
    for (const target of targets()) {
      for (const spelling of spellings(target.path)) {
        for (const credential of ['none', 'wrong kind'] as const) {
          const answer = await raw(request(target.method, spelling, target.headers(credential), target.body));
          tried += 1;
          if (target.served(answer) || !target.refused(answer)) wrong.push(`${credential}: ${target.method} ${spelling} -> ${answer.status} ${answer.body.slice(0, 120)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(tried).toBe(targets().length * spellings('/x').length * 2);
    // Nothing unauthenticated reached an upstream.
    expect(stack.primary.requests.length + stack.backup.requests.length).toBe(upstreamBefore);
  }, 90_000);

  it('with a valid credential: served or refused in our own words, never a 5xx; the plain spellings are all served', async () => {
    let served = 0;
    const wrong: string[] = [];
    for (const target of targets()) {
      const plain = await raw(request(target.method, target.path, target.headers('valid'), target.body));
      // The video id is nobody's: 404 is the right answer there; everything else is served.
      expect({ target: target.path, status: plain.status }).toEqual({ target: target.path, status: target.path.startsWith('/v1/videos/') ? 404 : 200 });
      for (const spelling of spellings(target.path)) {
        const answer = await raw(request(target.method, spelling, target.headers('valid'), target.body));
        if (answer.status < 200 || answer.status >= 500) wrong.push(`${target.method} ${spelling} -> ${answer.status}`);
        if (target.served(answer)) served += 1;
      }
      // What must be served like the plain path: a trailing slash, another case, an empty query, absolute-form (RFC 9112 3.2.2).
      // (tRPC procedure names are case-sensitive and take no trailing slash: there, only the last three.)
      const trpc = target.path.startsWith('/trpc/');
      for (const spelling of [...(trpc ? [] : [`${target.path}/`, target.path.toUpperCase()]), `${target.path}?`, `http://${host}${target.path}`, `http://evil.example${target.path}`]) {
        const answer = await raw(request(target.method, spelling, target.headers('valid'), target.body));
        if (answer.status !== plain.status) wrong.push(`${target.method} ${spelling} -> ${answer.status}, not ${plain.status} as ${target.path}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(served).toBeGreaterThan(0);
    // Every admitted inference request was settled once: ledger = balance, usage events = admitted requests.
    const until = Date.now() + 10_000;
    let events = 0;
    const upstreamCalls = () => [...stack.primary.requests, ...stack.backup.requests].filter((r) => r.headers.authorization || r.headers['x-api-key']).length;
    while (Date.now() < until) {
      [{ n: events }] = (await stack.db.query<{ n: number }>(`select count(*)::int as n from usage_events where user_id = $1 and status = 'success'`, [alice.userId])) as [{ n: number }];
      if (events === upstreamCalls()) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(events).toBe(upstreamCalls());
    const balance = await ledgerBalance(stack, alice.userId);
    expect(balance.ledger).toBe(balance.balance);
  }, 90_000);

  it('odd Host headers and URL-override headers change nothing: same refusals, same service', async () => {
    const hosts: { name: string; host: string | null; extra?: string[]; version?: string }[] = [
      { name: 'evil', host: 'evil.example' },
      { name: 'localhost', host: 'localhost' },
      { name: 'other port', host: '127.0.0.1:1' },
      { name: 'ipv6', host: '[::1]' },
      { name: 'empty', host: '' },
      { name: 'with path', host: 'evil.example/v1/me' },
      { name: 'with credentials', host: 'user:pass@evil.example' },
      { name: 'very long', host: `${'a'.repeat(4000)}.example` },
      { name: 'duplicate', host: 'evil.example', extra: [`Host: ${'127.0.0.1'}`] },
      { name: 'none (HTTP/1.0)', host: null, version: 'HTTP/1.0' },
      { name: 'none (HTTP/1.1)', host: null },
    ];
    const overrides = ['X-Forwarded-Host: evil.example', 'X-Forwarded-Proto: https', 'X-Original-URL: /live', 'X-Rewrite-URL: /live', 'X-HTTP-Method-Override: GET', 'Forwarded: for=1.2.3.4;host=evil.example;proto=https'];
    const wrong: string[] = [];
    for (const target of targets()) {
      const plainValid = await raw(request(target.method, target.path, target.headers('valid'), target.body));
      // tRPC with a Host it cannot make a URL of has its own test, below.
      for (const h of hosts.filter((h) => !(target.path.startsWith('/trpc/') && TRPC_ODD_HOSTS.includes(h.host ?? '-')))) {
        for (const credential of ['none', 'wrong kind'] as const) {
          const answer = await raw(request(target.method, target.path, [...(h.extra ?? []), ...target.headers(credential), ...overrides], target.body, { host: h.host, version: h.version }));
          if (target.served(answer) || !target.refused(answer)) wrong.push(`${credential}, host ${h.name}: ${target.method} ${target.path} -> ${answer.status}`);
        }
        const valid = await raw(request(target.method, target.path, [...(h.extra ?? []), ...target.headers('valid')], target.body, { host: h.host, version: h.version }));
        // HTTP/1.1 without a Host is malformed (400 from the parser); any other Host is served as usual.
        const expected = h.name === 'none (HTTP/1.1)' ? 400 : plainValid.status;
        if (valid.status !== expected) wrong.push(`valid, host ${h.name}: ${target.method} ${target.path} -> ${valid.status}, not ${expected}`);
      }
    }
    expect(wrong).toEqual([]);
  }, 90_000);

  it('duplicate credentials: a refused one first is never rescued by a valid one after it; smuggling framings are refused', async () => {
    const garbage = 'Authorization: Bearer baikal-sk-garbage';
    for (const target of targets().filter((t) => t.path !== '/v1/messages')) {
      const [valid] = target.headers('valid');
      // node keeps the first Authorization header: garbage first is refused, valid first is served.
      const garbageFirst = await raw(request(target.method, target.path, [garbage, valid!], target.body));
      expect({ target: target.path, served: target.served(garbageFirst), refused: target.refused(garbageFirst) }).toEqual({ target: target.path, served: false, refused: true });
      const validFirst = await raw(request(target.method, target.path, [valid!, garbage], target.body));
      expect({ target: target.path, status: validFirst.status }).toEqual({ target: target.path, status: target.path.startsWith('/v1/videos/') ? 404 : 200 });
    }
    // Two x-api-key headers are joined by node ("a, b"): never a key.
    const messages = targets().find((t) => t.path === '/v1/messages')!;
    for (const pair of [[`x-api-key: baikal-sk-garbage`, `x-api-key: ${aliceMessagesKey}`], [`x-api-key: ${aliceMessagesKey}`, `x-api-key: baikal-sk-garbage`]]) {
      const answer = await raw(request('POST', '/v1/messages', ['anthropic-version: 2023-06-01', ...pair], messages.body));
      expect(answer.status).toBe(401);
    }
    // Request smuggling framings: both lengths, two lengths, an obfuscated transfer coding. The parser refuses them.
    const body = JSON.stringify(chat);
    const smuggled = [
      `POST /v1/chat/completions HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /v1/me HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${alice.key}\r\n\r\n`,
      `POST /v1/chat/completions HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nContent-Length: 5\r\n\r\n${body}`,
      `POST /v1/chat/completions HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nTransfer-Encoding: xchunked\r\n\r\n${body}`,
    ];
    for (const request of smuggled) {
      const answer = await raw(request);
      expect(answer.status).toBe(400);
      expect(answer.body).not.toContain('"object":"api_key"');
    }
  }, 60_000);

  it('after all of it: no 5xx in the gateway log, no unhandled error, and it still serves', async () => {
    const statuses = stack.gateway.lines.filter((line) => line.includes('"msg":"request"')).map((line) => JSON.parse(line).status as number);
    expect(statuses.length).toBeGreaterThan(500);
    expect(statuses.filter((status) => status >= 500)).toEqual([]);
    expect(stack.gateway.lines.filter((line) => /unhandled/.test(line))).toEqual([]);
    const answer = await raw(request('GET', '/v1/me', [`Authorization: Bearer ${alice.key}`]));
    expect(answer.status).toBe(200);
    console.log(`paths: ${sent} raw-socket requests (${targets().length} protected routes x ${spellings('/x').length} spellings, hosts and duplicate headers); ${statuses.length} answers logged, none 5xx`);
  });

  // Runs last: until it passes, its 500s would also fail the log check above.
  it('tRPC with an empty Host or a Host carrying userinfo: refused or served, never a 500', async () => {
    const trpc = targets().find((t) => t.path === '/trpc/accounts.me')!;
    const wrong: string[] = [];
    for (const odd of TRPC_ODD_HOSTS) {
      for (const credential of ['none', 'wrong kind', 'valid'] as const) {
        const answer = await raw(request('GET', trpc.path, trpc.headers(credential), undefined, { host: odd }));
        const ok = credential === 'valid' ? answer.status === 200 : trpc.refused(answer) && !trpc.served(answer);
        if (!ok) wrong.push(`${credential}, Host ${JSON.stringify(odd)}: ${answer.status} ${answer.body.slice(0, 100)}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
