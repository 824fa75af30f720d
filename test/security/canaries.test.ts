import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import defaultCatalog from '../../src/catalog/default-catalog.json' with { type: 'json' };
import { ledgerBalance } from '../helpers/accounts.js';
import { http, trpcClient, type JsonResponse } from '../helpers/clients.js';
import {
  ANTHROPIC_SERVED,
  apiAccount,
  createKey,
  processAdmin,
  recordingFetch,
  requestId,
  setKeyLimits,
  settled,
  startInferenceStack,
  TRANSLATED_FAMILY_B,
  usageEventOf,
  type ApiAccount,
  type InferenceStack,
} from '../helpers/inference.js';
import type { ServerProcess } from '../helpers/process.js';
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';

/**
 * Issue 11, "Canary secrets": secrets and internals are planted in the upstream configuration and in
 * the upstreams' own error texts, every error path of /v1 is triggered (by the official openai and
 * @anthropic-ai/sdk clients and by raw fetch), and every response body, header and SSE frame the
 * clients got, every GraphQL error and every usage record a user can read is searched: zero hits.
 * The gateway's own stdout/stderr is searched for the credentials (never logged; hosts may be).
 *
 * Besides the stack's canaries (credentials, upstream ids, hosts, upstream model names, error texts),
 * this file plants:
 * - an upstream credential `sk-CANARY-…` on a simulator whose every error text echoes that very
 *   credential and the host `canary.invalid` (real upstreams and proxies do echo keys);
 * - upstreams whose base URL host is `canary.invalid`, which cannot resolve: requests routed there
 *   fail with a connection error (alone: the client's error; first of two: a silent failover).
 */

const CHAT_MODELS = defaultCatalog.models.filter((m) => m.endpoints.includes('/v1/chat/completions')).map((m) => m.id);
const IMAGE_MODELS = defaultCatalog.models.filter((m) => m.endpoints.includes('/v1/images/generations')).map((m) => m.id);
/** Served only by the echoing `sk-CANARY` simulator. */
const ECHO_CHAT = 'gen-5.6-sol';
const ECHO_MESSAGES = 'lm-fable-5';
const ECHO_IMAGE = 'img-2';
/** Served only by `canary.invalid` (a connection failure every time). */
const DEAD_CHAT = 'zeta-5.2';
const DEAD_MESSAGES = 'lm-fable-5-cache';
/** `canary.invalid` first, then the echo simulator: a failover the client never sees. */
const FAILOVER_CHAT = 'eta-k3';

let stack: InferenceStack;
let gw: ServerProcess;
/** The stack, seen through the gateway under test (the helpers only read `url`, `db` and `received`). */
let via: InferenceStack;
let echo: Simulator;
let dir: string;
let skCanary: string;
let extraCanaries: string[];
let admin: { token: string; userId: string };
let familyA: ApiAccount;
let familyB: ApiAccount;

/** Every response header block the clients received (bodies go to `stack.received`, through the shared recordingFetch). */
const headerBlocks: string[] = [];
let responses = 0;

function headerText(status: number, headers: Headers): string {
  return [`HTTP ${status}`, ...[...headers].map(([name, value]) => `${name}: ${value}`)].join('\n');
}

/** A fetch for the SDK clients that records each response's headers, and (through recordingFetch) its body byte for byte. */
function capturingFetch(): typeof fetch {
  const bodies = recordingFetch(stack.received);
  return async (input, init) => {
    const response = await bodies(input, init);
    responses += 1;
    headerBlocks.push(headerText(response.status, response.headers));
    return response;
  };
}

/** The shared `http` helper against the gateway under test, recording what came back. */
async function call(method: string, urlPath: string, options: Parameters<typeof http>[3] = {}): Promise<JsonResponse> {
  const response = await http(gw.url, method, urlPath, options);
  responses += 1;
  stack.received.push(response.text);
  headerBlocks.push(headerText(response.status, response.headers));
  return response;
}

