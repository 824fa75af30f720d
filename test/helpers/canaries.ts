import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll } from 'vitest';
import defaultCatalog from '../../src/catalog/default-catalog.json' with { type: 'json' };
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { http, type JsonResponse } from './clients.js';
import { ANTHROPIC_SERVED, apiAccount, processAdmin, recordingFetch, startInferenceStack, TRANSLATED_FAMILY_B, type ApiAccount, type InferenceStack } from './inference.js';
import type { ServerProcess } from './process.js';

/**
 * The canary run of test/security/canaries.test.ts (issue 11, "Canary secrets"): the stack's gateway and a second
 * process of it under test, with upstreams that plant more canaries, and the recording clients its tests call through.
 */

const CHAT_MODELS = defaultCatalog.models.filter((m) => m.endpoints.includes('/v1/chat/completions')).map((m) => m.id);
const IMAGE_MODELS = defaultCatalog.models.filter((m) => m.endpoints.includes('/v1/images/generations')).map((m) => m.id);
/** Served only by the echoing `sk-CANARY` simulator. */
export const ECHO_CHAT = 'gen-5.6-sol';
export const ECHO_MESSAGES = 'lm-fable-5';
export const ECHO_IMAGE = 'img-2';
/** Served only by `canary.invalid` (a connection failure every time). */
export const DEAD_CHAT = 'zeta-5.2';
export const DEAD_MESSAGES = 'lm-fable-5-cache';
/** `canary.invalid` first, then the echo simulator: a failover the client never sees. */
export const FAILOVER_CHAT = 'eta-k3';

export interface CanaryRun {
  stack: InferenceStack;
  gw: ServerProcess;
  /** The stack, seen through the gateway under test (the helpers only read `url`, `db` and `received`). */
  via: InferenceStack;
  echo: Simulator;
  dir: string;
  skCanary: string;
  extraCanaries: string[];
  admin: { token: string; userId: string };
  familyA: ApiAccount;
  familyB: ApiAccount;
  /** Every response header block the clients received (bodies go to `stack.received`, through the shared recordingFetch). */
  headerBlocks: string[];
  responses: number;
}

/** Starts the run before the file's tests (the handle is filled in then) and stops it after them. */
export function useCanaryRun(): CanaryRun {
  const run = { headerBlocks: [] as string[], responses: 0 } as CanaryRun;
  beforeAll(async () => {
    const stack = (run.stack = await startInferenceStack());
    const tag = randomBytes(6).toString('hex');
    const skCanary = (run.skCanary = `sk-CANARY-${randomBytes(18).toString('hex')}`);
    // The upstream echoes its own credential, a private host and an account id in every error text.
    const echoDetail = `(invalid request for key ${skCanary} at https://canary.invalid/v1, org acct_CANARY_${tag})`;
    const echo = (run.echo = await startSimulator({ apiKey: skCanary, errorDetail: echoDetail, name: 'echo' }));
    const [primaryId, backupId, anthropicId] = stack.canaries.upstreamIds as [string, string, string];
    const echoId = `canary-echo-${tag}`;
    const echoMessagesId = `canary-echo-messages-${tag}`;
    const deadId = `canary-dead-${tag}`;
    const deadMessagesId = `canary-dead-messages-${tag}`;
    run.extraCanaries = [skCanary, 'canary.invalid', `acct_CANARY_${tag}`, echoId, echoMessagesId, deadId, deadMessagesId, new URL(echo.url).host, tag];

    const prefix = stack.canaries.upstreamModelPrefix;
    const mapped = (models: string[]) => Object.fromEntries(models.map((m) => [m, `${prefix}${m}`]));
    const timeouts = { connectMs: 1_000, firstByteMs: 1_500, idleMs: 3_000 };
    const route = (models: string[], weight = 1) => [{ group: 'cheap', models, modelMap: mapped(models), weight }];
    const viaPrimary = [...CHAT_MODELS, TRANSLATED_FAMILY_B, ...IMAGE_MODELS].filter((m) => ![ECHO_CHAT, ECHO_IMAGE, DEAD_CHAT, FAILOVER_CHAT].includes(m));
    const anthropicPrimary = ANTHROPIC_SERVED.filter((m) => m !== ECHO_MESSAGES && m !== DEAD_MESSAGES);
    const dir = (run.dir = await mkdtemp(path.join(tmpdir(), 'baikal-canaries-')));
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
    const gw = (run.gw = await stack.spawnPeer({ BAIKAL_CONFIG: configFile, CANARY_SK_KEY: skCanary, STATUS_PROBE_SECONDS: '1' }, { applyUpstreams: true }));
    const via = (run.via = { ...stack, url: gw.url });
    const admin = (run.admin = await processAdmin(via));
    run.familyA = await apiAccount(via, admin, '20');
    run.familyB = await apiAccount(via, admin, '20', { provider_family: 'family_b' });
  }, 120_000);
  afterAll(async () => {
    await run.stack?.close();
    await run.echo?.close();
    if (run.dir) await rm(run.dir, { recursive: true, force: true });
  });
  return run;
}

function headerText(status: number, headers: Headers): string {
  return [`HTTP ${status}`, ...[...headers].map(([name, value]) => `${name}: ${value}`)].join('\n');
}

/** A fetch for the SDK clients that records each response's headers, and (through recordingFetch) its body byte for byte. */
export function capturingFetch(run: CanaryRun): typeof fetch {
  const bodies = recordingFetch(run.stack.received);
  return async (input, init) => {
    const response = await bodies(input, init);
    run.responses += 1;
    run.headerBlocks.push(headerText(response.status, response.headers));
    return response;
  };
}

