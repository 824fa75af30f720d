import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import defaultCatalog from '../../src/catalog/default-catalog.json' with { type: 'json' };
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { newFundedAccount } from '../helpers/accounts.js';
import { http } from '../helpers/clients.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { createEndpoint, startReceiver } from '../helpers/webhooks.js';
import { waitFor } from '../helpers/reliability.js';

/** video.completed and video.failed come from the runner's final transition, once each, in the customer's view. */
const VIDEO_MODELS = defaultCatalog.models.filter((m) => m.kind === 'video').map((m) => m.id);
const CANARY = 'CANARY-webhook-video-upstream';
let sim: Simulator;
let gw: TestGateway;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator({ apiKey: 'video-upstream-secret', errorDetail: CANARY });
  dir = await mkdtemp(path.join(tmpdir(), 'baikal-webhooks-video-'));
  await writeFile(
    path.join(dir, 'baikal.json'),
    JSON.stringify({ upstreams: [{ id: 'video-sim-upstream', kind: 'video-jobs', baseUrl: `${sim.url}/v1`, credentialEnv: 'VIDEO_UPSTREAM_KEY', routes: [{ group: 'cheap', models: VIDEO_MODELS }] }] }),
  );
  gw = await startTestGateway({ BAIKAL_CONFIG: path.join(dir, 'baikal.json'), VIDEO_UPSTREAM_KEY: 'video-upstream-secret', VIDEO_POLL_MS: '40', DATA_DIR: dir, WEBHOOKS_ALLOW_INSECURE_URLS: 'true', WEBHOOKS_POLL_MS: '50' });
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('video webhooks', () => {
  it('delivers video.completed and video.failed once each, without upstream names', async () => {
    const receiver = await startReceiver();
    const account = await newFundedAccount(gw, '5');
    const endpoint = await createEndpoint(gw.url, account.token, { url: receiver.url, eventTypes: ['video.completed', 'video.failed'] });
    receiver.secrets.push(endpoint.secret);
    const key = (await http(gw.url, 'POST', '/keys', { token: account.token, body: { provider_family: 'family_d' } })).body.key as string;
    const ok = await http(gw.url, 'POST', '/v1/videos', { token: key, body: { model: 'beta3.0-t2v', prompt: 'a lake [sim:start-ms=10 video-ms=30]', seconds: 2 } });
    const bad = await http(gw.url, 'POST', '/v1/videos', { token: key, body: { model: 'beta3.0-t2v', prompt: 'a storm [sim:start-ms=10 video-ms=30 fail]', seconds: 2 } });
    expect([ok.status, bad.status]).toEqual([201, 201]);

    await waitFor('both video events', () => receiver.received.length >= 2, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500)); // nothing more comes
    expect(receiver.received).toHaveLength(2);
    const byType = Object.fromEntries(receiver.received.map((r) => [r.body.type, r.body.data.video]));
    expect(byType['video.completed']).toMatchObject({ id: ok.body.id, status: 'completed', progress: 100 });
    expect(byType['video.failed']).toMatchObject({ id: bad.body.id, status: 'failed', error: { code: 'generation_failed' } });
    expect(receiver.received.every((r) => r.verifiedBy.length === 1)).toBe(true);
    const raw = receiver.received.map((r) => r.raw).join('\n');
    expect(raw).not.toContain(CANARY);
    expect(raw).not.toContain('video-sim-upstream');
    expect(raw).not.toContain(sim.url);
  });
});
