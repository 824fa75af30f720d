import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import defaultCatalog from '../../src/catalog/default-catalog.json' with { type: 'json' };
import { startSimulator, type RecordedRequest, type Simulator } from '../../src/simulator/openai-simulator.js';
import { AdjustBalanceDocument, SetAccountLimitsDocument, SetKeyLimitsDocument } from '../graphql/generated.js';
import { graphql, http, registerRest } from './clients.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { runNode, spawnGateway, type ServerProcess } from './process.js';

/**
 * Secrets and internals planted in the upstream configuration and the upstream's own error texts.
 * None of them may ever appear in anything a client receives.
 */
export interface Canaries {
  credential: string;
  backupCredential: string;
  errorDetail: string;
  upstreamIds: string[];
  upstreamModelPrefix: string;
  hosts: string[];
  all(): string[];
}

export interface InferenceStack {
  url: string;
  db: TestDatabase;
  gateway: ServerProcess;
  primary: Simulator;
  backup: Simulator;
  canaries: Canaries;
  /** Every body the tests' clients received (JSON and each SSE byte), for the leak search. */
  received: string[];
  /**
   * Another gateway process on the same database, upstreams and settings (the scale-out tests give both a REDIS_URL).
   * With `applyUpstreams`, a peer given another BAIKAL_CONFIG first applies its upstreams to the stored ones, as an
   * operator does (`npm run admin -- apply-upstreams --prune`): the file seeds an empty database only.
   */
  spawnPeer(extraEnv?: Record<string, string>, options?: { applyUpstreams?: boolean }): Promise<ServerProcess>;
  close(): Promise<void>;
}

const CHAT_MODELS = defaultCatalog.models.filter((m) => m.endpoints.includes('/v1/chat/completions')).map((m) => m.id);
const IMAGE_MODELS = defaultCatalog.models.filter((m) => m.endpoints.includes('/v1/images/generations')).map((m) => m.id);
/** Family-b models served by the Anthropic-kind upstream; `lm-sonnet-5` is served by the OpenAI-compatible one (a translated pair). */
export const ANTHROPIC_SERVED = ['lm-opus-5', 'lm-fable-5', 'lm-fable-5-cache', 'bridge-opus-5'];
export const TRANSLATED_FAMILY_B = 'lm-sonnet-5';

type StackOptions = { nativeResponses?: string[]; strictFields?: boolean; operator?: Record<string, unknown>; upstream?: Record<string, unknown> };

/** The stack's upstream ids, each with the run's tag (a canary too). */
function upstreamIds(tag: string) {
  return { primaryId: `canary-primary-${tag}`, backupId: `canary-backup-${tag}`, anthropicId: `canary-anthropic-${tag}`, nativeId: `canary-native-${tag}` };
}

/**
 * The operator file's content. The backup's weight makes the primary the first choice in practice; it is the
 * primary's fallback. The primary simulator also speaks the Messages API, as the Anthropic-kind upstream of family b.
 */
function operatorConfig(primary: Simulator, backup: Simulator, ids: ReturnType<typeof upstreamIds>, upstreamModelPrefix: string, options: StackOptions): object {
  // Models moved to an upstream that serves the Responses API natively (on the primary simulator).
  const native = options.nativeResponses ?? [];
  const openAiModels = [...CHAT_MODELS, TRANSLATED_FAMILY_B, ...IMAGE_MODELS].filter((m) => !native.includes(m));
  const modelMap = Object.fromEntries([...openAiModels, ...native, ...ANTHROPIC_SERVED].map((m) => [m, `${upstreamModelPrefix}${m}`]));
  const upstream = (id: string, sim: Simulator, credentialEnv: string, weight: number, fallback: string[], kind = 'openai-compatible', models = openAiModels) => ({
    id,
    kind,
    baseUrl: `${sim.url}/v1`,
    credentialEnv,
    timeouts: { connectMs: 1_000, firstByteMs: 1_500, idleMs: 3_000 },
    routes: [{ group: 'cheap', models, modelMap, weight }],
    fallback,
    ...options.upstream,
  });
  return {
    upstreams: [
      upstream(ids.primaryId, primary, 'CANARY_PRIMARY_KEY', 1, [ids.backupId]),
      upstream(ids.backupId, backup, 'CANARY_BACKUP_KEY', 1e-9, []),
      upstream(ids.anthropicId, primary, 'CANARY_PRIMARY_KEY', 1, [], 'anthropic', ANTHROPIC_SERVED),
      ...(native.length ? [{ ...upstream(ids.nativeId, primary, 'CANARY_PRIMARY_KEY', 1, [], 'openai-compatible', native), nativeResponses: true }] : []),
    ],
    ...options.operator,
  };
}

