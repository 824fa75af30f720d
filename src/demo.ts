import cluster from 'node:cluster';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { MikroORM, PostgreSqlConnection } from '@mikro-orm/postgresql';
import type { Catalog } from './catalog/catalog.js';
import type { Config } from './config.js';
import { DEFAULT_HEALTH, type Upstream } from './upstreams/model.js';
import type { Services } from './services.js';
import { StartupError } from './shared/errors.js';
import { randomSecret } from './shared/ids.js';
import type { Logger } from './shared/logging.js';

const DEMO_USERNAME = 'demo';
const DEMO_BALANCE_USD = '10';
/** The advisory lock under which one process at a time seeds the demo account ('demo' in ASCII). */
const DEMO_SEED_LOCK = 0x64656d6f;
/** How a cluster primary hands its simulator to the workers. */
const SIMULATOR_URL_ENV = 'BAIKAL_DEMO_SIMULATOR_URL';
const SIMULATOR_KEY_ENV = 'BAIKAL_DEMO_SIMULATOR_KEY';

/** Demo mode: outside production, with no upstream configured. */
export function demoModeApplies(config: Config): boolean {
  return !config.upstreams.length && config.nodeEnv === 'development';
}

/** The upstream simulator demo mode serves from. */
export interface DemoSimulator {
  url: string;
  key: string;
  /** The environment that makes a cluster worker use this simulator instead of starting its own. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/**
 * Starts the simulator, or (in a cluster worker) uses the primary's: one per port, since workers
 * listening on the same port would share connections across simulators that know neither each
 * other's key nor each other's video jobs. It keeps no request records (a long-running demo would grow).
 */
export async function startDemoSimulator(): Promise<DemoSimulator> {
  const inheritedUrl = process.env[SIMULATOR_URL_ENV];
  const inheritedKey = process.env[SIMULATOR_KEY_ENV];
  if (cluster.isWorker && inheritedUrl && inheritedKey) return { url: inheritedUrl, key: inheritedKey, env: {}, close: async () => undefined };
  const { startSimulator } = await import('./simulator/openai-simulator.js');
  const key = randomSecret(24);
  const simulator = await startSimulator({ apiKey: key, retainRecords: false });
  return { url: simulator.url, key, env: { [SIMULATOR_URL_ENV]: simulator.url, [SIMULATOR_KEY_ENV]: key }, close: () => simulator.close() };
}

export interface DemoMode {
  /** The family-a key (the first family), kept under this name for compatibility. */
  key: string;
  /** One key per catalog family that has models, by family id. */
  keys: Record<string, string>;
  username: string;
  password: string;
  close(): Promise<void>;
}

/** DATA_DIR/demo-credentials.json. Files written before per-family keys hold only `key` and `password`. */
interface DemoCredentials {
  key: string;
  keys?: Record<string, string>;
  password: string;
}

/**
 * The simulator as the upstream of every catalog model: chat and image models from its OpenAI-compatible
 * side, Messages and bridge models from its Anthropic side, videos from its job API. Demo mode puts
 * these into the configuration before the services are created, so routing, status probes and the
 * credential redactor all know them from the start.
 */
export function demoUpstreams(simulator: DemoSimulator, catalog: Catalog): Upstream[] {
  const servedBy = (kind: Upstream['kind'], endpoints: string[]): Upstream => ({
    id: `demo-simulator-${kind}`,
    kind,
    baseUrl: `${simulator.url}/v1`,
    credentials: [{ id: 'env:BAIKAL_DEMO_UPSTREAM_KEY', label: 'demo', secret: simulator.key, maxConcurrent: null }],
    timeouts: { connectMs: 5_000, firstByteMs: 60_000, idleMs: 120_000, keepAliveMs: 4_000 },
    nativeResponses: false,
    maxConcurrent: 64,
    routes: catalog.data.groups.flatMap((g) =>
      catalog.data.models.filter((m) => m.groups[g.id] && m.endpoints.some((e) => endpoints.includes(e))).map((m) => ({ model: m.id, group: g.id, upstreamModel: m.id, weight: 1, priority: 0 })),
    ),
    fallback: [],
    prices: {},
    health: DEFAULT_HEALTH,
  });
  return [
    servedBy('openai-compatible', ['/v1/chat/completions', '/v1/responses', '/v1/images/generations']),
    servedBy('anthropic', ['/v1/messages', '/v1/bridge/chat/completions', '/v1/bridge/responses']),
    servedBy('video-jobs', ['/v1/videos']),
  ];
}

/**
 * Outside production, a gateway with no upstream configured runs the built-in upstream simulator
 * (src/simulator) as its upstream for every text, image and video model (OpenAI-compatible, Anthropic and video-job kinds), and seeds a demo account with a balance and
 * one key per family that has models (keys are scoped to one family: Messages and the bridge need a
 * family-b key, videos a family-d one), so a newcomer can point any SDK or coding agent at it at once.
 * The keys and password are kept in DATA_DIR so restarts reuse them.
 */
export async function startDemoMode(config: Config, services: Services, orm: MikroORM, log: Logger, simulator: DemoSimulator): Promise<DemoMode> {
  const catalog = services.catalog.snapshot;
  // Processes of one cluster seed one after the other: the first creates, the others find and reuse.
  const { credentials, password } = await underSeedLock(orm, () => seedDemoAccount(config, services));
  const keys = credentials.keys!;
  const firstFamily = catalog.data.families[0]!.id;
  // One banner per gateway: a cluster's first worker (or a lone process) shows it.
  if (cluster.isWorker && cluster.worker?.id !== 1) {
    log.info({ simulator: 'shared' }, 'demo mode: serving from the cluster primary’s simulator, with the demo account shown by the first worker');
    return { key: credentials.key, keys, username: DEMO_USERNAME, password, close: () => simulator.close() };
  }

  const base = config.port ? `http://${config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host}:${config.port}` : '<this gateway>';
  const models = (family: string, endpoint: string) => catalog.data.models.filter((m) => m.family === family && (m.endpoints as string[]).includes(endpoint)).map((m) => m.id);
  const chatModel = models(firstFamily, '/v1/responses')[0] ?? 'gen-5.6-luna';
  const messagesFamily = catalog.data.models.find((m) => m.endpoints.includes('/v1/messages'))?.family;
  const messagesModel = messagesFamily ? models(messagesFamily, '/v1/messages')[0] : undefined;
  const messagesKey = messagesFamily ? keys[messagesFamily] : undefined;
  log.warn(
    { demoKey: credentials.key, demoKeys: keys, username: DEMO_USERNAME, password },
    'DEMO MODE: no upstream is configured, so a built-in simulator answers every text, image and video model. A demo account and one key per model family are ready: ' +
      Object.entries(keys).map(([family, key]) => `${family}=${key}`).join(' ') +
      ` (sign in to the cabinet as ${DEMO_USERNAME} / ${password}). Configure upstreams in BAIKAL_CONFIG for real models.`,
  );
  // How each client of docs/clients.md is pointed at this gateway, ready to paste.
  const clients: Record<string, string> = {
    'OpenAI SDKs, Vercel AI SDK, LangChain, OpenAI Agents SDK': `OPENAI_BASE_URL=${base}/v1 OPENAI_API_KEY=${keys[firstFamily]} (model ${chatModel})`,
  };
  if (messagesKey && messagesModel) {
    clients['Anthropic SDKs'] = `ANTHROPIC_BASE_URL=${base} ANTHROPIC_API_KEY=${messagesKey} with header anthropic-version: 2023-06-01 (model ${messagesModel})`;
    clients['Claude Code'] = `ANTHROPIC_BASE_URL=${base} ANTHROPIC_API_KEY=${messagesKey} claude --model ${messagesModel}`;
  }
  clients['Codex (~/.codex/config.toml)'] =
    `model = "${chatModel}"\nmodel_provider = "baikal"\n[model_providers.baikal]\nname = "Baikal"\nbase_url = "${base}/v1"\nenv_key = "BAIKAL_API_KEY"\nwire_api = "responses"\n` +
    `then BAIKAL_API_KEY=${keys[firstFamily]} codex exec "..."`;
  const bridgeModel = messagesFamily ? models(messagesFamily, '/v1/bridge/responses')[0] : undefined;
  if (bridgeModel && messagesKey) clients['Codex through the bridge'] = `the same provider block with base_url = "${base}/v1/bridge", model = "${bridgeModel}" and BAIKAL_API_KEY=${messagesKey}`;
  for (const [client, setup] of Object.entries(clients)) log.warn({ client, setup }, `DEMO MODE client setup, ${client}: ${setup}`);
  return { key: credentials.key, keys, username: DEMO_USERNAME, password, close: () => simulator.close() };
}

/** Runs `seed` holding the demo advisory lock on a connection of its own. */
async function underSeedLock<T>(orm: MikroORM, seed: () => Promise<T>): Promise<T> {
  const pool = await (orm.em.getConnection() as PostgreSqlConnection).getNativeClient();
  const client = await pool.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [DEMO_SEED_LOCK]);
    try {
      return await seed();
    } finally {
      await client.query('select pg_advisory_unlock($1)', [DEMO_SEED_LOCK]);
    }
  } finally {
    client.release();
  }
}