/** The shared `http` helper against the gateway under test, recording what came back. */
export async function call(run: CanaryRun, method: string, urlPath: string, options: Parameters<typeof http>[3] = {}): Promise<JsonResponse> {
  const response = await http(run.gw.url, method, urlPath, options);
  run.responses += 1;
  run.stack.received.push(response.text);
  run.headerBlocks.push(headerText(response.status, response.headers));
  return response;
}

/** Raw fetch of a stream: every byte as it came, recorded. */
export async function rawStream(run: CanaryRun, urlPath: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; text: string }> {
  const response = await capturingFetch(run)(`${run.gw.url}${urlPath}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: response.status, text: await response.text() };
}

export function openai(run: CanaryRun, key: string): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: `${run.gw.url}/v1`, maxRetries: 0, timeout: 30_000, fetch: capturingFetch(run) });
}

export function anthropic(run: CanaryRun, key: string): Anthropic {
  // SPEC.md section 5: `x-api-key` and `anthropic-version: 2023-06-01` (as the shared anthropicClient does).
  return new Anthropic({ apiKey: null, baseURL: run.gw.url, defaultHeaders: { 'x-api-key': key, 'anthropic-version': '2023-06-01' }, maxRetries: 0, timeout: 30_000, fetch: capturingFetch(run) });
}

/** The HTTP status and our error code of a failed SDK call (either SDK). */
export async function sdkFailure(work: Promise<unknown>): Promise<{ status: number | undefined; code: string | undefined; message: string }> {
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
export async function drain(stream: AsyncIterable<any>): Promise<{ text: string; error: string | null }> {
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

export const chatBody = (model: string, content: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content }], ...extra });
export const messagesBody = (model: string, content: string, extra: Record<string, unknown> = {}) => ({ model, max_tokens: 64, messages: [{ role: 'user', content }], ...extra });
export const messagesHeaders = (key: string) => ({ 'x-api-key': key, 'anthropic-version': '2023-06-01' });

/** The credentials of this run: none may reach a client, a usage record or a log line. */
export function credentialCanaries(run: CanaryRun): string[] {
  return [run.stack.canaries.credential, run.stack.canaries.backupCredential, run.skCanary];
}

export function allCanaries(run: CanaryRun): string[] {
  return [...run.stack.canaries.all(), ...run.extraCanaries];
}

/** Upstream refusals the simulator plays on request, and what each becomes for our client. */
export const UPSTREAM_REFUSALS = [
  ['status=400', 400, 'request_rejected'],
  ['status=401', 502, 'upstream_error'],
  ['status=429', 429, 'upstream_rate_limited'],
  ['status=500', 502, 'upstream_error'],
  ['status=529', 502, 'upstream_error'],
] as const;

export interface ErrorCase {
  name: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
  rawBody?: string;
  status: number;
  code: string;
}

/**
 * Every /v1 error path a raw request can take, with the status and code of ours it must get: `a` and `b` are keys of
 * family a and b, `broke` a key with no balance, `capped` one with a spend cap of 0, `session` a session token.
 */
export function v1ErrorCases(keys: { a: string; b: string; broke: string; capped: string; session: string }): ErrorCase[] {
  const { a, b } = keys;
  const bearer = { authorization: `Bearer ${a}` };
  return [
    { name: 'no key', path: '/v1/chat/completions', body: chatBody('gen-5.6-luna', 'hi'), status: 401, code: 'missing_api_key' },
    { name: 'key in x-api-key', path: '/v1/chat/completions', headers: { 'x-api-key': a }, body: chatBody('gen-5.6-luna', 'hi'), status: 401, code: 'wrong_auth_header' },
    { name: 'unknown key', path: '/v1/chat/completions', headers: { authorization: 'Bearer baikal-sk-unknown' }, body: chatBody('gen-5.6-luna', 'hi'), status: 401, code: 'invalid_api_key' },
    { name: 'session token as key', path: '/v1/responses', headers: { authorization: `Bearer ${keys.session}` }, body: { model: 'gen-5.6-luna', input: 'hi' }, status: 401, code: 'invalid_api_key' },
    { name: 'messages: Bearer', path: '/v1/messages', headers: { authorization: `Bearer ${b}`, 'anthropic-version': '2023-06-01' }, body: messagesBody('lm-opus-5', 'hi'), status: 401, code: 'wrong_auth_header' },
    { name: 'messages: no version', path: '/v1/messages', headers: { 'x-api-key': b }, body: messagesBody('lm-opus-5', 'hi'), status: 400, code: 'invalid_version_header' },
    { name: 'image model on chat', path: '/v1/chat/completions', headers: bearer, body: chatBody('img-1.5', 'a lake'), status: 400, code: 'endpoint_not_supported_for_model' },
    { name: 'charset', path: '/v1/chat/completions', headers: { ...bearer, 'content-type': 'application/json; charset=latin1' }, rawBody: '{}', status: 400, code: 'unsupported_charset' },
    { name: 'encoding', path: '/v1/chat/completions', headers: { ...bearer, 'content-encoding': 'zstd-canary' }, rawBody: '{}', status: 400, code: 'unsupported_content_encoding' },
    { name: 'broke', path: '/v1/chat/completions', headers: { authorization: `Bearer ${keys.broke}` }, body: chatBody('gen-5.6-luna', 'hi'), status: 402, code: 'insufficient_balance' },
    { name: 'spend cap', path: '/v1/chat/completions', headers: { authorization: `Bearer ${keys.capped}` }, body: chatBody('gen-5.6-luna', 'hi'), status: 402, code: 'spend_cap_reached' },
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
}
