import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from './config.js';
import type { Upstream } from './inference/upstreams.config.js';
import type { Services } from './services.js';
import { randomSecret } from './shared/ids.js';
import type { Logger } from './shared/logging.js';

const DEMO_USERNAME = 'demo';
const DEMO_BALANCE_USD = '10';

export interface DemoMode {
  key: string;
  username: string;
  password: string;
  close(): Promise<void>;
}

interface DemoCredentials {
  key: string;
  password: string;
}

/**
 * Outside production, a gateway with no upstream configured runs the test tree's upstream simulator
 * as its upstream for every text, image and video model (OpenAI-compatible, Anthropic and video-job kinds), and seeds a demo account with a balance and a key, so a
 * newcomer can point the `openai` SDK at it at once. The key and password are kept in DATA_DIR so
 * restarts reuse them.
 */
export async function startDemoMode(config: Config, services: Services, log: Logger): Promise<DemoMode> {
  const { startSimulator } = await import('../test/simulator/openai-simulator.js');
  const simulatorKey = randomSecret(24);
  const simulator = await startSimulator({ apiKey: simulatorKey });
  const catalog = services.catalog.snapshot;
  // Chat and image models from its OpenAI-compatible side, Messages and bridge models from its Anthropic side, videos from its job API.
  const servedBy = (kind: Upstream['kind'], endpoints: string[]): Upstream => ({
    id: `demo-simulator-${kind}`,
    kind,
    baseUrl: `${simulator.url}/v1`,
    credentialEnv: 'BAIKAL_DEMO_UPSTREAM_KEY',
    credential: simulatorKey,
    timeouts: { connectMs: 5_000, firstByteMs: 60_000, idleMs: 120_000 },
    routes: catalog.data.groups
      .map((g) => ({ group: g.id, models: catalog.data.models.filter((m) => m.groups[g.id] && m.endpoints.some((e) => endpoints.includes(e))).map((m) => m.id), modelMap: {}, weight: 1 }))
      .filter((r) => r.models.length),
    fallback: [],
  });
  services.inference.routes.replace([
    servedBy('openai-compatible', ['/v1/chat/completions', '/v1/responses', '/v1/images/generations']),
    servedBy('anthropic', ['/v1/messages', '/v1/bridge/chat/completions', '/v1/bridge/responses']),
    servedBy('video-jobs', ['/v1/videos']),
  ]);

  const file = path.join(config.dataDir, 'demo-credentials.json');
  const saved = await readFile(file, 'utf8').then((text) => JSON.parse(text) as DemoCredentials, () => null);
  let credentials: DemoCredentials;
  const principal = saved ? await services.keys.authenticate(saved.key) : null;
  if (saved && principal) {
    credentials = saved;
  } else {
    const password = saved?.password ?? randomSecret(12);
    const signedIn = await services.accounts
      .register({ clientAddress: null, userAgent: 'demo' }, { username: DEMO_USERNAME, email: 'demo@baikal.invalid', password })
      .catch(() => services.accounts.login({ clientAddress: null, userAgent: 'demo' }, { login: DEMO_USERNAME, password }))
      .catch(() => {
        throw new Error(`The demo account exists but ${file} is missing or stale; restore the file or remove the "${DEMO_USERNAME}" account`);
      });
    const actor = { userId: signedIn.account.userId, isAdmin: false, sessionId: 'demo' };
    await services.billing.post({ userId: actor.userId, amountUsd: DEMO_BALANCE_USD, kind: 'topup', bucket: 'paid', idempotencyKey: `demo-topup:${actor.userId}`, note: 'demo balance' });
    const created = await services.keys.create(actor, { label: 'demo' });
    credentials = { key: created.key, password };
    await mkdir(config.dataDir, { recursive: true });
    await writeFile(file, JSON.stringify(credentials), { mode: 0o600 });
  }
  log.warn(
    { demoKey: credentials.key, username: DEMO_USERNAME, password: credentials.password },
    'DEMO MODE: no upstream is configured, so a built-in simulator answers every text, image and video model. A demo account and key are ready: ' +
      `OPENAI_API_KEY=${credentials.key} OPENAI_BASE_URL=<this gateway>/v1 (sign in to the cabinet as ${DEMO_USERNAME} / ${credentials.password}). ` +
      'Configure upstreams in BAIKAL_CONFIG for real models.',
  );
  return { key: credentials.key, username: DEMO_USERNAME, password: credentials.password, close: () => simulator.close() };
}