/** Raw fetch of a stream: every byte as it came, recorded. */
async function rawStream(urlPath: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; text: string }> {
  const response = await capturingFetch()(`${gw.url}${urlPath}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: response.status, text: await response.text() };
}

async function graphqlQuery(query: string, token?: string, variables?: Record<string, unknown>): Promise<JsonResponse> {
  return call('POST', '/graphql', { token, body: { query, variables } });
}

function openai(key: string): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0, timeout: 30_000, fetch: capturingFetch() });
}

function anthropic(key: string): Anthropic {
  // SPEC.md section 5: `x-api-key` and `anthropic-version: 2023-06-01` (as the shared anthropicClient does).
  return new Anthropic({ apiKey: null, baseURL: gw.url, defaultHeaders: { 'x-api-key': key, 'anthropic-version': '2023-06-01' }, maxRetries: 0, timeout: 30_000, fetch: capturingFetch() });
}

/** The HTTP status and our error code of a failed SDK call (either SDK). */
async function sdkFailure(work: Promise<unknown>): Promise<{ status: number | undefined; code: string | undefined; message: string }> {
  try {
    await work;
  } catch (error) {
    if (error instanceof OpenAI.APIError) return { status: error.status, code: (error.code ?? (error.error as any)?.code) as string | undefined, message: error.message };
    if (error instanceof Anthropic.APIError) return { status: error.status, code: (error.error as any)?.error?.code, message: error.message };
    throw error;
  }
  throw new Error('expected the call to fail');
}

/** Consumes an SDK stream; resolves with the text delivered and the error that ended it (or null). */
async function drain(stream: AsyncIterable<any>): Promise<{ text: string; error: string | null }> {
  let text = '';
  try {
    for await (const event of stream) {
      text += event?.choices?.[0]?.delta?.content ?? event?.delta?.text ?? (event?.type === 'response.output_text.delta' ? event.delta : '');
    }
  } catch (error) {
    return { text, error: (error as Error).message };
  }
  return { text, error: null };
}

const chatBody = (model: string, content: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content }], ...extra });
const messagesBody = (model: string, content: string, extra: Record<string, unknown> = {}) => ({ model, max_tokens: 64, messages: [{ role: 'user', content }], ...extra });
const messagesHeaders = (key: string) => ({ 'x-api-key': key, 'anthropic-version': '2023-06-01' });

/** The credentials of this run: none may reach a client, a usage record or a log line. */
function credentialCanaries(): string[] {
  return [stack.canaries.credential, stack.canaries.backupCredential, skCanary];
}

function allCanaries(): string[] {
  return [...stack.canaries.all(), ...extraCanaries];
}

beforeAll(async () => {
  stack = await startInferenceStack();
  const tag = randomBytes(6).toString('hex');
  skCanary = `sk-CANARY-${randomBytes(18).toString('hex')}`;
  // The upstream echoes its own credential, a private host and an account id in every error text.
  const echoDetail = `(invalid request for key ${skCanary} at https://canary.invalid/v1, org acct_CANARY_${tag})`;
  echo = await startSimulator({ apiKey: skCanary, errorDetail: echoDetail, name: 'echo' });
  const [primaryId, backupId, anthropicId] = stack.canaries.upstreamIds as [string, string, string];
  const echoId = `canary-echo-${tag}`;
  const echoMessagesId = `canary-echo-messages-${tag}`;
  const deadId = `canary-dead-${tag}`;
  const deadMessagesId = `canary-dead-messages-${tag}`;
  extraCanaries = [skCanary, 'canary.invalid', `acct_CANARY_${tag}`, echoId, echoMessagesId, deadId, deadMessagesId, new URL(echo.url).host, tag];

  const prefix = stack.canaries.upstreamModelPrefix;
  const mapped = (models: string[]) => Object.fromEntries(models.map((m) => [m, `${prefix}${m}`]));
  const timeouts = { connectMs: 1_000, firstByteMs: 1_500, idleMs: 3_000 };
  const route = (models: string[], weight = 1) => [{ group: 'cheap', models, modelMap: mapped(models), weight }];
  const viaPrimary = [...CHAT_MODELS, TRANSLATED_FAMILY_B, ...IMAGE_MODELS].filter((m) => ![ECHO_CHAT, ECHO_IMAGE, DEAD_CHAT, FAILOVER_CHAT].includes(m));
  const anthropicPrimary = ANTHROPIC_SERVED.filter((m) => m !== ECHO_MESSAGES && m !== DEAD_MESSAGES);
  dir = await mkdtemp(path.join(tmpdir(), 'baikal-canaries-'));
  const configFile = path.join(dir, 'baikal.json');
  await writeFile(
    configFile,
    JSON.stringify({
      upstreams: [
        { id: primaryId, kind: 'openai-compatible', baseUrl: `${stack.primary.url}/v1`, credentialEnv: 'CANARY_PRIMARY_KEY', timeouts, routes: route(viaPrimary), fallback: [backupId] },
        { id: backupId, kind: 'openai-compatible', baseUrl: `${stack.backup.url}/v1`, credentialEnv: 'CANARY_BACKUP_KEY', timeouts, routes: route(viaPrimary, 1e-9), fallback: [] },
        { id: anthropicId, kind: 'anthropic', baseUrl: `${stack.primary.url}/v1`, credentialEnv: 'CANARY_PRIMARY_KEY', timeouts, routes: route(anthropicPrimary), fallback: [] },
        { id: echoId, kind: 'openai-compatible', baseUrl: `${echo.url}/v1`, credentialEnv: 'CANARY_SK_KEY', timeouts, routes: [...route([ECHO_CHAT, ECHO_IMAGE]), ...route([FAILOVER_CHAT], 1e-9)], fallback: [] },
        { id: echoMessagesId, kind: 'anthropic', baseUrl: `${echo.url}/v1`, credentialEnv: 'CANARY_SK_KEY', timeouts, routes: route([ECHO_MESSAGES]), fallback: [] },
        { id: deadId, kind: 'openai-compatible', baseUrl: 'https://canary.invalid/v1', credentialEnv: 'CANARY_SK_KEY', timeouts, routes: route([DEAD_CHAT, FAILOVER_CHAT]), fallback: [echoId] },
        { id: deadMessagesId, kind: 'anthropic', baseUrl: 'https://canary.invalid/v1', credentialEnv: 'CANARY_SK_KEY', timeouts, routes: route([DEAD_MESSAGES]), fallback: [] },
      ],
    }),
  );
  // The gateway under test: a second process of the stack (same database), with this file's upstreams.
  gw = await stack.spawnPeer({ BAIKAL_CONFIG: configFile, CANARY_SK_KEY: skCanary, STATUS_PROBE_SECONDS: '1' }, { applyUpstreams: true });
  via = { ...stack, url: gw.url };
  admin = await processAdmin(via);
  familyA = await apiAccount(via, admin, '20');
  familyB = await apiAccount(via, admin, '20', { provider_family: 'family_b' });
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await echo?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Upstream refusals the simulator plays on request, and what each becomes for our client. */
const UPSTREAM_REFUSALS = [
  ['status=400', 400, 'request_rejected'],
  ['status=401', 502, 'upstream_error'],
  ['status=429', 429, 'upstream_rate_limited'],
  ['status=500', 502, 'upstream_error'],
  ['status=529', 502, 'upstream_error'],
] as const;

describe('every /v1 error path, and nothing private in any answer', () => {
  it('raw fetch: 400, 401, 402, 403, 404, 413, 422, 429, upstream 4xx/5xx, timeouts and connection failures, each in our own words', async () => {
    const a = familyA.key;
    const b = familyB.key;
    const broke = await apiAccount(via, admin, null);
    const capped = await http(gw.url, 'POST', '/keys', { token: familyA.token, body: { monthly_spend_cap: '0' } });
    expect(capped.status).toBe(201);
    const limited = await createKey(via, familyA.token, { label: 'one a minute' });
    await setKeyLimits(via, admin, limited.id, { rpmLimit: 1 });

    const bearer = { authorization: `Bearer ${a}` };
    const cases: { name: string; path: string; headers?: Record<string, string>; body?: unknown; rawBody?: string; status: number; code: string }[] = [
      { name: 'no key', path: '/v1/chat/completions', body: chatBody('gen-5.6-luna', 'hi'), status: 401, code: 'missing_api_key' },
      { name: 'key in x-api-key', path: '/v1/chat/completions', headers: { 'x-api-key': a }, body: chatBody('gen-5.6-luna', 'hi'), status: 401, code: 'wrong_auth_header' },
      { name: 'unknown key', path: '/v1/chat/completions', headers: { authorization: 'Bearer baikal-sk-unknown' }, body: chatBody('gen-5.6-luna', 'hi'), status: 401, code: 'invalid_api_key' },
      { name: 'session token as key', path: '/v1/responses', headers: { authorization: `Bearer ${familyA.token}` }, body: { model: 'gen-5.6-luna', input: 'hi' }, status: 401, code: 'invalid_api_key' },
      { name: 'messages: Bearer', path: '/v1/messages', headers: { authorization: `Bearer ${b}`, 'anthropic-version': '2023-06-01' }, body: messagesBody('lm-opus-5', 'hi'), status: 401, code: 'wrong_auth_header' },
      { name: 'messages: no version', path: '/v1/messages', headers: { 'x-api-key': b }, body: messagesBody('lm-opus-5', 'hi'), status: 400, code: 'invalid_version_header' },
      { name: 'image model on chat', path: '/v1/chat/completions', headers: bearer, body: chatBody('img-1.5', 'a lake'), status: 400, code: 'endpoint_not_supported_for_model' },
      { name: 'charset', path: '/v1/chat/completions', headers: { ...bearer, 'content-type': 'application/json; charset=latin1' }, rawBody: '{}', status: 400, code: 'unsupported_charset' },
      { name: 'encoding', path: '/v1/chat/completions', headers: { ...bearer, 'content-encoding': 'zstd-canary' }, rawBody: '{}', status: 400, code: 'unsupported_content_encoding' },
      { name: 'broke', path: '/v1/chat/completions', headers: { authorization: `Bearer ${broke.key}` }, body: chatBody('gen-5.6-luna', 'hi'), status: 402, code: 'insufficient_balance' },
      { name: 'spend cap', path: '/v1/chat/completions', headers: { authorization: `Bearer ${capped.body.key}` }, body: chatBody('gen-5.6-luna', 'hi'), status: 402, code: 'spend_cap_reached' },
      { name: 'scope', path: '/v1/chat/completions', headers: bearer, body: chatBody('delta-4.5', 'hi'), status: 403, code: 'key_scope_denied' },
      { name: 'messages scope', path: '/v1/messages', headers: messagesHeaders(a), body: messagesBody('lm-opus-5', 'hi'), status: 403, code: 'key_scope_denied' },
      { name: 'unknown model', path: '/v1/chat/completions', headers: bearer, body: chatBody('no-such-model', 'hi'), status: 404, code: 'model_not_found' },
      { name: 'unknown endpoint', path: '/v1/canary-nope', headers: bearer, body: {}, status: 404, code: 'not_found' },
      { name: 'unsupported endpoint', path: '/v1/embeddings', headers: bearer, body: { model: 'gen-5.6-luna', input: 'x' }, status: 404, code: 'unsupported_endpoint' },
      { name: 'no messages', path: '/v1/chat/completions', headers: bearer, body: { model: 'gen-5.6-luna' }, status: 422, code: 'validation_failed' },
      { name: 'malformed JSON', path: '/v1/chat/completions', headers: bearer, rawBody: '{"model": "gen-5.6-luna", ', status: 422, code: 'validation_failed' },
      { name: 'image on a text model', path: '/v1/chat/completions', headers: bearer, body: { model: DEAD_CHAT, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }] }, status: 422, code: 'validation_failed' },
      { name: 'messages: invalid body', path: '/v1/messages', headers: messagesHeaders(b), body: { model: 'lm-opus-5', messages: [] }, status: 422, code: 'validation_failed' },
      // What upstreams answer: their words (which echo the credential and canary.invalid) never pass through.
      { name: 'upstream 400', path: '/v1/chat/completions', headers: bearer, body: chatBody(ECHO_CHAT, 'x [sim:status=400]'), status: 400, code: 'request_rejected' },
      { name: 'upstream 401', path: '/v1/chat/completions', headers: bearer, body: chatBody(ECHO_CHAT, 'x [sim:status=401]'), status: 502, code: 'upstream_error' },
      { name: 'upstream 403', path: '/v1/chat/completions', headers: bearer, body: chatBody(ECHO_CHAT, 'x [sim:status=403]'), status: 502, code: 'upstream_error' },
      { name: 'upstream 404', path: '/v1/chat/completions', headers: bearer, body: chatBody(ECHO_CHAT, 'x [sim:status=404]'), status: 502, code: 'upstream_error' },
      { name: 'upstream 413', path: '/v1/chat/completions', headers: bearer, body: chatBody(ECHO_CHAT, 'x [sim:status=413]'), status: 400, code: 'request_rejected' },
      { name: 'upstream 422', path: '/v1/chat/completions', headers: bearer, body: chatBody(ECHO_CHAT, 'x [sim:status=422]'), status: 400, code: 'request_rejected' },
      { name: 'upstream 429', path: '/v1/chat/completions', headers: bearer, body: chatBody(ECHO_CHAT, 'x [sim:status=429]'), status: 429, code: 'upstream_rate_limited' },
      { name: 'upstream 500', path: '/v1/chat/completions', headers: bearer, body: chatBody(ECHO_CHAT, 'x [sim:status=500]'), status: 502, code: 'upstream_error' },
      { name: 'upstream 503', path: '/v1/chat/completions', headers: bearer, body: chatBody(ECHO_CHAT, 'x [sim:status=503]'), status: 502, code: 'upstream_error' },
      { name: 'upstream 504', path: '/v1/chat/completions', headers: bearer, body: chatBody(ECHO_CHAT, 'x [sim:status=504]'), status: 503, code: 'upstream_timeout' },
      { name: 'primary and backup 500', path: '/v1/chat/completions', headers: bearer, body: chatBody('gen-5.6-luna', 'x [sim:status=500]'), status: 502, code: 'upstream_error' },
      { name: 'upstream hangs', path: '/v1/chat/completions', headers: bearer, body: chatBody(ECHO_CHAT, 'x [sim:hang]'), status: 503, code: 'upstream_timeout' },
      { name: 'canary.invalid', path: '/v1/chat/completions', headers: bearer, body: chatBody(DEAD_CHAT, 'x'), status: 502, code: 'upstream_error' },
      { name: 'responses: upstream 500', path: '/v1/responses', headers: bearer, body: { model: ECHO_CHAT, input: 'x [sim:status=500]' }, status: 502, code: 'upstream_error' },
      { name: 'messages: upstream 529', path: '/v1/messages', headers: messagesHeaders(b), body: messagesBody(ECHO_MESSAGES, 'x [sim:status=529]'), status: 502, code: 'upstream_error' },
      { name: 'messages: upstream 400', path: '/v1/messages', headers: messagesHeaders(b), body: messagesBody(ECHO_MESSAGES, 'x [sim:status=400]'), status: 400, code: 'request_rejected' },
      { name: 'messages: upstream 429', path: '/v1/messages', headers: messagesHeaders(b), body: messagesBody(ECHO_MESSAGES, 'x [sim:status=429]'), status: 429, code: 'upstream_rate_limited' },
      { name: 'messages: canary.invalid', path: '/v1/messages', headers: messagesHeaders(b), body: messagesBody(DEAD_MESSAGES, 'x'), status: 502, code: 'upstream_error' },
      { name: 'bridge: upstream 503', path: '/v1/bridge/chat/completions', headers: { authorization: `Bearer ${b}` }, body: chatBody('bridge-opus-5', 'x [sim:status=503]'), status: 502, code: 'upstream_error' },
      { name: 'image: upstream 500', path: '/v1/images/generations', headers: bearer, body: { model: ECHO_IMAGE, prompt: 'a lake [sim:status=500]' }, status: 502, code: 'upstream_error' },
      { name: 'image: upstream 400', path: '/v1/images/generations', headers: bearer, body: { model: ECHO_IMAGE, prompt: 'a lake [sim:status=400]' }, status: 400, code: 'request_rejected' },
    ];
    const seen = new Set<number>();
    for (const c of cases) {
      const response = await call('POST', c.path, { headers: c.headers, body: c.body, rawBody: c.rawBody });
      // Both shapes (OpenAI's and the Messages API's) carry our code at error.code.
      const code = response.body?.error?.code;
      expect({ name: c.name, status: response.status, code }).toEqual({ name: c.name, status: c.status, code: c.code });
      seen.add(response.status);
    }

    // 413: a declared length over 25 MiB, and a small gzip body that inflates past it.
    const huge = await call('POST', '/v1/chat/completions', { headers: bearer, rawBody: `{"model":"gen-5.6-luna","messages":[{"role":"user","content":"${'a'.repeat(25 * 1024 * 1024)}"}]}` });
    expect([huge.status, huge.body.error.code]).toEqual([413, 'payload_too_large']);
    const bomb = await capturingFetch()(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(Buffer.from(`{"model":"gen-5.6-luna","messages":[{"role":"user","content":"${' '.repeat(26 * 1024 * 1024)}"}]}`)),
    });
    expect([bomb.status, ((await bomb.json()) as any).error.code]).toEqual([413, 'payload_too_large']);
    seen.add(413);

    // 429: the key's own minute window, then the model's upstream (above).
    expect((await call('POST', '/v1/chat/completions', { token: limited.key, body: chatBody('gen-5.6-luna', 'one [sim:words=1]') })).status).toBe(200);
    const second = await call('POST', '/v1/chat/completions', { token: limited.key, body: chatBody('gen-5.6-luna', 'two') });
    expect([second.status, second.body.error.code]).toEqual([429, 'rate_limited']);

    // A failover from canary.invalid to a live route is invisible to the client.
    const failover = await call('POST', '/v1/chat/completions', { headers: bearer, body: chatBody(FAILOVER_CHAT, 'hi [sim:words=3]') });
    expect(failover.status).toBe(200);
    expect(failover.body.choices[0].message.content).toBe('baikal is the');

    // Mid-stream: a cut after a few chunks and an idle timeout, in each stream format.
    const cutChat = await rawStream('/v1/chat/completions', bearer, chatBody(ECHO_CHAT, 'x [sim:words=10 cut-after=3]', { stream: true }));
    expect(cutChat.status).toBe(200);
    expect(cutChat.text).toContain('"code":"stream_interrupted"');
    const idle = await rawStream('/v1/chat/completions', bearer, chatBody(ECHO_CHAT, 'x [sim:words=3 chunk-delay=3500]', { stream: true }));
    expect(idle.text).toContain('"code":"stream_interrupted"');
    const cutResponses = await rawStream('/v1/responses', bearer, { model: ECHO_CHAT, input: 'x [sim:words=10 cut-after=3]', stream: true });
    expect(cutResponses.text).toMatch(/stream_interrupted|response\.failed|"type":"error"/);
    const cutMessages = await rawStream('/v1/messages', messagesHeaders(b), messagesBody(ECHO_MESSAGES, 'x [sim:words=10 cut-after=3]', { stream: true }));
    expect(cutMessages.text).toContain('event: error');
    const cutBridge = await rawStream('/v1/bridge/chat/completions', { authorization: `Bearer ${b}` }, chatBody('bridge-opus-5', 'x [sim:words=10 cut-after=2]', { stream: true }));
    expect(cutBridge.text).toContain('stream_interrupted');

    expect([...seen].sort()).toEqual(expect.arrayContaining([400, 401, 402, 403, 404, 413, 422, 429, 502, 503]));
    // The echo upstream really did answer with its credential in the error text, and was really reached.
    expect(echo.requests.length).toBeGreaterThan(10);
  }, 120_000);

  it('the official openai client: the same refusals and failures, JSON and streamed', async () => {
    const client = openai(familyA.key);
    const chat = (model: string, content: string) => client.chat.completions.create({ model, messages: [{ role: 'user', content }] });
    expect(await sdkFailure(openai('baikal-sk-nope').chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi' }] }))).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(await sdkFailure(chat('delta-4.6', 'hi'))).toMatchObject({ status: 403, code: 'key_scope_denied' });
    expect(await sdkFailure(chat('no-such-model', 'hi'))).toMatchObject({ status: 404, code: 'model_not_found' });
    expect(await sdkFailure(chat('img-2', 'hi'))).toMatchObject({ status: 400, code: 'endpoint_not_supported_for_model' });
    expect(await sdkFailure(client.chat.completions.create({ model: 'gen-5.6-luna', messages: [] }))).toMatchObject({ status: 422, code: 'validation_failed' });
    for (const [directive, status, code] of UPSTREAM_REFUSALS) {
      expect(await sdkFailure(chat(ECHO_CHAT, `x [sim:${directive}]`))).toMatchObject({ status, code });
    }
    expect(await sdkFailure(chat(DEAD_CHAT, 'x'))).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(await sdkFailure(chat(ECHO_CHAT, 'x [sim:latency=2500]'))).toMatchObject({ status: 503, code: 'upstream_timeout' });
    expect(await sdkFailure(openai((await apiAccount(via, admin, null)).key).chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hi' }] }))).toMatchObject({
      status: 402,
      code: 'insufficient_balance',
    });
    expect(await sdkFailure(client.responses.create({ model: ECHO_CHAT, input: 'x [sim:status=503]' }))).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(await sdkFailure(client.images.generate({ model: ECHO_IMAGE, prompt: 'a lake [sim:status=500]' }))).toMatchObject({ status: 502, code: 'upstream_error' });

    const cut = await drain(await client.chat.completions.create({ model: ECHO_CHAT, messages: [{ role: 'user', content: 'x [sim:words=10 cut-after=4]' }], stream: true }));
    expect(cut.text).toBe('baikal is the deepest');
    expect(cut.error).toBeTruthy();
    const cutResponses = await drain(await client.responses.create({ model: ECHO_CHAT, input: 'x [sim:words=10 cut-after=4]', stream: true }));
    expect(cutResponses.text).toBe('baikal is the deepest');
    const fine = await drain(await client.chat.completions.create({ model: FAILOVER_CHAT, messages: [{ role: 'user', content: 'x [sim:words=5]' }], stream: true }));
    expect(fine).toEqual({ text: 'baikal is the deepest lake', error: null });
  }, 60_000);

  it('the official @anthropic-ai/sdk client: the same refusals and failures, JSON and streamed', async () => {
    const client = anthropic(familyB.key);
    const message = (model: string, content: string) => client.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content }] });
    expect(await sdkFailure(anthropic('baikal-sk-nope').messages.create({ model: 'lm-opus-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }))).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(await sdkFailure(anthropic(familyA.key).messages.create({ model: 'lm-opus-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }))).toMatchObject({ status: 403, code: 'key_scope_denied' });
    expect(await sdkFailure(message('no-such-model', 'hi'))).toMatchObject({ status: 404, code: 'model_not_found' });
    expect(await sdkFailure(client.messages.create({ model: 'lm-opus-5', max_tokens: 5, messages: [] }))).toMatchObject({ status: 422, code: 'validation_failed' });
    for (const [directive, status, code] of [...UPSTREAM_REFUSALS, ['hang', 503, 'upstream_timeout'] as const]) {
      expect(await sdkFailure(message(ECHO_MESSAGES, `x [sim:${directive}]`))).toMatchObject({ status, code });
    }
    expect(await sdkFailure(message(DEAD_MESSAGES, 'x'))).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(await sdkFailure(anthropic((await apiAccount(via, admin, null, { provider_family: 'family_b' })).key).messages.create({ model: 'lm-opus-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }))).toMatchObject({
      status: 402,
      code: 'insufficient_balance',
    });

    const cut = await drain(await client.messages.create({ model: ECHO_MESSAGES, max_tokens: 64, messages: [{ role: 'user', content: 'x [sim:words=10 cut-after=4]' }], stream: true }));
    expect(cut.text).toBe('baikal is the deepest');
    expect(cut.error).toBeTruthy();
    const translated = await drain(await client.messages.create({ model: TRANSLATED_FAMILY_B, max_tokens: 64, messages: [{ role: 'user', content: 'x [sim:words=10 cut-after=2]' }], stream: true }));
    expect(translated.text).toBe('baikal is');
    expect(translated.error).toBeTruthy();
  }, 60_000);

  it('usage records, /v1/me, REST, GraphQL (records and errors) and tRPC: every record of those failures, and no canary', async () => {
    // Every request of the accounts above has been written (the usage batch writer runs behind the responses).
    for (const account of [familyA, familyB]) {
      const [{ n }] = (await stack.db.query<{ n: number }>('select count(*)::int as n from usage_events where user_id = $1', [account.userId])) as [{ n: number }];
      await settled(stack, account.userId, n);
    }
    const rid = requestId('canary-usage');
    const failed = await call('POST', '/v1/chat/completions', { token: familyA.key, headers: { 'x-request-id': rid }, body: chatBody(ECHO_CHAT, 'x [sim:status=500]') });
    expect(failed.status).toBe(502);
    const event = await usageEventOf(stack, rid);
    expect(event).toMatchObject({ status: 'error', error_code: 'upstream_error' });
    // The operator column names the route; the user never sees it (below).
    expect(event.upstream_id).toMatch(/^canary-echo-/);

    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString();
    const userRoutes = ['/usage?limit=200', '/usage/summary', `/usage/timeseries?bucket=hour&from=${day(-1)}&to=${day(1)}`, `/usage/${rid}`, '/auth/me', '/auth/summary', '/auth/transactions', '/keys', '/catalog/models', '/catalog/models/me', '/catalog/status', '/leaderboard/daily'];
    for (const account of [familyA, familyB]) {
      for (const route of userRoutes) {
        const response = await call('GET', route, { token: account.token });
        expect({ route, status: response.status }).toEqual({ route, status: route === `/usage/${rid}` && account === familyB ? 404 : 200 });
      }
      const me = await call('GET', '/v1/me', { token: account.key });
      expect(me.status).toBe(200);
      expect((await call('GET', '/v1/models', { token: account.key })).status).toBe(200);
    }
    const items = (await call('GET', '/usage?limit=200', { token: familyA.token })).body.items as any[];
    expect(items.some((e) => e.error_code === 'upstream_error')).toBe(true);
    expect(items.some((e) => e.error_code === 'stream_interrupted')).toBe(true);
    expect(items.every((e) => !('upstream_id' in e))).toBe(true);
    for (const route of ['/status', '/health', '/ready', '/live']) await call('GET', route);

    const usageFields = 'id requestId model status errorCode endpoint providerFamily routeGroup routeGroupLabel clientSurface amountUsd promptTokens completionTokens apiKey { id label }';
    const list = await graphqlQuery(`{ usage(limit: 200) { ${usageFields} } }`, familyA.token);
    expect(list.body.data.usage.some((e: any) => e.errorCode === 'upstream_error')).toBe(true);
    expect((await graphqlQuery(`query($id: ID!) { usageEvent(requestId: $id) { ${usageFields} } }`, familyA.token, { id: rid })).body.data.usageEvent.errorCode).toBe('upstream_error');
    expect((await graphqlQuery('{ usageSummary { totals { requests spendUsd } byModel { key label } byGroup { key label } } }', familyA.token)).status).toBe(200);

    // GraphQL errors of every kind: syntax, unknown field, unauthenticated, not found, forbidden, invalid input.
    const errors = [
      await graphqlQuery('{ usage(limit: ', familyA.token),
      await graphqlQuery('{ usage { upstreamId } }', familyA.token),
      await graphqlQuery(`{ usage { ${usageFields} } }`),
      await graphqlQuery(`query($id: ID!) { usageEvent(requestId: $id) { id } }`, familyB.token, { id: rid }),
      await graphqlQuery('mutation { adjustBalance(input: {userId: "00000000-0000-0000-0000-000000000000", amountUsd: "1", reason: "x", idempotencyKey: "y"}) { applied } }', familyA.token),
      await graphqlQuery('{ usage(limit: 100000) { id } }', familyA.token),
      await graphqlQuery('{ usage(from: "not a date") { id } }', familyA.token),
    ];
    for (const response of errors) expect(response.body.errors?.length, response.text).toBeGreaterThan(0);

    const trpc = trpcClient(gw.url, familyA.token);
    const trpcRecords = [await trpc.usage.list.query({ limit: 200 }), await trpc.usage.event.query({ requestId: rid }), await trpc.usage.summary.query({})];
    stack.received.push(JSON.stringify(trpcRecords));
    responses += 1;
    const trpcError = await trpcClient(gw.url, familyB.token).usage.event.query({ requestId: rid }).then(
      () => null,
      (error: Error) => JSON.stringify({ message: error.message, data: (error as any).data, shape: (error as any).shape }),
    );
    expect(trpcError).toContain('NOT_FOUND');
    stack.received.push(trpcError!);

    // Money stays exact through all of it.
    for (const account of [familyA, familyB]) {
      const balance = await ledgerBalance(stack, account.userId);
      expect(balance.ledger).toBe(balance.balance);
      expect(balance.paidMatches && balance.bonusMatches).toBe(true);
    }
  }, 60_000);

  it('zero canaries in every body, header, SSE frame, GraphQL error and usage record; no credential in the gateway log', async () => {
    // Streams recorded by the tee finish on their own tick.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const bodies = stack.received.join('\n');
    const headers = headerBlocks.join('\n');
    expect(stack.received.length).toBeGreaterThan(100);
    expect(bodies).toContain('upstream_error');
    expect(bodies).toContain('stream_interrupted');
    expect(headers).toContain('x-request-id');
    const hits = allCanaries().flatMap((canary) => [...(bodies.includes(canary) ? [`body: ${canary}`] : []), ...(headers.includes(canary) ? [`header: ${canary}`] : [])]);
    expect(hits).toEqual([]);

    // Usage records as stored (every column a user can read, i.e. all but the operator's upstream, credential and cost) and the ledger.
    const rows = JSON.stringify(await stack.db.query(`select to_jsonb(e) - 'upstream_id' - 'upstream_credential_id' - 'upstream_cost_usd' as row from usage_events e union all select to_jsonb(t) from transactions t`));
    expect(allCanaries().filter((canary) => rows.includes(canary))).toEqual([]);

    // The gateway's own log: credentials never (upstream ones, nor the clients' keys and session tokens); it did log the failures.
    const log = [...gw.lines, ...stack.gateway.lines].join('\n');
    expect(log).toContain('upstream call failed');
    // The echo upstream's error texts (which carry its credential) did reach the log, scrubbed.
    expect(log).toContain('[redacted] at https://canary.invalid/v1');
    const secrets = [...credentialCanaries(), familyA.key, familyB.key, familyA.token, familyB.token, admin.token];
    expect(secrets.filter((secret) => log.includes(secret))).toEqual([]);
    // The log never says 500 on its own account: every failure above was an answer of ours.
    expect(gw.lines.filter((line) => line.includes('unhandled error'))).toEqual([]);

    const bytes = Buffer.byteLength(bodies) + Buffer.byteLength(headers) + Buffer.byteLength(rows);
    console.log(
      `canaries: ${responses} responses (${stack.received.length} bodies incl. streams, ${headerBlocks.length} header blocks), ${bytes} bytes and ${gw.lines.length + stack.gateway.lines.length} log lines searched for ${allCanaries().length} canaries: 0 hits`,
    );
  });
});

