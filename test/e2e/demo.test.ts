import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { usageDebitOf } from '../helpers/ledger.js';
import { runNode, spawnGateway } from '../helpers/process.js';

describe('npm start with no upstream configured', () => {
  let db: TestDatabase;
  let dataDir: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    dataDir = await mkdtemp(`${tmpdir()}/baikal-demo-`);
  });
  afterAll(async () => {
    await db.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const demoKeyOf = (lines: string[]) => lines.map((line) => /"demoKey":"([^"]+)"/.exec(line)?.[1]).find(Boolean);

  it('outside production: serves every text and image model from the built-in simulator with a seeded demo account and key, kept across restarts', async () => {
    const first = await spawnGateway({ DATABASE_URL: db.url, DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    let key: string | undefined;
    try {
      key = demoKeyOf(first.lines);
      expect(key).toMatch(/^baikal-sk-/);
      expect(first.lines.join('\n')).toContain('DEMO MODE');
      const client = new OpenAI({ apiKey: key, baseURL: `${first.url}/v1`, maxRetries: 0 });
      const completion = await client.chat.completions.create({ model: 'gen-5.6-sol', messages: [{ role: 'user', content: 'Hello from the README' }] });
      expect(completion.choices[0]!.message.content).toBe('baikal is the deepest lake on earth and');
      let streamed = '';
      for await (const chunk of await client.chat.completions.create({ model: 'zeta-5.2', messages: [{ role: 'user', content: 'and streamed?' }], stream: true })) {
        streamed += chunk.choices[0]?.delta.content ?? '';
      }
      expect(streamed).toBe('baikal is the deepest lake on earth and');
      expect((await client.responses.create({ model: 'gen-5.6-luna', input: 'and the Responses API?' })).output_text).toBe('baikal is the deepest lake on earth and');
      const image = await client.images.generate({ model: 'img-1.5', prompt: 'the lake' });
      expect(Buffer.from(image.data![0]!.b64_json!, 'base64').subarray(1, 4).toString()).toBe('PNG');
      const me = await fetch(`${first.url}/v1/me`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.json() as Promise<any>);
      expect(me).toMatchObject({ account: { username: 'demo' }, can_spend: true });
      expect(Number(me.balance_usd)).toBeLessThan(10);
      // SIGTERM while a stream is under way: the stream finishes, its usage and ledger row are written, then exit 0.
      const draining = await client.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'slowly [sim:words=10 chunk-delay=80]' }], stream: true }, { headers: { 'x-request-id': 'demo-drain-request' } });
      first.child.kill('SIGTERM');
      let drained = '';
      for await (const chunk of draining) drained += chunk.choices[0]?.delta.content ?? '';
      expect(drained.split(' ')).toHaveLength(10);
      expect(await first.exited, first.lines.slice(-8).join('\n')).toBe(0);
      const [event] = await db.query<{ id: string; status: string; completion_tokens: number }>(`select id, status, completion_tokens from usage_events where request_id = 'demo-drain-request'`);
      expect(event).toMatchObject({ status: 'success', completion_tokens: 10 });
      expect(await usageDebitOf(db, event!.id)).toMatchObject({ kind: 'usage' });
    } finally {
      first.child.kill('SIGKILL');
    }

    const second = await spawnGateway({ DATABASE_URL: db.url, DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    try {
      expect(demoKeyOf(second.lines)).toBe(key);
      const [{ n }] = (await db.query<{ n: number }>(`select count(*)::int as n from transactions where kind = 'topup'`)) as [{ n: number }];
      expect(n).toBe(1); // the demo balance is credited once
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  }, 120_000);

  it('with WORKERS=2: one simulator (in the primary) serves both workers, and one demo account with one key per family is seeded', async () => {
    const demoDb = await createTestDatabase();
    const demoDir = await mkdtemp(`${tmpdir()}/baikal-demo-cluster-`);
    const prefix = `baikal-demo:${randomBytes(6).toString('hex')}:`;
    const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
    const gateway = await spawnGateway({ DATABASE_URL: demoDb.url, DATA_DIR: demoDir, LOG_LEVEL: 'info', WORKERS: '2', REDIS_URL: redisUrl, REDIS_PREFIX: prefix });
    try {
      // Both workers ready (each says so once it listens).
      for (let tries = 0; gateway.lines.filter((line) => line.includes('gateway ready')).length < 2; tries++) {
        if (tries > 200) throw new Error(`the second worker never became ready:\n${gateway.lines.join('\n')}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const users = await demoDb.query<{ id: string }>(`select id from users where username = 'demo'`);
      expect(users).toHaveLength(1);
      const keys = await demoDb.query<{ provider_family: string }>(`select provider_family from api_keys where user_id = $1 and revoked_at is null`, [users[0]!.id]);
      const families = keys.map((k) => k.provider_family);
      expect(families.length).toBeGreaterThan(1);
      expect(new Set(families).size).toBe(families.length);
      const topups = await demoDb.query(`select 1 from transactions where kind = 'topup'`);
      expect(topups).toHaveLength(1);
      // Every banner names the same key, the one that works.
      const shown = new Set(gateway.lines.map((line) => /"demoKey":"([^"]+)"/.exec(line)?.[1]).filter(Boolean));
      expect(shown.size).toBe(1);
      const key = [...shown][0]!;

      // Requests spread over both workers all reach a simulator that accepts them.
      const client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
      const answers: (string | null)[] = [];
      // Waves within the key's 8 concurrent.
      for (let wave = 0; wave < 3; wave++) {
        answers.push(...(await Promise.all(Array.from({ length: 8 }, () => client.chat.completions.create({ model: 'gen-5.6-luna', messages: [{ role: 'user', content: 'hello' }] }).then((c) => c.choices[0]!.message.content, (error: unknown) => String(error))))));
      }
      expect(answers.filter((answer) => answer !== 'baikal is the deepest lake on earth and')).toEqual([]);

      // A video job is submitted, polled and downloaded by whichever worker: the job lives in the one simulator.
      const videoKey = JSON.parse(await readFile(`${demoDir}/demo-credentials.json`, 'utf8')).keys.family_d as string;
      const created = await fetch(`${gateway.url}/v1/videos`, { method: 'POST', headers: { authorization: `Bearer ${videoKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'beta3.0-t2v', prompt: 'a lake [sim:start-ms=50 video-ms=100]', seconds: 2 }) });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      let status = 'queued';
      for (let tries = 0; status !== 'completed' && status !== 'failed' && tries < 300; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        status = ((await (await fetch(`${gateway.url}/v1/videos/${id}`, { headers: { authorization: `Bearer ${videoKey}` } })).json()) as { status: string }).status;
      }
      expect(status).toBe('completed');
    } finally {
      gateway.child.kill('SIGTERM');
      await gateway.exited;
      await demoDb.drop();
      await rm(demoDir, { recursive: true, force: true });
      const redis = new Redis(redisUrl);
      const left = await redis.keys(`${prefix}*`);
      if (left.length) await redis.del(...left);
      await redis.quit();
    }
  }, 120_000);

  it('in production: refuses to boot, saying what to configure (exit 2)', async () => {
    const result = await runNode(['dist/src/main.js'], { NODE_ENV: 'production', DATABASE_URL: db.url, DATA_DIR: dataDir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('No upstreams configured');
    expect(result.stderr).toContain('BAIKAL_CONFIG');
  });
});
