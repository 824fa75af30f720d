import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import defaultCatalog from '../../src/catalog/default-catalog.json' with { type: 'json' };
import { AdjustBalanceDocument } from '../graphql/generated.js';
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { graphql, http, registerRest } from './clients.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { ROOT, spawnGateway, type ServerProcess } from './process.js';

/**
 * The built gateway process as the real clients of issue 21 meet it (test/e2e/clients): either in demo
 * mode (no upstream configured, the built-in simulator answers, the demo account's per-family keys), or
 * against a recording upstream (a simulator this test process started, so a test sees what reached it).
 */
export interface ClientsGateway {
  /** The gateway's origin, without `/v1`. */
  url: string;
  /** One key per family: family_a (chat, responses, images), family_b (messages, bridge), family_c, family_d (videos). */
  keys: Record<'family_a' | 'family_b' | 'family_c' | 'family_d', string>;
  /** A cabinet session of the account that owns the keys (the demo account in demo mode). */
  session: string;
  gateway: ServerProcess;
  db: TestDatabase;
  /** The recording upstream, when started with `recording: true`. */
  upstream?: Simulator;
  /** Every response the gateway gave to `fetch` below: method, path, status and its `x-request-id`. */
  calls: GatewayCall[];
  /** A `fetch` for clients that records each gateway answer's request id in `calls`. */
  fetch: typeof fetch;
  close(): Promise<void>;
}

export interface GatewayCall {
  method: string;
  path: string;
  status: number;
  requestId: string | null;
  /** The request body when it was text (JSON), for assertions on what the client sent. */
  body: string | null;
}

const FAMILIES = ['family_a', 'family_b', 'family_c', 'family_d'] as const;
const modelsWith = (...endpoints: string[]) => defaultCatalog.models.filter((m) => m.endpoints.some((e) => endpoints.includes(e))).map((m) => m.id);

function trackingFetch(calls: GatewayCall[]): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const body = typeof init?.body === 'string' ? init.body : null;
    const response = await fetch(request);
    calls.push({ method: request.method, path: new URL(request.url).pathname, status: response.status, requestId: response.headers.get('x-request-id'), body });
    return response;
  };
}

