import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Decimal } from 'decimal.js';
import { createClient } from 'graphql-ws';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import defaultCatalog from '../../src/catalog/default-catalog.json' with { type: 'json' };
import { startSimulator, type Simulator } from '../../src/simulator/openai-simulator.js';
import { ledgerBalance, newFundedAccount } from '../helpers/accounts.js';
import { http } from '../helpers/clients.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { loadConfig } from '../../src/config.js';
import { startGateway } from '../../src/server.js';
import { createLogger } from '../../src/shared/logging.js';

const VIDEO_MODELS = defaultCatalog.models.filter((m) => m.kind === 'video').map((m) => m.id);
const CANARY = `CANARY-video-upstream-${randomBytes(4).toString('hex')}`;

let sim: Simulator;
let gw: TestGateway;
let dir: string;

function videoEnv(dataDir: string, workers: number): Record<string, string> {
  return {
    BAIKAL_CONFIG: path.join(dataDir, 'baikal.json'),
    VIDEO_UPSTREAM_KEY: 'video-upstream-secret',
    VIDEO_WORKERS: String(workers),
    VIDEO_POLL_MS: '40',
    VIDEO_LEASE_MS: '1500',
    DATA_DIR: dataDir,
  };
}

beforeAll(async () => {
  sim = await startSimulator({ apiKey: 'video-upstream-secret', errorDetail: CANARY });
  dir = await mkdtemp(path.join(tmpdir(), 'baikal-video-'));
  await writeFile(
    path.join(dir, 'baikal.json'),
    JSON.stringify({ upstreams: [{ id: 'video-sim', kind: 'video-jobs', baseUrl: `${sim.url}/v1`, credentialEnv: 'VIDEO_UPSTREAM_KEY', routes: [{ group: 'cheap', models: VIDEO_MODELS }], prices: { 'beta3.0-t2v': { perVideoSecond: '0.0123' } } }] }),
  );
  gw = await startTestGateway(videoEnv(dir, 3));
});