/**
 * The demo account, its balance and one key per family that has models, as DATA_DIR/demo-credentials.json
 * has them (created, or completed, when missing or stale).
 */
async function seedDemoAccount(config: Config, services: Services): Promise<{ credentials: DemoCredentials; password: string }> {
  const catalog = services.catalog.snapshot;
  const file = path.join(config.dataDir, 'demo-credentials.json');
  const saved = await readFile(file, 'utf8').then((text) => JSON.parse(text) as DemoCredentials, () => null);
  const principal = saved ? await services.keys.authenticate(saved.key) : null;
  let password: string;
  let userId: string;
  if (saved && principal) {
    password = saved.password;
    userId = principal.userId;
  } else {
    password = saved?.password ?? randomSecret(12);
    const signedIn = await services.accounts
      .register({ clientAddress: null, userAgent: 'demo' }, { username: DEMO_USERNAME, email: 'demo@baikal.invalid', password })
      .catch(() => services.accounts.login({ clientAddress: null, userAgent: 'demo' }, { login: DEMO_USERNAME, password }))
      .catch(() => {
        throw new StartupError(`the demo account exists but ${file} is missing or stale (DATA_DIR is not the one it was made with?); restore the file, or remove the "${DEMO_USERNAME}" account`);
      });
    userId = signedIn.account.userId;
    await services.billing.post({ userId, amountUsd: DEMO_BALANCE_USD, kind: 'topup', bucket: 'paid', idempotencyKey: `demo-topup:${userId}`, note: 'demo balance' });
  }

  // One key per family that has models in a public group; a saved key that still works is kept (the
  // file's `key` was created for the first family before keys were per family).
  const actor = { userId, isAdmin: false, sessionId: 'demo' };
  const keys: Record<string, string> = {};
  const firstFamily = catalog.data.families[0]!.id;
  let changed = !saved || !principal;
  for (const family of catalog.data.families) {
    const group = catalog.publicGroupsOf(family.id)[0];
    if (!group) continue; // a family with no public model has nothing to call
    const previous = saved && principal ? (saved.keys?.[family.id] ?? (family.id === firstFamily ? saved.key : undefined)) : undefined;
    const still = previous ? await services.keys.authenticate(previous) : null;
    if (previous && still?.providerFamily === family.id) {
      keys[family.id] = previous;
      continue;
    }
    keys[family.id] = (await services.keys.create(actor, { label: `demo ${family.id}`, providerFamily: family.id, routeGroup: group })).key;
    changed = true;
  }
  const credentials: DemoCredentials = { key: keys[firstFamily] ?? Object.values(keys)[0]!, keys, password };
  if (changed || !saved?.keys) {
    await mkdir(config.dataDir, { recursive: true });
    await writeFile(file, JSON.stringify(credentials), { mode: 0o600 });
  }
  return { credentials, password };
}