/** The built gateway in demo mode, with the demo account's keys (read from DATA_DIR as a user would) and a cabinet session. */
export async function startDemoGateway(extraEnv: Record<string, string> = {}): Promise<ClientsGateway> {
  const db = await createTestDatabase();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'baikal-clients-demo-'));
  let gateway: ServerProcess;
  try {
    gateway = await spawnGateway({ DATABASE_URL: db.url, DATA_DIR: dataDir, LOG_LEVEL: 'info', ...extraEnv });
  } catch (error) {
    await Promise.all([db.drop(), rm(dataDir, { recursive: true, force: true })]);
    throw error;
  }
  const close = async () => {
    if (gateway.child.exitCode === null && gateway.child.signalCode === null) gateway.child.kill('SIGTERM');
    await gateway.exited;
    await Promise.all([db.drop(), rm(dataDir, { recursive: true, force: true })]);
  };
  try {
    const saved = JSON.parse(await readFile(path.join(dataDir, 'demo-credentials.json'), 'utf8')) as { key: string; keys?: Record<string, string>; password: string };
    const missing = FAMILIES.filter((f) => !saved.keys?.[f]);
    if (missing.length) throw new Error(`demo-credentials.json has no key for ${missing.join(', ')}: ${JSON.stringify(Object.keys(saved.keys ?? {}))}`);
    const login = await http(gateway.url, 'POST', '/auth/login', { body: { login: 'demo', password: saved.password } });
    if (login.status !== 200) throw new Error(`demo sign-in failed: ${login.status} ${login.text}`);
    const calls: GatewayCall[] = [];
    return { url: gateway.url, keys: saved.keys as ClientsGateway['keys'], session: login.headers.get('x-session-token')!, gateway, db, calls, fetch: trackingFetch(calls), close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The built gateway with one recording simulator as its every upstream (OpenAI-compatible for chat,
 * responses and images; Anthropic for family b's Messages and bridge models; video jobs for videos),
 * configured through BAIKAL_CONFIG, and a funded account holding one key per family.
 */
export async function startRecordingGateway(extraEnv: Record<string, string> = {}): Promise<ClientsGateway & { upstream: Simulator }> {
  const credential = `sk-recording-${randomBytes(8).toString('hex')}`;
  const upstream = await startSimulator({ apiKey: credential, name: 'recording' });
  const dir = await mkdtemp(path.join(tmpdir(), 'baikal-clients-rec-'));
  const configFile = path.join(dir, 'baikal.json');
  const served = (id: string, kind: string, models: string[]) => ({
    id,
    kind,
    baseUrl: `${upstream.url}/v1`,
    credentialEnv: 'RECORDING_UPSTREAM_KEY',
    timeouts: { connectMs: 2_000, firstByteMs: 30_000, idleMs: 30_000 },
    routes: [{ group: 'cheap', models, modelMap: {}, weight: 1 }],
    fallback: [],
  });
  await writeFile(
    configFile,
    JSON.stringify({
      upstreams: [
        served('recording-openai', 'openai-compatible', modelsWith('/v1/chat/completions', '/v1/responses', '/v1/images/generations')),
        served('recording-anthropic', 'anthropic', modelsWith('/v1/messages', '/v1/bridge/chat/completions', '/v1/bridge/responses')),
        served('recording-video', 'video-jobs', modelsWith('/v1/videos')),
      ],
    }),
  );
  const db = await createTestDatabase();
  let gateway: ServerProcess;
  try {
    gateway = await spawnGateway({ DATABASE_URL: db.url, DATA_DIR: dir, LOG_LEVEL: 'info', NODE_ENV: 'test', BAIKAL_CONFIG: configFile, RECORDING_UPSTREAM_KEY: credential, ...extraEnv });
  } catch (error) {
    await Promise.all([db.drop(), upstream.close(), rm(dir, { recursive: true, force: true })]);
    throw error;
  }
  const close = async () => {
    if (gateway.child.exitCode === null && gateway.child.signalCode === null) gateway.child.kill('SIGTERM');
    await gateway.exited;
    await Promise.all([db.drop(), upstream.close(), rm(dir, { recursive: true, force: true })]);
  };
  try {
    const admin = await registerRest(gateway.url);
    await db.query('update users set is_admin = true where id = $1', [admin.account.user_id]);
    const user = await registerRest(gateway.url);
    const funded = await graphql(gateway.url, AdjustBalanceDocument, { input: { userId: user.account.user_id, amountUsd: '20', reason: 'clients e2e', idempotencyKey: `clients-${randomBytes(6).toString('hex')}` } }, admin.token);
    if (funded.errors) throw new Error(`funding failed: ${JSON.stringify(funded.errors)}`);
    const keys = {} as ClientsGateway['keys'];
    for (const family of FAMILIES) {
      const created = await http(gateway.url, 'POST', '/keys', { token: user.token, body: { provider_family: family, label: family } });
      if (created.status !== 201 && created.status !== 200) throw new Error(`key creation failed: ${created.status} ${created.text}`);
      keys[family] = created.body.key;
    }
    const calls: GatewayCall[] = [];
    return { url: gateway.url, keys, session: user.token, gateway, db, upstream, calls, fetch: trackingFetch(calls), close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** A usage event as GET /usage returns it (SPEC.md "Usage event"). */
export type UsageEvent = Record<string, any> & { request_id: string; endpoint: string | null; model: string; status: string; amount_usd: string };

/**
 * The cabinet's record of one request (GET /usage/{request_id} with the account's session), waited for
 * (usage is written in batches). Fails unless it succeeded and cost money.
 */
export async function billedInCabinet(gw: ClientsGateway, requestId: string, timeoutMs = 10_000): Promise<UsageEvent> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const found = await http(gw.url, 'GET', `/usage/${encodeURIComponent(requestId)}`, { token: gw.session });
    if (found.status === 200) {
      const event = found.body as UsageEvent;
      if (event.status !== 'success' || !(Number(event.amount_usd) > 0)) {
        throw new Error(`request ${requestId} is in the cabinet but not billed as a success: ${found.text}`);
      }
      return event;
    }
    if (found.status !== 404) throw new Error(`GET /usage/${requestId}: ${found.status} ${found.text}`);
    if (Date.now() > until) throw new Error(`request ${requestId} never appeared in the cabinet (GET /usage/{id} stayed 404)`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every successful inference call recorded in `gw.calls` since index `from` (model lists and polls excluded): billed and found in the cabinet. */
export async function everyCallBilled(gw: ClientsGateway, from = 0, where: (call: GatewayCall) => boolean = () => true): Promise<UsageEvent[]> {
  const billable = gw.calls.slice(from).filter((c) => c.method === 'POST' && c.status < 300 && c.requestId && /^\/v1\/(bridge\/)?(chat\/completions|responses|messages|images\/generations|videos)$/.test(c.path) && where(c));
  if (!billable.length) throw new Error(`no billable call recorded since #${from}: ${JSON.stringify(gw.calls.slice(from))}`);
  return Promise.all(billable.map((c) => billedInCabinet(gw, c.requestId!)));
}

/**
 * The cabinet's usage events created since `since` (GET /usage?from=…), for clients the test cannot
 * hand a fetch (the coding agents). Waits until at least `atLeast` of them match.
 */
export async function cabinetUsageSince(gw: ClientsGateway, since: Date, atLeast: number, match: (e: UsageEvent) => boolean = () => true, timeoutMs = 10_000): Promise<UsageEvent[]> {
  const until = Date.now() + timeoutMs;
  // Rounded down to the second: the cabinet's range is inclusive and clocks agree (one machine).
  const from = new Date(Math.floor(since.getTime() / 1000) * 1000 - 1000).toISOString();
  for (;;) {
    const list = await http(gw.url, 'GET', `/usage?from=${encodeURIComponent(from)}&limit=200`, { token: gw.session });
    if (list.status !== 200) throw new Error(`GET /usage: ${list.status} ${list.text}`);
    const events = (list.body.items as UsageEvent[]).filter(match);
    if (events.length >= atLeast) return events;
    if (Date.now() > until) throw new Error(`only ${events.length} of ${atLeast} usage events since ${from}: ${JSON.stringify(list.body.items.map((e: UsageEvent) => [e.endpoint, e.model, e.status]))}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** What a bounded CLI run left behind: its exit code (null when killed), both streams, and whether the bound killed it. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** For failure messages: the command, exit and both streams' tails. */
  describe(): string;
}

/**
 * Runs a CLI from node_modules/.bin with a clean environment (only PATH with the project's Node 24 first,
 * plus `env`), stdin closed, killed (SIGKILL to its process group) after `timeoutMs`.
 */
export function runCli(bin: string, args: string[], env: Record<string, string>, timeoutMs: number, cwd = ROOT): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(path.join(ROOT, 'node_modules/.bin', bin), args, {
      cwd,
      env: { PATH: `${path.join(ROOT, 'node_modules/.bin')}:${process.env.PATH}`, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, timeoutMs);
    const done = (code: number | null) => {
      clearTimeout(timer);
      const describe = () => `${bin} ${args.join(' ')}\nexit ${code}${timedOut ? ` (killed after ${timeoutMs} ms)` : ''}\n--- stdout ---\n${stdout.slice(-4000)}\n--- stderr ---\n${stderr.slice(-4000)}`;
      resolve({ code, stdout, stderr, timedOut, describe });
    };
    child.once('error', () => done(null));
    child.once('exit', (code) => done(code));
  });
}