/**
 * The built gateway as a separate process (as `npm start` runs it), with its own database and two
 * upstream simulators: `primary` (chosen first) and `backup` (its fallback), each with canary
 * credentials, model names and error texts.
 */
export async function startInferenceStack(extraEnv: Record<string, string> = {}, options: StackOptions = {}): Promise<InferenceStack> {
  const tag = randomBytes(6).toString('hex');
  const errorDetail = `CANARY-upstream-internal.example acct_canary_${tag}`;
  const canaryPrimary = `sk-canary-primary-${tag}`;
  const canaryBackup = `sk-canary-backup-${tag}`;
  const primary = await startSimulator({ apiKey: canaryPrimary, errorDetail, name: 'primary', strictFields: options.strictFields });
  const backup = await startSimulator({ apiKey: canaryBackup, errorDetail, name: 'backup' });
  const upstreamModelPrefix = `canary-model-${tag}-`;
  const ids = upstreamIds(tag);
  const dir = await mkdtemp(path.join(tmpdir(), 'baikal-inference-'));
  const configFile = path.join(dir, 'baikal.json');
  await writeFile(configFile, JSON.stringify(operatorConfig(primary, backup, ids, upstreamModelPrefix, options)));

  const db = await createTestDatabase();
  const env = {
    DATABASE_URL: db.url,
    NODE_ENV: 'test',
    LOG_LEVEL: 'info', // the ready line is at info
    BAIKAL_CONFIG: configFile,
    CANARY_PRIMARY_KEY: canaryPrimary,
    CANARY_BACKUP_KEY: canaryBackup,
    DATA_DIR: dir,
    ...extraEnv,
  };
  const peers: ServerProcess[] = [];
  let gateway: ServerProcess;
  try {
    gateway = await spawnGateway(env);
  } catch (error) {
    await Promise.all([db.drop(), primary.close(), backup.close(), rm(dir, { recursive: true, force: true })]);
    throw error;
  }
  const { primaryId, backupId, anthropicId, nativeId } = ids;
  const canaries: Canaries = {
    credential: canaryPrimary,
    backupCredential: canaryBackup,
    errorDetail,
    upstreamIds: [primaryId, backupId, anthropicId, nativeId],
    upstreamModelPrefix,
    hosts: [new URL(primary.url).host, new URL(backup.url).host],
    all: () => [canaryPrimary, canaryBackup, errorDetail, 'CANARY', tag, primaryId, backupId, anthropicId, nativeId, upstreamModelPrefix, new URL(primary.url).host, new URL(backup.url).host],
  };
  return {
    url: gateway.url,
    db,
    gateway,
    primary,
    backup,
    canaries,
    received: [],
    spawnPeer: async (peerEnv = {}, peerOptions = {}) => {
      if (peerOptions.applyUpstreams) {
        const applied = await runNode(['dist/src/cli/admin.js', 'apply-upstreams', '--prune'], { ...env, ...peerEnv });
        if (applied.code !== 0) throw new Error(`apply-upstreams failed (${applied.code}): ${applied.stderr}${applied.stdout}`);
      }
      const peer = await spawnGateway({ ...env, ...peerEnv });
      peers.push(peer);
      return peer;
    },
    close: async () => {
      for (const process of [gateway, ...peers]) if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill('SIGTERM');
      await Promise.all([gateway, ...peers].map((process) => process.exited));
      await Promise.all([db.drop(), primary.close(), backup.close(), rm(dir, { recursive: true, force: true })]);
    },
  };
}