afterAll(async () => {
  await gw?.close();
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

async function keyOf(account: { token: string }, family = 'family_d'): Promise<string> {
  const created = await http(gw.url, 'POST', '/keys', { token: account.token, body: { provider_family: family } });
  return created.body.key as string;
}

async function waitFor(key: string, id: string, done: (status: string) => boolean, timeoutMs = 10_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const poll = await http(gw.url, 'GET', `/v1/videos/${id}`, { token: key });
    if (done(poll.body.status)) return poll.body;
    if (Date.now() > until) throw new Error(`task ${id} still ${poll.body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
}

async function activeHolds(userId: string): Promise<number> {
  const [{ n }] = (await gw.db.query<{ n: number }>(`select count(*)::int as n from holds where user_id = $1 and status = 'active'`, [userId])) as [{ n: number }];
  return n;
}

describe('POST /v1/videos and its lifecycle', () => {
  it('queues with exactly the SPEC creation payload, completes, settles the exact cost once, and streams the MP4', async () => {
    const account = await newFundedAccount(gw, '5');
    const key = await keyOf(account);
    const created = await http(gw.url, 'POST', '/v1/videos', { token: key, body: { model: 'beta3.0-t2v', prompt: 'A frozen lake at dawn [sim:start-ms=50 video-ms=150]', seconds: 10, size: '1280x720' } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.body).toEqual({ id, status: 'queued', model: 'beta3.0-t2v', seconds: 10, poll_url: `/v1/videos/${id}`, content_url: `/v1/videos/${id}/content` });
    expect(await activeHolds(account.userId)).toBe(1);

    const done = await waitFor(key, id, (s) => s === 'completed');
    expect(done).toMatchObject({ id, status: 'completed', content_url: `/v1/videos/${id}/content`, progress: 100 });
    expect(done.error).toBeUndefined();

    // $0.038 per second x 10 s, charged once, in the ledger and in the balance.
    const ledger = await gw.db.query<{ amount_usd: string; kind: string }>(`select amount_usd, kind from transactions where user_id = $1 and kind = 'video'`, [account.userId]);
    expect(ledger).toHaveLength(1);
    expect(new Decimal(ledger[0]!.amount_usd).equals('-0.38')).toBe(true);
    const balance = await ledgerBalance(gw, account.userId);
    expect(balance.balance).toBe('4.6200000000');
    expect(balance.ledger).toBe(balance.balance);
    expect(await activeHolds(account.userId)).toBe(0);

    // The official client reads the task and downloads the content.
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const video = await client.videos.retrieve(id);
    expect(video.status).toBe('completed');
    const mp4 = Buffer.from(await (await client.videos.downloadContent(id)).arrayBuffer());
    const fixture = await readFile(new URL('../../src/simulator/media/testsrc-5s.mp4', import.meta.url));
    expect(mp4.equals(fixture)).toBe(true);
    expect(mp4.subarray(4, 8).toString()).toBe('ftyp');
    expect(sim.videoJobs.jobs.size).toBeGreaterThan(0);

    const until = Date.now() + 3_000;
    let events: Record<string, any>[] = [];
    while (Date.now() < until && !events.length) {
      events = await gw.db.query(`select * from usage_events where request_id = $1`, [String(created.headers.get('x-request-id'))]);
      if (!events.length) await new Promise((resolve) => setTimeout(resolve, 30));
    }
    expect(events[0]).toMatchObject({ status: 'success', endpoint: '/v1/videos', model: 'beta3.0-t2v' });
    expect(new Decimal(events[0]!.amount_usd).equals('0.38')).toBe(true);
    // What the upstream charges for it, by its own per-second price: 10 s x 0.0123 (operator-only columns).
    expect(new Decimal(events[0]!.upstream_cost_usd).equals('0.123')).toBe(true);
    expect(events[0]!.upstream_credential_id).toBe('env:VIDEO_UPSTREAM_KEY');
  });

  it('serves the MP4 with HTTP Range: first bytes, suffix, open-ended, several ranges, 416, HEAD', async () => {
    const account = await newFundedAccount(gw, '5');
    const key = await keyOf(account);
    const created = await http(gw.url, 'POST', '/v1/videos', { token: key, body: { model: 'beta3.0-t2v', prompt: 'waves [sim:start-ms=10 video-ms=30]', seconds: 2 } });
    const id = created.body.id as string;
    await waitFor(key, id, (s) => s === 'completed');
    const whole = await readFile(new URL('../../src/simulator/media/blue-2s.mp4', import.meta.url));
    const get = (range?: string, method = 'GET') => fetch(`${gw.url}/v1/videos/${id}/content`, { method, headers: { authorization: `Bearer ${key}`, ...(range ? { range } : {}) } });

    const full = await get();
    expect(full.status).toBe(200);
    expect(full.headers.get('accept-ranges')).toBe('bytes');
    expect(full.headers.get('content-type')).toContain('video/mp4');
    expect(Buffer.from(await full.arrayBuffer()).equals(whole)).toBe(true);

    const first = await get('bytes=0-99');
    expect(first.status).toBe(206);
    expect(first.headers.get('content-range')).toBe(`bytes 0-99/${whole.length}`);
    expect(Buffer.from(await first.arrayBuffer()).equals(whole.subarray(0, 100))).toBe(true);

    const suffix = await get('bytes=-100');
    expect(suffix.status).toBe(206);
    expect(Buffer.from(await suffix.arrayBuffer()).equals(whole.subarray(whole.length - 100))).toBe(true);

    const open = await get('bytes=1000-');
    expect(open.headers.get('content-range')).toBe(`bytes 1000-${whole.length - 1}/${whole.length}`);
    expect(Buffer.from(await open.arrayBuffer()).equals(whole.subarray(1000))).toBe(true);

    const several = await get('bytes=0-9,100-109');
    expect(several.status).toBe(206);
    expect(several.headers.get('content-type')).toMatch(/^multipart\/byteranges; boundary=/);
    const body = Buffer.from(await several.arrayBuffer()).toString('latin1');
    expect(body).toContain(`Content-Range: bytes 0-9/${whole.length}`);
    expect(body).toContain(`Content-Range: bytes 100-109/${whole.length}`);
    expect(body).toContain(whole.subarray(100, 110).toString('latin1'));

    const unsatisfiable = await get(`bytes=${whole.length + 10}-`);
    expect(unsatisfiable.status).toBe(416);
    expect(unsatisfiable.headers.get('content-range')).toBe(`bytes */${whole.length}`);

    const head = await get(undefined, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(whole.length));
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });

  it('a failed generation releases the hold exactly: zero charge, an error in our words, no content', async () => {
    const account = await newFundedAccount(gw, '1');
    const key = await keyOf(account);
    const created = await http(gw.url, 'POST', '/v1/videos', { token: key, body: { model: 'gamma_h3', prompt: 'a storm [sim:start-ms=10 video-ms=30 fail]' } });
    expect(created.body.seconds).toBe(5);
    const failed = await waitFor(key, created.body.id, (s) => s === 'failed');
    expect(failed.error).toEqual({ code: 'generation_failed', message: 'The video generation failed; nothing was charged' });
    expect(JSON.stringify(failed)).not.toContain(CANARY);
    expect(failed.content_url).toBeUndefined();
    const content = await http(gw.url, 'GET', `/v1/videos/${created.body.id}/content`, { token: key });
    expect(content.status).toBe(409);
    expect(await gw.db.query(`select 1 from transactions where user_id = $1 and kind = 'video'`, [account.userId])).toHaveLength(0);
    expect((await ledgerBalance(gw, account.userId)).balance).toBe('1.0000000000');
    expect(await activeHolds(account.userId)).toBe(0);
    const [hold] = await gw.db.query<{ status: string }>(`select status from holds where request_id = $1`, [`video:${created.body.id}`]);
    expect(hold!.status).toBe('released');
  });

  it('a job stuck past its deadline fails and releases its hold', async () => {
    const account = await newFundedAccount(gw, '1');
    const key = await keyOf(account);
    const created = await http(gw.url, 'POST', '/v1/videos', { token: key, body: { model: 'beta3.0-t2v', prompt: 'never ends [sim:start-ms=10 stuck]', seconds: 2 } });
    await waitFor(key, created.body.id, (s) => s === 'in_progress');
    await gw.db.query(`update video_tasks set deadline_at = now() where id = $1`, [created.body.id]);
    const failed = await waitFor(key, created.body.id, (s) => s === 'failed');
    expect(failed.error).toEqual({ code: 'timeout', message: 'The video was not generated in time; nothing was charged' });
    expect(await activeHolds(account.userId)).toBe(0);
    expect((await ledgerBalance(gw, account.userId)).balance).toBe('1.0000000000');
  });

  it('refuses what does not fit (402), invalid parameters (422), foreign tasks (404) and non-video keys (403)', async () => {
    const poor = await newFundedAccount(gw, '0.10');
    const poorKey = await keyOf(poor);
    const tooDear = await http(gw.url, 'POST', '/v1/videos', { token: poorKey, body: { model: 'alpha-3.0', prompt: 'x', seconds: 15 } });
    expect(tooDear.status).toBe(402);
    expect(tooDear.body.error.code).toBe('insufficient_balance');
    expect(await gw.db.query('select 1 from video_tasks where user_id = $1', [poor.userId])).toHaveLength(0);

    const invalid = await http(gw.url, 'POST', '/v1/videos', { token: poorKey, body: { model: 'beta3.0-t2v', prompt: 'x', seconds: 31, size: '4k', settings: { audio: 'native' } } });
    expect(invalid.status).toBe(422);
    expect(invalid.body.detail.map((d: any) => d.loc.join('.')).sort()).toEqual(['body.seconds', 'body.settings.audio', 'body.size']);

    const owner = await newFundedAccount(gw, '1');
    const ownerKey = await keyOf(owner);
    const created = await http(gw.url, 'POST', '/v1/videos', { token: ownerKey, body: { model: 'beta3.0-t2v', prompt: 'mine [sim:start-ms=10 video-ms=10]', seconds: 2 } });
    expect((await http(gw.url, 'GET', `/v1/videos/${created.body.id}`, { token: poorKey })).status).toBe(404);
    expect((await http(gw.url, 'GET', `/v1/videos/${created.body.id}/content`, { token: poorKey })).status).toBe(404);
    expect((await http(gw.url, 'GET', '/v1/videos/video_00000000000000000000000000000000', { token: ownerKey })).status).toBe(404);

    const textKey = await keyOf(owner, 'family_a');
    const denied = await http(gw.url, 'POST', '/v1/videos', { token: textKey, body: { model: 'beta3.0-t2v', prompt: 'x' } });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('key_scope_denied');
    await waitFor(ownerKey, created.body.id, (s) => s === 'completed');
  });

  it('a graphql-ws subscriber sees queued -> in_progress -> completed of its own tasks', async () => {
    const account = await newFundedAccount(gw, '2');
    const key = await keyOf(account);
    const client = createClient({ url: gw.url.replace('http', 'ws') + '/graphql', webSocketImpl: WebSocket, connectionParams: { sessionToken: account.token }, retryAttempts: 0, lazy: true });
    try {
      const iterator = client.iterate<{ videoTaskUpdated: { id: string; status: string; contentUrl: string | null } }>({
        query: 'subscription { videoTaskUpdated { id status contentUrl } }',
      });
      const first = iterator.next();
      await new Promise((resolve) => setTimeout(resolve, 200));
      const created = await http(gw.url, 'POST', '/v1/videos', { token: key, body: { model: 'beta3.0-t2v', prompt: 'live [sim:start-ms=80 video-ms=150]', seconds: 2 } });
      const seen: string[] = [];
      let step = await first;
      while (!step.done) {
        const task = step.value.data!.videoTaskUpdated;
        expect(task.id).toBe(created.body.id);
        seen.push(task.status);
        if (task.status === 'completed') {
          expect(task.contentUrl).toBe(`/v1/videos/${created.body.id}/content`);
          break;
        }
        step = await iterator.next();
      }
      await iterator.return?.();
      expect(seen).toEqual(['queued', 'in_progress', 'completed']);

      const listed = await http(gw.url, 'POST', '/graphql', { token: account.token, body: { query: '{ videoTasks { id status } }' } });
      expect(listed.body.data.videoTasks).toEqual([{ id: created.body.id, status: 'completed' }]);
    } finally {
      await client.dispose();
    }
  });
});

describe('the durable runner', () => {
  it('200 submissions raced by 3 workers: each job settles or releases exactly once, ledger = balance', async () => {
    const account = await newFundedAccount(gw, '100');
    const key = await keyOf(account);
    const submissions = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        http(gw.url, 'POST', '/v1/videos', { token: key, body: { model: 'beta3.0-t2v', prompt: `clip ${i} [sim:start-ms=5 video-ms=20${i % 4 === 0 ? ' fail' : ''}]`, seconds: 2 } }),
      ),
    );
    expect(submissions.every((s) => s.status === 201)).toBe(true);
    const until = Date.now() + 60_000;
    for (;;) {
      const [{ active }] = (await gw.db.query<{ active: number }>(`select count(*)::int as active from video_tasks where user_id = $1 and status in ('queued', 'in_progress')`, [account.userId])) as [{ active: number }];
      if (active === 0) break;
      if (Date.now() > until) throw new Error(`${active} tasks still running`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const tasks = await gw.db.query<{ id: string; status: string }>('select id, status from video_tasks where user_id = $1', [account.userId]);
    expect(tasks.filter((t) => t.status === 'failed')).toHaveLength(50);
    expect(tasks.filter((t) => t.status === 'completed')).toHaveLength(150);
    const rows = await gw.db.query<{ idempotency_key: string }>(`select idempotency_key from transactions where user_id = $1 and kind = 'video'`, [account.userId]);
    expect(rows).toHaveLength(150);
    expect(new Set(rows.map((r) => r.idempotency_key)).size).toBe(150);
    const holds = await gw.db.query<{ status: string; n: number }>(`select status, count(*)::int as n from holds where user_id = $1 group by status order by status`, [account.userId]);
    expect(holds).toEqual([{ status: 'released', n: 50 }, { status: 'settled', n: 150 }]);
    const balance = await ledgerBalance(gw, account.userId);
    expect(new Decimal(balance.balance).equals(new Decimal(100).minus(new Decimal('0.076').times(150)))).toBe(true);
    expect(balance.ledger).toBe(balance.balance);
    // Each upstream job was submitted once: no job was processed twice at once.
    const submittedPrompts = sim.requests.filter((r) => r.path === '/v1/videos' && String(r.body?.prompt ?? '').startsWith('clip ')).map((r) => r.body.prompt);
    expect(new Set(submittedPrompts).size).toBe(submittedPrompts.length);
  }, 90_000);

  it('a process without a route for a job never claims it: jobs submitted through it are run at once by the process that has one', async () => {
    // A second process on the same database that cannot serve the video models: the stored upstream's credential
    // variable is not set on its host (a rolling configuration change). Were it to claim a job, it could only
    // postpone it by its 5 s poll.
    await writeFile(path.join(dir, 'no-video.json'), JSON.stringify({ upstreams: [] }));
    const { VIDEO_UPSTREAM_KEY: _unset, ...withoutKey } = videoEnv(dir, 2);
    const env = { ...withoutKey, BAIKAL_CONFIG: path.join(dir, 'no-video.json'), VIDEO_POLL_MS: '5000' };
    const config = loadConfig({ ...env, NODE_ENV: 'test', HOST: '127.0.0.1', PORT: '0', DATABASE_URL: gw.db.url, LOG_LEVEL: 'silent' });
    const other = await startGateway(config, createLogger('silent'));
    try {
      const account = await newFundedAccount(gw, '5');
      const key = await keyOf(account);
      const started = Date.now();
      // Each submission wakes the other process's runner, which looks for work at once.
      const created = await Promise.all(
        Array.from({ length: 6 }, (_, i) => http(other.url, 'POST', '/v1/videos', { token: key, body: { model: 'beta3.0-t2v', prompt: `elsewhere ${i} [sim:start-ms=5 video-ms=20]`, seconds: 2 } })),
      );
      expect(created.map((c) => c.status)).toEqual(Array(6).fill(201));
      for (const c of created) await waitFor(key, c.body.id, (s) => s === 'completed', 4_000);
      expect(Date.now() - started).toBeLessThan(4_000);
      const owners = await gw.db.query<{ n: number }>(`select count(*)::int as n from video_tasks where user_id = $1 and status = 'completed'`, [account.userId]);
      expect(owners).toEqual([{ n: 6 }]);
    } finally {
      await other.stop();
    }
  }, 30_000);

  it('a restart mid-processing resumes the job without settling twice; a crashed worker’s lease expires and is taken over', async () => {
    const account = await newFundedAccount(gw, '5');
    const key = await keyOf(account);
    const created = await http(gw.url, 'POST', '/v1/videos', { token: key, body: { model: 'beta3.0-t2v', prompt: 'long take [sim:start-ms=20 video-ms=1500]', seconds: 2 } });
    const id = created.body.id as string;
    await waitFor(key, id, (s) => s === 'in_progress');

    // A graceful restart: the runner stops, a new gateway takes over the same database and data directory.
    await gw.stop();
    const config = loadConfig({ ...videoEnv(dir, 3), NODE_ENV: 'test', HOST: '127.0.0.1', PORT: '0', DATABASE_URL: gw.db.url, LOG_LEVEL: 'silent' });
    const running = await startGateway(config, createLogger('silent'));
    const db = gw.db;
    gw = { ...running, db, config, close: async () => (await running.stop(), await db.drop()) };

    // And a crashed worker: its lease on the job is still live when the new runner looks.
    await gw.db.query(`update video_tasks set lease_owner = 'crashed-worker', lease_until = now() + interval '500 milliseconds' where id = $1`, [id]);
    const done = await waitFor(key, id, (s) => s === 'completed', 15_000);
    expect(done.status).toBe('completed');
    expect(await gw.db.query(`select 1 from transactions where idempotency_key = $1`, [`video:video:${id}`])).toHaveLength(1);
    const balance = await ledgerBalance(gw, account.userId);
    expect(new Decimal(balance.balance).equals('4.924')).toBe(true);
    expect(balance.ledger).toBe(balance.balance);
    expect(sim.requests.filter((r) => r.path === '/v1/videos' && String(r.body?.prompt).startsWith('long take'))).toHaveLength(1);
  }, 30_000);
});