/** A `fetch` that records every response body (streams included, byte for byte) while passing it on. */
export function recordingFetch(received: string[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.body) return response;
    const [forClient, forRecord] = response.body.tee();
    void new Response(forRecord).text().then((text) => received.push(text), () => undefined);
    return new Response(forClient, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** The official OpenAI client pointed at the gateway (or its bridge), with every response recorded. */
export function openaiClient(stack: InferenceStack, apiKey: string, options: { maxRetries?: number; base?: '/v1' | '/v1/bridge' } = {}): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${stack.url}${options.base ?? '/v1'}`, maxRetries: options.maxRetries ?? 0, fetch: recordingFetch(stack.received), timeout: 30_000 });
}

/**
 * The official Anthropic client pointed at the gateway. SPEC.md section 5 asks for `x-api-key` and
 * `anthropic-version: 2023-06-01`; SDK 1.12 sends a Bearer header and a newer version by default, so
 * both are set explicitly (and no `apiKey`, so no Bearer header goes out).
 */
export function anthropicClient(stack: InferenceStack, apiKey: string): Anthropic {
  return new Anthropic({
    apiKey: null,
    baseURL: stack.url,
    defaultHeaders: { 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' },
    maxRetries: 0,
    fetch: recordingFetch(stack.received),
    timeout: 30_000,
  });
}

export interface ApiAccount {
  userId: string;
  token: string;
  key: string;
  keyId: string;
}

/** An account with one key of the given scope, funded by an admin adjustment (the ledger path a real operator uses). */
export async function apiAccount(stack: Pick<InferenceStack, 'url'>, admin: { token: string }, balanceUsd: string | null, scope: { provider_family?: string; route_group?: string } = {}): Promise<ApiAccount> {
  const registered = await registerRest(stack.url);
  const key = await createKey(stack, registered.token, scope);
  const userId = registered.account.user_id as string;
  if (balanceUsd) await fund(stack, admin, userId, balanceUsd);
  return { userId, token: registered.token, key: key.key, keyId: key.id };
}

export async function createKey(stack: Pick<InferenceStack, 'url'>, token: string, scope: { provider_family?: string; route_group?: string; label?: string } = {}) {
  const created = await http(stack.url, 'POST', '/keys', { token, body: scope });
  if (created.status !== 201 && created.status !== 200) throw new Error(`key creation failed: ${created.status} ${created.text}`);
  return created.body as { id: string; key: string };
}

export async function fund(stack: Pick<InferenceStack, 'url'>, admin: { token: string }, userId: string, amountUsd: string): Promise<void> {
  const result = await graphql(stack.url, AdjustBalanceDocument, { input: { userId, amountUsd, reason: 'test funding', idempotencyKey: `fund-${randomBytes(8).toString('hex')}` } }, admin.token);
  if (result.errors) throw new Error(`funding failed: ${JSON.stringify(result.errors)}`);
}

export async function setKeyLimits(stack: Pick<InferenceStack, 'url'>, admin: { token: string }, keyId: string, limits: { rpmLimit?: number | null; concurrencyLimit?: number | null; monthlySpendCap?: string | null }): Promise<void> {
  const result = await graphql(stack.url, SetKeyLimitsDocument, { input: { keyId, ...limits } }, admin.token);
  if (result.errors) throw new Error(`setKeyLimits failed: ${JSON.stringify(result.errors)}`);
}

/** Overrides an account's concurrency limit (null: back to ACCOUNT_CONCURRENCY_LIMIT). */
export async function setAccountLimits(stack: Pick<InferenceStack, 'url'>, admin: { token: string }, userId: string, limits: { concurrencyLimit: number | null }): Promise<void> {
  const result = await graphql(stack.url, SetAccountLimitsDocument, { input: { userId, ...limits } }, admin.token);
  if (result.errors) throw new Error(`setAccountLimits failed: ${JSON.stringify(result.errors)}`);
}

/** An admin session on the gateway process: registered, then promoted in the database as the admin CLI does. */
export async function processAdmin(stack: Pick<InferenceStack, 'url' | 'db'>): Promise<{ token: string; userId: string }> {
  const registered = await registerRest(stack.url);
  await stack.db.query('update users set is_admin = true where id = $1', [registered.account.user_id]);
  return { token: registered.token, userId: registered.account.user_id };
}

/** Waits until the usage event of a request (by its x-request-id) has been written by the batch writer. */
export async function usageEventOf(stack: Pick<InferenceStack, 'db'>, requestId: string, timeoutMs = 5_000): Promise<Record<string, any>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await stack.db.query<Record<string, any>>('select * from usage_events where request_id = $1', [requestId]);
    if (row) return row;
    if (Date.now() > until) throw new Error(`no usage event for ${requestId}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Waits until the gateway has written every usage record of an account (no request of it in flight). */
export async function settled(stack: InferenceStack, userId: string, expectedEvents: number, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const [{ n }] = (await stack.db.query<{ n: number }>('select count(*)::int as n from usage_events where user_id = $1', [userId])) as [{ n: number }];
    if (n >= expectedEvents) return;
    if (Date.now() > until) throw new Error(`only ${n} of ${expectedEvents} usage events written`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export function requestId(label: string): string {
  return `test-${label}-${randomBytes(6).toString('hex')}`;
}

/**
 * The one upstream call a gateway request made, found by its request id (the gateway sends it as
 * `x-client-request-id`). Never "the last request": other traffic reaches a shared simulator any time.
 */
export function upstreamCall(simulator: Simulator, rid: string): RecordedRequest {
  const calls = simulator.requestsFor(rid);
  if (calls.length !== 1) throw new Error(`expected one upstream call for ${rid}, found ${calls.length}`);
  return calls[0]!;
}

/** Request options that give a call a known request id (OpenAI and Anthropic SDKs alike). */
export function withId(rid: string): { headers: Record<string, string> } {
  return { headers: { 'x-request-id': rid } };
}
